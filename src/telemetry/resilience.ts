import type { BreakerState } from "../llm/breaker.js";
import type { ResilienceObserver } from "../llm/resilient.js";
import type { Metrics } from "./metrics.js";

const BREAKER: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** Fallbacks, breaker states and key rotations as Prometheus metrics (models and keys are the admin's: few). */
export function resilienceMetrics(metrics: Metrics): ResilienceObserver {
  return {
    fallback: (from, to, reason) => metrics.fallbacks.inc({ from, to, reason }),
    breaker: (model, state) => metrics.breakerState.set({ model }, BREAKER[state]),
    key: (event) => metrics.apiKeyEvents.inc({ event }),
  };
}
