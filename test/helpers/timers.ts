import type { Timers } from "../../src/runtime/deps.js";

/** Timeouts a test fires by hand (retry schedules, call deadlines), with the delays they were set for. */
export function manualTimeouts() {
  const pending = new Map<number, { fn: () => void; ms: number }>();
  let next = 1;
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      pending.set(next, { fn, ms });
      return next++;
    },
    clearTimeout: (id) => void pending.delete(id as number),
  };
  return {
    timers,
    delays: () => [...pending.values()].map((t) => t.ms),
    /** How many timeouts set for `ms` are pending. */
    count: (ms: number) => [...pending.values()].filter((t) => t.ms === ms).length,
    /** Fires the pending timeouts set for `ms` (a keepalive, a coalescing window), leaving the others. */
    fire(ms: number) {
      for (const [id, t] of [...pending]) {
        if (t.ms !== ms) continue;
        pending.delete(id);
        t.fn();
      }
    },
    /** Fires every pending timeout once (each is gone afterwards, as a fired timeout is). */
    fireAll: () => {
      const due = [...pending.values()];
      pending.clear();
      for (const t of due) t.fn();
    },
  };
}
