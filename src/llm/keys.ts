// Several API keys (ANTHROPIC_API_KEY and ANTHROPIC_API_KEYS) as one Model. A call uses the current key; a 429 rests
// that key for that model (the API pools rate limits per model family) for as long as the API asked (retry-after),
// and the call goes on at once with the next key; a 401 takes
// the key out of use for good, logged once by its place in the list and a fingerprint, never by its value. Only HTTP
// statuses rotate: they come before an answer begins, so nothing has been streamed from the key that failed.
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { ModelError, type Model } from "./model.js";
import type { ModelRequest, ModelResponse } from "./types.js";

/** How long a key rests after a 429 that did not say how long (the SDK's first backoff is about this). */
const DEFAULT_REST_MS = 1000;

export interface KeyRingObserver {
  /** A key answered 429 (it rests) or 401 (it is out of use). */
  key(event: "rate_limited" | "refused"): void;
}

export interface KeyRingOptions {
  keys: readonly string[];
  /** The model that calls with one key (an AnthropicModel with that key). */
  modelFor(key: string): Model;
  now: () => number;
  log: Logger;
  observer?: KeyRingObserver;
}

interface Slot {
  /** 1-based place in the list, for people. */
  place: number;
  fingerprint: string;
  model: Model;
  /** Per model: rate limited until then. */
  restsUntil: Map<string, number>;
  refused: boolean;
}

/** A key named in a log line: its place in the list and the start of its SHA-256, which tells keys apart safely. */
export function fingerprintOf(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 8);
}

export class KeyRing implements Model {
  readonly configured = true;
  readonly setupHint = "";
  readonly defaultModel: string;
  private readonly slots: Slot[];
  private current = 0;

  constructor(private readonly options: KeyRingOptions) {
    if (options.keys.length === 0) throw new Error("KeyRing needs at least one key");
    this.slots = options.keys.map((key, i) => ({ place: i + 1, fingerprint: fingerprintOf(key), model: options.modelFor(key), restsUntil: new Map(), refused: false }));
    this.defaultModel = this.slots[0]!.model.defaultModel;
  }

  /** How many keys are still in use (not refused). */
  get usable(): number {
    return this.slots.filter((s) => !s.refused).length;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const tried = new Set<Slot>();
    let limited: ModelError | null = null;
    for (;;) {
      const slot = this.pick(request.model, tried);
      if (!slot) throw this.exhausted(request.model, limited);
      tried.add(slot);
      try {
        return await slot.model.complete(request);
      } catch (error) {
        if (!(error instanceof ModelError)) throw error;
        if (error.status === 401) this.refuse(slot, error);
        else if (error.status === 429) {
          limited = error;
          this.rest(slot, request.model, error.retryAfterMs);
        } else throw error;
      }
    }
  }

  contextLimit(model: string): Promise<number | null> {
    return (this.slots.find((s) => !s.refused) ?? this.slots[0]!).model.contextLimit(model);
  }

  /** The current key if it may be used now, else the next one that may (in list order, wrapping). */
  private pick(model: string, tried: Set<Slot>): Slot | null {
    const now = this.options.now();
    for (let n = 0; n < this.slots.length; n++) {
      const i = (this.current + n) % this.slots.length;
      const slot = this.slots[i]!;
      if (slot.refused || tried.has(slot) || (slot.restsUntil.get(model) ?? 0) > now) continue;
      this.current = i;
      return slot;
    }
    return null;
  }

  private rest(slot: Slot, model: string, retryAfterMs: number | null): void {
    const now = this.options.now();
    for (const [m, until] of slot.restsUntil) if (until <= now) slot.restsUntil.delete(m);
    slot.restsUntil.set(model, now + (retryAfterMs ?? DEFAULT_REST_MS));
    this.options.observer?.key("rate_limited");
    if (this.slots.length > 1) {
      this.options.log.info(
        { key: slot.place, fingerprint: slot.fingerprint, model, restMs: retryAfterMs ?? DEFAULT_REST_MS },
        "API key rate limited (429); using the next key meanwhile",
      );
    }
  }

  private refuse(slot: Slot, error: ModelError): void {
    if (slot.refused) return;
    slot.refused = true;
    this.options.observer?.key("refused");
    this.options.log.error(
      { key: slot.place, fingerprint: slot.fingerprint, status: error.status, keysLeft: this.usable },
      `API key ${slot.place} (fingerprint ${slot.fingerprint}) was refused (401); it is no longer used. Replace it in ANTHROPIC_API_KEYS (or ANTHROPIC_API_KEY) and restart.`,
    );
  }

  /** No key may be used now: every one was refused (final), or the rest are resting (try again after the soonest). */
  private exhausted(model: string, limited: ModelError | null): ModelError {
    if (this.usable === 0) {
      return new ModelError(
        "every configured API key was refused by the Anthropic API (401 authentication_error); set a valid ANTHROPIC_API_KEY or ANTHROPIC_API_KEYS and restart",
        401,
        false,
        { failure: "auth" },
      );
    }
    const now = this.options.now();
    const soonest = Math.min(...this.slots.filter((s) => !s.refused).map((s) => s.restsUntil.get(model) ?? 0));
    const wait = Math.max(0, soonest - now);
    return new ModelError(limited?.message ?? "Anthropic API error 429: every API key is rate limited for now", 429, false, {
      failure: "rate_limited",
      retryAfterMs: wait,
    });
  }
}
