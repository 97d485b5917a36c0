// A Model made of the models of a chain: the request's model, then its fallbacks (a definition's `fallback_models`,
// else MODEL_FALLBACKS). A try that fails with an overload, a server error, a timeout or a dropped connection goes on
// at once with the next model; a rate limit is tried again on the same model, after its retry-after, until the
// retries (ANTHROPIC_MAX_RETRIES) are spent, then on the next. The last model of a chain is tried again like a rate
// limit. A model whose breaker is open (breaker.ts) is skipped. One answer comes back, from the model that wrote it,
// so the step that commits it is committed once; a try that had streamed text before it failed tells the caller to
// take that text back (`onReset`) before the next try streams the new answer.
import type { Logger } from "pino";
import type { Breakers } from "./breaker.js";
import { ModelError, PASSING, type Model, type ModelFailure } from "./model.js";
import type { ModelRequest, ModelResponse } from "./types.js";

/** A retry-after longer than this is not waited for: the next model goes, or the call fails saying when to try. */
export const LONGEST_RETRY_WAIT_MS = 60_000;

export interface FallbackObserver {
  /** A call went on from `from` to `to`: why `from` failed, or "resting" when its breaker was open. */
  fallback(from: string, to: string, reason: ModelFailure | "resting"): void;
}

export interface FallbackTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface FallbackOptions {
  /** MODEL_FALLBACKS: tried in order after the request's model when the request brings no list of its own. */
  fallbacks: readonly string[];
  /** ANTHROPIC_MAX_RETRIES: further tries of one model before the chain moves on (or, on the last, gives up). */
  retries: number;
  /** MODEL_CALL_TIMEOUT: a try that brings nothing (no answer, no streamed text) for this long is given up. */
  timeoutMs: number;
  breakers: Breakers;
  now: () => number;
  timers: FallbackTimers;
  /** Jitter of the backoff between tries. Default Math.random. */
  random?: () => number;
  log: Logger;
  observer?: FallbackObserver;
}

export class FallbackModel implements Model {
  constructor(
    private readonly inner: Model,
    private readonly options: FallbackOptions,
  ) {}

  get configured(): boolean {
    return this.inner.configured;
  }
  get setupHint(): string {
    return this.inner.setupHint;
  }
  get defaultModel(): string {
    return this.inner.defaultModel;
  }

  contextLimit(model: string): Promise<number | null> {
    return this.inner.contextLimit(model);
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const { breakers, log, observer } = this.options;
    const chain = [...new Set([request.model, ...(request.fallbackModels ?? this.options.fallbacks)])];
    const failed: Array<{ model: string; error: ModelError }> = [];
    for (let i = 0; i < chain.length; i++) {
      const model = chain[i]!;
      const next = chain[i + 1];
      const wait = breakers.waitFor(model);
      // Resting, or asked to wait: the next model goes first when one of the rest may be called now.
      if (wait > 0 && next !== undefined && (wait > LONGEST_RETRY_WAIT_MS || chain.slice(i + 1).some((m) => breakers.waitFor(m) === 0))) {
        observer?.fallback(model, next, "resting");
        continue;
      }
      if (wait > LONGEST_RETRY_WAIT_MS) break;
      await this.sleep(wait, request.signal);
      for (let tries = 0; ; tries++) {
        try {
          const response = await this.attempt(request, model);
          breakers.success(model);
          if (i > 0) log.info({ model, requested: request.model }, "a fallback model answered");
          return { ...response, model: response.model ?? model };
        } catch (error) {
          if (!(error instanceof ModelError) || !PASSING.has(error.failure)) throw error;
          breakers.failure(model, error.retryAfterMs);
          failed.push({ model, error });
          // info: a try that fails is retried or falls back; the call that fails in the end is the caller's warning (one line).
          log.info({ model, failure: error.failure, status: error.status, retryAfterMs: error.retryAfterMs, try: tries + 1, err: error.message }, "model try failed");
          const delay = error.retryAfterMs ?? this.backoff(tries);
          const again =
            tries < this.options.retries && !breakers.resting(model) && delay <= LONGEST_RETRY_WAIT_MS && (error.failure === "rate_limited" || next === undefined);
          if (!again) break;
          await this.sleep(delay, request.signal);
        }
      }
      if (next !== undefined) observer?.fallback(model, next, failed.at(-1)!.error.failure);
    }
    throw this.gaveUp(chain, failed);
  }

