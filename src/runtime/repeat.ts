import type { Timers } from "./deps.js";

/**
 * Calls `fn` every `everyMs` on the given timers (what setInterval does, on timers a test or the simulation
 * controls); returns the function that stops it. `fn` is not awaited: a slow call does not delay the next one.
 */
export function repeat(timers: Timers, everyMs: number, fn: () => void): () => void {
  let stopped = false;
  let handle: unknown;
  const tick = () => {
    if (stopped) return;
    handle = timers.setTimeout(tick, everyMs);
    fn();
  };
  handle = timers.setTimeout(tick, everyMs);
  return () => {
    stopped = true;
    timers.clearTimeout(handle);
  };
}
