import { monitorEventLoopDelay } from "node:perf_hooks";

/**
 * Watches how late the event loop runs while `work` runs: the longest delay, in ms, that any timer would have seen.
 * A loop held by synchronous work (a backtracking regular expression, a big compile) shows up here as that work's
 * duration; waiting on I/O or a worker thread does not.
 */
export async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  try {
    const result = await work();
    return { result, stallMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}
