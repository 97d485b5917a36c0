// Slots for sandboxed commands, shared by every session of the process. A freed slot goes to the next key in
// turn, not to the oldest call: a session that queued ten commands runs one of them, then another session's, so
// nobody waits behind somebody else's whole batch.
import type { Clock } from "../runtime/deps.js";

export interface Slot {
  /** Gives the slot back (once; later calls do nothing). */
  release(): void;
  /** How long the call waited for it. */
  waitedMs: number;
}

export type Admission = { ok: true; slot: Slot } | { ok: false; reason: string };

interface Waiter {
  since: number;
  grant(): void;
}

export class FairQueue {
  private running = 0;
  private queued = 0;
  /** Keys with waiting calls, in the order they get the next slot; each key's own calls in arrival order. */
  private readonly turns = new Map<string, Waiter[]>();

  constructor(
    readonly concurrency: number,
    readonly maxQueued: number,
    private readonly clock: Clock,
  ) {}

  /**
   * A slot for `key`: at once when one is free, after the other keys' turns otherwise. Refused when the queue
   * is full; rejects with `signal.reason` when the signal aborts while the call waits.
   */
  acquire(key: string, signal?: AbortSignal): Promise<Admission> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const since = this.clock.now();
    if (this.running < this.concurrency) return Promise.resolve({ ok: true, slot: this.grant(since) });
    if (this.queued >= this.maxQueued) {
      return Promise.resolve({
        ok: false,
        reason: `the sandbox is busy: ${this.running} commands are running and ${this.queued} are waiting (at most ${this.maxQueued}); try again in a moment`,
      });
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        since,
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve({ ok: true, slot: this.grant(since) });
        },
      };
      const onAbort = () => {
        const mine = this.turns.get(key);
        const at = mine?.indexOf(waiter) ?? -1;
        if (mine && at >= 0) {
          mine.splice(at, 1);
          this.queued--;
          if (mine.length === 0) this.turns.delete(key);
        }
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const mine = this.turns.get(key);
      if (mine) mine.push(waiter);
      else this.turns.set(key, [waiter]);
      this.queued++;
    });
  }

  /** Calls running and waiting now. */
  load(): { running: number; queued: number } {
    return { running: this.running, queued: this.queued };
  }

  private grant(since: number): Slot {
    this.running++;
    let released = false;
    return {
      waitedMs: this.clock.now() - since,
      release: () => {
        if (released) return;
        released = true;
        this.running--;
        this.next();
      },
    };
  }

  /** The first key in turn gives up its oldest waiter, then goes to the back of the line if it has more. */
  private next(): void {
    const first = this.turns.entries().next();
    if (first.done) return;
    const [key, waiters] = first.value;
    const waiter = waiters.shift()!;
    this.turns.delete(key);
    if (waiters.length > 0) this.turns.set(key, waiters);
    this.queued--;
    waiter.grant();
  }
}