  /** One try on one model, given up after MODEL_CALL_TIMEOUT without progress; a streamed preview it leaves is void. */
  private async attempt(request: ModelRequest, model: string): Promise<ModelResponse> {
    const { timers, timeoutMs } = this.options;
    const { fallbackModels: _chain, onText, ...rest } = request;
    // One controller per try, stopped by its deadline or by the caller's signal (followed through a listener removed
    // when the try ends: AbortSignal.any costs about 30 µs of CPU a call on Node 20, the listener about 6).
    const stop = new AbortController();
    const follow = () => stop.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", follow, { once: true });
    if (request.signal?.aborted) follow();
    let timer: unknown = null;
    let expired = false;
    const arm = () => {
      if (timer !== null) timers.clearTimeout(timer);
      timer = timers.setTimeout(() => {
        expired = true;
        stop.abort();
      }, timeoutMs);
    };
    let streamed = false;
    arm();
    try {
      return await this.inner.complete({
        ...rest,
        model,
        signal: stop.signal,
        ...(onText
          ? {
              onText: (delta: string) => {
                streamed = true;
                arm();
                onText(delta);
              },
            }
          : {}),
      });
    } catch (error) {
      const failure =
        expired && !request.signal?.aborted
          ? new ModelError(`${model} gave no answer within ${seconds(timeoutMs)} (MODEL_CALL_TIMEOUT)`, null, false, { failure: "timeout" })
          : error;
      if (streamed && !(failure instanceof ModelError && failure.failure === "cancelled")) request.onReset?.();
      throw failure;
    } finally {
      request.signal?.removeEventListener("abort", follow);
      timers.clearTimeout(timer);
    }
  }

  /** The SDK's schedule: 0.5 s, 1 s, 2 s … up to 8 s, less up to a quarter of jitter. */
  private backoff(tries: number): number {
    return Math.min(500 * 2 ** tries, 8000) * (1 - (this.options.random ?? Math.random)() * 0.25);
  }

  private sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    const { timers } = this.options;
    return new Promise((resolve, reject) => {
      const stop = () => {
        timers.clearTimeout(handle);
        reject(new ModelError("the model call was cancelled", null, true));
      };
      const handle = timers.setTimeout(() => {
        signal?.removeEventListener("abort", stop);
        resolve();
      }, ms);
      if (signal?.aborted) return stop();
      signal?.addEventListener("abort", stop, { once: true });
    });
  }

  /** Every model of the chain failed or rests: the last failure, or one error naming each model's. */
  private gaveUp(chain: string[], failed: Array<{ model: string; error: ModelError }>): ModelError {
    const { breakers, now } = this.options;
    const last = failed.at(-1);
    if (!last) {
      const soonest = Math.min(...chain.map((m) => (breakers.resting(m) ? breakers.reopensAt(m) : now() + breakers.waitFor(m))));
      const wait = Math.max(0, soonest - now());
      return new ModelError(`${chain.join(", ")} ${chain.length > 1 ? "are" : "is"} resting after repeated failures; try again in ${seconds(wait)}`, null, false, {
        failure: "unavailable",
        retryAfterMs: wait,
      });
    }
    if (chain.length === 1) return last.error;
    const byModel = chain.map((m) => {
      const error = failed.filter((f) => f.model === m).at(-1)?.error;
      return `${m}: ${error ? error.message : "resting after repeated failures"}`;
    });
    return new ModelError(`no model could answer (${byModel.join("; ")})`, last.error.status, false, {
      failure: last.error.failure,
      retryAfterMs: last.error.retryAfterMs,
    });
  }
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${Math.ceil(ms / 1000)} s`;
}
