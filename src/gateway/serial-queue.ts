/**
 * Runs jobs one at a time per key, in submission order; different keys run concurrently.
 * `idle()` resolves once every queued job has finished.
 */
export class SerialQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly onError: (key: string, error: unknown) => void) {}

  push(key: string, job: () => Promise<void>): void {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(job).catch((error: unknown) => this.onError(key, error));
    this.tails.set(key, next);
    this.running.add(next);
    void next.finally(() => {
      this.running.delete(next);
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
