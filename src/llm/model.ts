import type { ModelRequest, ModelResponse } from "./types.js";

/**
 * Why a model call failed, as far as retrying goes: the first five pass (another try, another key or another model
 * may answer); `auth` is a refused key; the rest are final.
 */
export type ModelFailure =
  /** 529 overloaded_error, before or during a stream. */
  | "overloaded"
  /** 429 rate_limit_error. */
  | "rate_limited"
  /** 500 api_error and other 5xx. */
  | "server"
  /** No answer in time (MODEL_CALL_TIMEOUT, or the request's 408). */
  | "timeout"
  /** The API could not be reached, or the connection dropped mid-answer. */
  | "connection"
  /** 401 authentication_error: the key was refused. */
  | "auth"
  /** Every model of the call is resting after repeated failures (its circuit breaker is open). */
  | "unavailable"
  /** Stopped by the caller (a /cancel, a shutdown). */
  | "cancelled"
  /** Anything else: a request the API refuses as it is (400, 403, 404), or a client-side fault. */
  | "refused";

/** Failures another attempt may get past (after a wait, on another key or on another model). */
export const PASSING: ReadonlySet<ModelFailure> = new Set(["overloaded", "rate_limited", "server", "timeout", "connection"]);

function failureOf(status: number | null, aborted: boolean): ModelFailure {
  if (aborted) return "cancelled";
  if (status === 529) return "overloaded";
  if (status === 429) return "rate_limited";
  if (status === 408) return "timeout";
  if (status === 401) return "auth";
  if (status !== null && status >= 500) return "server";
  return "refused";
}

/** A failure the model layer could not recover from. */
export class ModelError extends Error {
  readonly failure: ModelFailure;
  /** How long the API asked to wait before the next try (retry-after), when it said. */
  readonly retryAfterMs: number | null;

  constructor(
    message: string,
    readonly status: number | null = null,
    readonly aborted = false,
    detail: { failure?: ModelFailure; retryAfterMs?: number | null } = {},
  ) {
    super(message);
    this.name = "ModelError";
    this.failure = detail.failure ?? failureOf(status, aborted);
    this.retryAfterMs = detail.retryAfterMs ?? null;
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
