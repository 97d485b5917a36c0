/** Thrown when a target already has its maximum of calls running and its wait queue is full. */
export class TargetBusyError extends Error {
  override name = "TargetBusyError";
}

/**
 * At most `maxConcurrent` calls in flight per target; up to `maxQueued` more wait in order; beyond that
 * a call is refused at once. Shared by every session of the process.
 */
export class CallLimiter {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Array<{ grant: () => void; signal: AbortSignal }>>();

  constructor(
    readonly maxConcurrent: number,
    readonly maxQueued: number,
  ) {}

  /** Resolves with a release function once a slot is free; rejects if busy or if `signal` aborts first. */
  acquire(target: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const running = this.running.get(target) ?? 0;
    if (running < this.maxConcurrent) {
      this.running.set(target, running + 1);
      return Promise.resolve(this.releaser(target));
    }
    const queue = this.waiting.get(target) ?? [];
    if (queue.length >= this.maxQueued) {
      return Promise.reject(
        new TargetBusyError(`target busy: ${running} calls to ${target} are running and ${queue.length} are waiting; try again later`),
      );
    }
    this.waiting.set(target, queue);
    return new Promise((resolve, reject) => {
      const entry = {
        signal,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(this.releaser(target));
        },
      };
      const onAbort = () => {
        const at = queue.indexOf(entry);
        if (at >= 0) queue.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      queue.push(entry);
    });
  }

  inFlight(target: string): number {
    return this.running.get(target) ?? 0;
  }

  private releaser(target: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.get(target)?.shift();
      if (next) {
        next.grant(); // the slot passes straight to the next waiter
        return;
      }
      const left = (this.running.get(target) ?? 1) - 1;
      if (left > 0) this.running.set(target, left);
      else this.running.delete(target);
    };
  }
}
