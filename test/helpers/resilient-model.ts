import { PriceTable } from "../../src/llm/prices.js";
import { createApiModel, type ResilienceObserver } from "../../src/llm/resilient.js";
import { silentLogger } from "../../src/log.js";
import { systemTimers } from "../../src/runtime/deps.js";

/** The model as app.ts builds it (keys, fallbacks, breakers), with the harness's default model and no retries. */
export function resilientModel(options: { fallbacks: string[]; failures?: number; observer?: ResilienceObserver }) {
  return (baseURL: string) =>
    createApiModel({
      keys: ["test-key"],
      baseURL,
      defaultModel: "claude-test",
      retries: 0,
      prices: new PriceTable(),
      fallbacks: options.fallbacks,
      breaker: { failures: options.failures ?? 5, cooldownMs: 30_000 },
      callTimeoutMs: 60_000,
      now: Date.now,
      timers: systemTimers,
      log: silentLogger(),
      ...(options.observer ? { observer: options.observer } : {}),
    });
}

export const withFallbacks = (...fallbacks: string[]) => resilientModel({ fallbacks });
