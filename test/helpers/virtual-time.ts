import type { Timers } from "../../src/runtime/deps.js";

/**
 * A clock and timers in virtual time: a timeout shorter than `holdFrom` elapses on the next turn of the event loop
 * and moves the clock by its delay (a retry's wait: the test reads `waited` to see how long it was), a longer one
 * (a call's deadline) stays pending until the test fires it. `advance` moves the clock by hand (a cooldown passing).
 */
export function virtualTime(options: { start?: number; holdFrom?: number } = {}) {
  let now = options.start ?? 1_700_000_000_000;
  const holdFrom = options.holdFrom ?? 60_001;
  const held = new Map<number, { fn: () => void; ms: number }>();
  const cleared = new Set<number>();
  const waited: number[] = [];
  let heldListener: (() => void) | null = null;
  let next = 1;
  const timers: Timers = {
    setTimeout(fn, ms) {
      const id = next++;
      if (ms >= holdFrom) {
        held.set(id, { fn, ms });
        heldListener?.();
        return id;
      }
      setImmediate(() => {
        if (cleared.delete(id)) return;
        waited.push(ms);
        now += ms;
        fn();
      });
      return id;
    },
    clearTimeout(id) {
      if (!held.delete(id as number)) cleared.add(id as number);
    },
  };
  return {
    now: () => now,
    timers,
    /** The delays that elapsed, in order. */
    waited,
    advance: (ms: number) => void (now += ms),
    /** How many long timeouts are pending. */
    held: () => held.size,
    /** Resolves once a long timeout is pending. */
    holding: () => (held.size > 0 ? Promise.resolve() : new Promise<void>((resolve) => (heldListener = resolve))),
    /** Fires every pending long timeout, moving the clock to the latest of them. */
    fireHeld() {
      const due = [...held.values()];
      held.clear();
      if (due.length > 0) now += Math.max(...due.map((t) => t.ms));
      for (const t of due) t.fn();
    },
  };
}
