import type { Logger } from "pino";
import { apiKeysOf, type Config } from "../config.js";
import { UnconfiguredModel } from "../llm/anthropic.js";
import type { Model } from "../llm/model.js";
import { PriceTable } from "../llm/prices.js";
import { createApiModel } from "../llm/resilient.js";
import { HttpTranscriber, NoTranscriber, type Transcriber } from "../llm/transcription.js";
import { systemTimers } from "../runtime/deps.js";
import type { Metrics } from "../telemetry/metrics.js";
import { resilienceMetrics } from "../telemetry/resilience.js";

/** The model the agents call (ANTHROPIC_*, MODEL_*), or one that answers with setup instructions when no key is set. */
export function createModel(config: Config, log: Logger, metrics: Metrics): Model {
  const keys = apiKeysOf(config);
  // Several keys in turn, fallback models, a breaker per model: one Model made of models (src/llm/resilient.ts).
  return keys.length > 0
    ? createApiModel({
        keys,
        baseURL: config.ANTHROPIC_BASE_URL,
        defaultModel: config.ANTHROPIC_MODEL,
        maxTokens: config.ANTHROPIC_MAX_TOKENS,
        retries: config.ANTHROPIC_MAX_RETRIES,
        prices: new PriceTable(config.MODEL_PRICES),
        fallbacks: config.MODEL_FALLBACKS,
        breaker: { failures: config.MODEL_BREAKER_FAILURES, cooldownMs: config.MODEL_BREAKER_COOLDOWN },
        callTimeoutMs: config.MODEL_CALL_TIMEOUT,
        now: Date.now,
        timers: systemTimers,
        log: log.child({ part: "model" }),
        observer: resilienceMetrics(metrics),
      })
    : new UnconfiguredModel(config.ANTHROPIC_MODEL);
}

/** TRANSCRIPTION_URL's endpoint, or none (voice notes are then answered with how to set it up). */
export function transcriberFor(config: Config): Transcriber {
  return config.TRANSCRIPTION_URL
    ? new HttpTranscriber({ url: config.TRANSCRIPTION_URL, apiKey: config.TRANSCRIPTION_API_KEY, model: config.TRANSCRIPTION_MODEL })
    : new NoTranscriber();
}
