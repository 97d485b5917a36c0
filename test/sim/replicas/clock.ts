import type { Timers } from "../../../src/runtime/deps.js";

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * One virtual clock shared by the replicas (the database's `now`), with a set of timers per replica. A paused
 * or crashed replica's timers are frozen: time passes for everyone else, its lease renewals do not run. Time
 * moves only when the simulation advances it, or when a model call or a commit "takes" some of it.
 */
export class SimClock {
  private nowMs = Date.UTC(2026, 0, 1);
  private nextId = 1;
  private readonly sets = new Map<string, { frozen: boolean; timers: Map<number, Timer> }>();

  now(): number {
    return this.nowMs;
  }

  /** The timers a replica's leases (and outbox retries) run on. */
  timersFor(replica: string): Timers {
    const set = { frozen: false, timers: new Map<number, Timer>() };
    this.sets.set(replica, set);
    return {
      setTimeout: (fn, ms) => {
        const id = this.nextId++;
        set.timers.set(id, { id, at: this.nowMs + ms, fn });
        return id;
      },
      clearTimeout: (handle) => void set.timers.delete(handle as number),
    };
  }

  freeze(replica: string): void {
    this.sets.get(replica)!.frozen = true;
  }

  /** Lets a replica's timers run again; the ones that came due while it was frozen fire at the next tick. */
  thaw(replica: string): void {
    this.sets.get(replica)!.frozen = false;
  }

  /** Timers of `replica` that are due now (a thawed replica's overdue renewals). */
  fireDue(replica: string): void {
    const set = this.sets.get(replica)!;
    for (const timer of [...set.timers.values()].filter((t) => t.at <= this.nowMs).sort(byTime)) {
      if (!set.timers.delete(timer.id)) continue;
      timer.fn();
    }
  }

  /**
   * Moves time forward by `ms` at once, firing every due timer of every running replica in order, synchronously
   * (what a model call or a database round trip costs while the rest of the world goes on).
   */
  tick(ms: number): void {
    const target = this.nowMs + ms;
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.nowMs = Math.max(this.nowMs, timer.at);
      timer.fn();
    }
    this.nowMs = target;
  }

  /** Like `tick`, but lets the replicas react (await `settle`) after each timer, so a renewal lands before the next one. */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    const target = this.nowMs + ms;
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.nowMs = Math.max(this.nowMs, timer.at);
      timer.fn();
      await settle();
    }
    this.nowMs = target;
  }

  /** Takes the earliest timer due by `target` off its (running) replica's set. */
  private nextDue(target: number): Timer | null {
    let best: { timer: Timer; timers: Map<number, Timer> } | null = null;
    for (const set of this.sets.values()) {
      if (set.frozen) continue;
      for (const timer of set.timers.values()) {
        if (timer.at <= target && (!best || byTime(timer, best.timer) < 0)) best = { timer, timers: set.timers };
      }
    }
    if (!best) return null;
    best.timers.delete(best.timer.id);
    return best.timer;
  }
}

function byTime(a: Timer, b: Timer): number {
  return a.at - b.at || a.id - b.id;
}
