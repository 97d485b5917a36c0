import type { ModelRequest, ModelResponse } from "./types.js";

/** A failure the model layer could not recover from (after the SDK's own retries). */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    readonly aborted = false,
  ) {
    super(message);
    this.name = "ModelError";
  }

  /** The request did not fit the model's context window. */
  get promptTooLong(): boolean {
    return this.status === 400 && /prompt is too long/i.test(this.message);
  }
}

export interface Model {
  /** False when the model cannot be called at all (no API key); `setupHint` says what to do. */
  readonly configured: boolean;
  readonly setupHint: string;
  readonly defaultModel: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
  /** The model's context window in tokens, if the provider says (Models API); null when unknown. */
  contextLimit(model: string): Promise<number | null>;
}
