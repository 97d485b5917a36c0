import { systemTimers, type Timers } from "../../src/runtime/deps.js";

/** Timeouts a test fires by hand (retry schedules, call deadlines, pacing), with the delays they were set for. */
export function manualTimeouts() {
  const pending = new Map<number, { fn: () => void; ms: number }>();
  let next = 1;
  let onSet: (() => void) | null = null;
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      pending.set(next, { fn, ms });
      onSet?.();
      return next++;
    },
    clearTimeout: (id) => void pending.delete(id as number),
  };
  return {
    timers,
    delays: () => [...pending.values()].map((t) => t.ms),
    /** Resolves once a timeout is pending (the code under test has reached the point where it waits). */
    waiting: () => (pending.size > 0 ? Promise.resolve() : new Promise<void>((resolve) => (onSet = resolve))),
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

/** Real timers, except those set for exactly `ms`, which fire when the test says (`fire()`). */
export function heldTimeouts(ms: number) {
  const held = new Map<number, () => void>();
  let next = 0;
  const timers: Timers = {
    setTimeout: (fn, delay) => (delay === ms ? (held.set(++next, fn), { held: next }) : systemTimers.setTimeout(fn, delay)),
    clearTimeout: (handle) =>
      typeof handle === "object" && handle !== null && "held" in handle ? void held.delete((handle as { held: number }).held) : systemTimers.clearTimeout(handle),
  };
  return {
    timers,
    fire() {
      const due = [...held.values()];
      held.clear();
      due.forEach((fn) => fn());
    },
  };
}
