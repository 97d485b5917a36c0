import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";

// What kept the event loop from turning while a scenario ran: the delay of a 10 ms timer (perf_hooks' histogram, so
// a long synchronous task shows as a delay of its length) and the garbage collector's pauses.

export interface LoopFigures {
  loop_delay_p50_ms: number;
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
  gc_pauses: number;
  gc_pause_total_ms: number;
  gc_pause_max_ms: number;
}

export function watchEventLoop(): { stop(): LoopFigures } {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const pauses: number[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration);
  });
  gc.observe({ entryTypes: ["gc"] });
  delay.enable();
  return {
    stop() {
      delay.disable();
      gc.disconnect();
      // The histogram is in nanoseconds and includes the 10 ms resolution's own wait.
      const ms = (ns: number) => +Math.max(0, ns / 1e6 - 10).toFixed(2);
      return {
        loop_delay_p50_ms: ms(delay.percentile(50)),
        loop_delay_p99_ms: ms(delay.percentile(99)),
        loop_delay_max_ms: ms(delay.max),
        gc_pauses: pauses.length,
        gc_pause_total_ms: +pauses.reduce((a, b) => a + b, 0).toFixed(1),
        gc_pause_max_ms: +Math.max(0, ...pauses).toFixed(2),
      };
    },
  };
}
