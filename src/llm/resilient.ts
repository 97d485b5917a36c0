// The model the gateway calls: one Anthropic client per API key (keys.ts), the chain of fallback models with a
// circuit breaker per model around them (fallback.ts, breaker.ts). The SDK's own retries are off underneath: the
// retries, their waits and their timeouts are this layer's, on injected timers, so a test can drive them.
import type { Logger } from "pino";
import { AnthropicModel } from "./anthropic.js";
import { Breakers, type BreakerState } from "./breaker.js";
import { FallbackModel, type FallbackObserver, type FallbackTimers } from "./fallback.js";
import { KeyRing, type KeyRingObserver } from "./keys.js";
import type { Model } from "./model.js";
import type { PriceTable } from "./prices.js";

export interface ResilienceObserver extends FallbackObserver, KeyRingObserver {
  breaker(model: string, state: BreakerState): void;
}

export interface ApiModelOptions {
  /** ANTHROPIC_API_KEY and ANTHROPIC_API_KEYS, in that order, each once; at least one. */
  keys: readonly string[];
  baseURL?: string | undefined;
  defaultModel: string;
  maxTokens?: number;
  /** ANTHROPIC_MAX_RETRIES. */
  retries: number;
  prices?: PriceTable;
  /** MODEL_FALLBACKS. */
  fallbacks: readonly string[];
  /** MODEL_BREAKER_FAILURES and MODEL_BREAKER_COOLDOWN. */
  breaker: { failures: number; cooldownMs: number };
  /** MODEL_CALL_TIMEOUT. */
  callTimeoutMs: number;
  now: () => number;
  timers: FallbackTimers;
  random?: () => number;
  log: Logger;
  observer?: ResilienceObserver;
}

export function createApiModel(options: ApiModelOptions): Model {
  const { observer, log } = options;
  const keys = new KeyRing({
    keys: options.keys,
    now: options.now,
    log,
    ...(observer ? { observer } : {}),
    modelFor: (apiKey) =>
      new AnthropicModel({
        apiKey,
        baseURL: options.baseURL,
        defaultModel: options.defaultModel,
        ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
        maxRetries: 0,
        // Our own timer (on the injected timers) gives up first; this one is only a backstop.
        timeoutMs: options.callTimeoutMs + 5_000,
        ...(options.prices ? { prices: options.prices } : {}),
        now: options.now,
      }),
  });
  const breakers = new Breakers({ ...options.breaker, now: options.now, ...(observer ? { onChange: (model, state) => observer.breaker(model, state) } : {}) });
  return new FallbackModel(keys, {
    fallbacks: options.fallbacks,
    retries: options.retries,
    timeoutMs: options.callTimeoutMs,
    breakers,
    now: options.now,
    timers: options.timers,
    ...(options.random ? { random: options.random } : {}),
    log,
    ...(observer ? { observer } : {}),
  });
}
