import { backgroundTimers, type Timers } from "../runtime/deps.js";
import { repeat } from "../runtime/repeat.js";
import { FencedError, type FailureCode, type SessionWriter } from "../store/store.js";

/**
 * Requests that failed, were reported to the user as failed, but whose end the store could not record (disk
 * full). They are terminal all the same: never run again, and written as failed as soon as the store can take it
 * (retried on a timer and once more at shutdown), so a restart does not replay them after newer messages. The end
 * is written through the writer of the lease the request ran under: once another replica took the session over,
 * the request is that replica's to end.
 */
export class UnrecordedFailures {
  private readonly failures = new Map<string, { writer: SessionWriter; error: string; errorCode: FailureCode }>();
  private stopTimer: (() => void) | null = null;

  constructor(
    private readonly retryMs: number,
    private readonly timers: Timers = backgroundTimers,
  ) {}

  has(requestId: string): boolean {
    return this.failures.has(requestId);
  }

  add(requestId: string, writer: SessionWriter, error: string, errorCode: FailureCode): void {
    this.failures.set(requestId, { writer, error, errorCode });
    this.stopTimer ??= repeat(this.timers, this.retryMs, () => void this.record());
  }

  /** Writes what the store could not take earlier; stops the timer once all are written. */
  async record(): Promise<void> {
    for (const [id, { writer, error, errorCode }] of this.failures) {
      try {
        await writer.commit({ request: { id, status: "failed", error, errorCode } });
        this.failures.delete(id);
      } catch (failure) {
        if (failure instanceof FencedError) this.failures.delete(id);
        else return; // still failing; the next tick tries again
      }
    }
    this.stop();
  }

  stop(): void {
    this.stopTimer?.();
    this.stopTimer = null;
  }
}
