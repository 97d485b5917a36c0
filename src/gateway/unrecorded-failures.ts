import { backgroundTimers, type Timers } from "../runtime/deps.js";
import { repeat } from "../runtime/repeat.js";
import type { Store } from "../store/store.js";

/**
 * Requests that failed, were reported to the user as failed, but whose end the store could not record (disk
 * full). They are terminal all the same: never run again, and written as failed as soon as the store can take it
 * (retried on a timer and once more at shutdown), so a restart does not replay them after newer messages.
 */
export class UnrecordedFailures {
  private readonly failures = new Map<string, { sessionKey: string; error: string }>();
  private stopTimer: (() => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly retryMs: number,
    private readonly timers: Timers = backgroundTimers,
  ) {}

  has(requestId: string): boolean {
    return this.failures.has(requestId);
  }

  add(requestId: string, sessionKey: string, error: string): void {
    this.failures.set(requestId, { sessionKey, error });
    this.stopTimer ??= repeat(this.timers, this.retryMs, () => void this.record());
  }

  /** Writes what the store could not take earlier; stops the timer once all are written. */
  async record(): Promise<void> {
    for (const [id, { sessionKey, error }] of this.failures) {
      try {
        await this.store.commit({ sessionKey, request: { id, status: "failed", error } });
        this.failures.delete(id);
      } catch {
        return; // still failing; the next tick tries again
      }
    }
    this.stop();
  }

  stop(): void {
    this.stopTimer?.();
    this.stopTimer = null;
  }
}
