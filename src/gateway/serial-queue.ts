type Job = () => Promise<void>;

/**
 * Runs jobs one at a time per key, in order; different keys run concurrently. `pushFront` lets a
 * control job (a /cancel) go next instead of waiting behind queued messages.
 */
export class SerialQueue {
  private readonly lanes = new Map<string, Job[]>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly onError: (key: string, error: unknown) => void) {}

  push(key: string, job: Job): void {
    this.lane(key).push(job);
    this.kick(key);
  }

  pushFront(key: string, job: Job): void {
    this.lane(key).unshift(job);
    this.kick(key);
  }

  busy(key: string): boolean {
    return this.running.has(key);
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  private lane(key: string): Job[] {
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = []));
    return lane;
  }

  private kick(key: string): void {
    if (this.running.has(key)) return;
    const run = (async () => {
      for (let job = this.lanes.get(key)?.shift(); job; job = this.lanes.get(key)?.shift()) {
        try {
          await job();
        } catch (error) {
          this.onError(key, error);
        }
      }
      this.lanes.delete(key);
      this.running.delete(key);
    })();
    this.running.set(key, run);
  }
}
