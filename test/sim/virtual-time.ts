import type { Clock, Timers } from "../../src/runtime/deps.js";

/** Simulated time: nothing waits for real; `advance` moves the clock and fires the timers that come due. */
export class VirtualTime implements Clock, Timers {
  private nowMs = Date.UTC(2026, 0, 1);
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.nowMs;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.nowMs + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** When the earliest pending timer is due, or null when none is. */
  nextAt(): number | null {
    let next: number | null = null;
    for (const t of this.timers.values()) if (next === null || t.at < next) next = t.at;
    return next;
  }

  advance(ms: number): void {
    this.nowMs += ms;
    const due = [...this.timers.entries()].filter(([, t]) => t.at <= this.nowMs).sort((a, b) => a[1].at - b[1].at || a[0] - b[0]);
    for (const [id, timer] of due) {
      this.timers.delete(id);
      timer.fn();
    }
  }
}
