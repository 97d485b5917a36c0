// A circuit breaker per model, in this process: after `failures` failed calls in a row (overloaded, server errors,
// timeouts, dropped connections, rate limits past the retries) a model rests for `cooldownMs`, and calls go to the
// next model of their chain without trying it. After the rest the next call tries it again ("half open"): a success
// closes the breaker, a failure opens it for another rest. Apart from that, a model that answered with a retry-after
// is not called again before that time has passed, when another model can be.

export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerOptions {
  failures: number;
  cooldownMs: number;
  now: () => number;
  /** Told each time a model's breaker changes state (for the metrics). */
  onChange?: (model: string, state: BreakerState) => void;
}

interface Entry {
  state: BreakerState;
  failures: number;
  /** While open: until when. */
  openUntil: number;
  /** The API asked not to be called before then (retry-after). */
  notBefore: number;
}

export class Breakers {
  private readonly models = new Map<string, Entry>();

  constructor(private readonly options: BreakerOptions) {}

  /** The model's state now (an open breaker whose rest is over is half open). */
  state(model: string): BreakerState {
    const entry = this.models.get(model);
    if (!entry) return "closed";
    if (entry.state === "open" && entry.openUntil <= this.options.now()) this.set(model, entry, "half_open");
    return entry.state;
  }

  /** Whether the model is resting (open), so a call should not try it. */
  resting(model: string): boolean {
    return this.state(model) === "open";
  }

  /** How long until the model may be called (0: now; Infinity: resting, see `reopensAt`). */
  waitFor(model: string): number {
    if (this.resting(model)) return Infinity;
    return Math.max(0, (this.models.get(model)?.notBefore ?? 0) - this.options.now());
  }

  /** When a resting model may be tried again. */
  reopensAt(model: string): number {
    return this.models.get(model)?.openUntil ?? 0;
  }

  success(model: string): void {
    const entry = this.models.get(model);
    if (!entry) return;
    entry.failures = 0;
    entry.notBefore = 0;
    if (entry.state !== "closed") this.set(model, entry, "closed");
  }

  failure(model: string, retryAfterMs: number | null): void {
    const now = this.options.now();
    const entry = this.models.get(model) ?? { state: "closed" as BreakerState, failures: 0, openUntil: 0, notBefore: 0 };
    this.models.set(model, entry);
    if (retryAfterMs !== null) entry.notBefore = Math.max(entry.notBefore, now + retryAfterMs);
    entry.failures += 1;
    if (this.state(model) === "half_open" || entry.failures >= this.options.failures) {
      entry.openUntil = now + this.options.cooldownMs;
      if (entry.state !== "open") this.set(model, entry, "open");
    }
  }

  private set(model: string, entry: Entry, state: BreakerState): void {
    entry.state = state;
    this.options.onChange?.(model, state);
  }
}
