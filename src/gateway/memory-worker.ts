import type { Logger } from "pino";
import type { Timers } from "../runtime/deps.js";
import type { MemoryChanges, MemoryJob, Store } from "../store/store.js";

export interface MemoryWorkerDeps {
  store: Pick<Store, "memories">;
  /** This replica's name: the holder of the jobs it claims. */
  holder: string;
  extract(job: MemoryJob): Promise<MemoryChanges | null>;
  /** Whether a failed extraction may work later (the model was down) or never will (a 400). */
  retryable(error: unknown): boolean;
  log: Logger;
  timers: Timers;
  now(): number;
  /** How long a claim lasts: a replica that dies mid-extraction leaves it to be claimed again after this. */
  claimMs?: number;
  /** Claims per job before it is given up (marked failed). */
  maxAttempts?: number;
  /** First delay before a failed extraction is tried again (doubling each time). */
  retryBaseMs?: number;
  /** How often to look for due jobs without being woken (retries, another replica's leftovers). */
  pollMs?: number;
}

/**
 * Runs memory extraction in the background: woken after replies are delivered, and every pollMs. Jobs are
 * claimed from the store one at a time (on PostgreSQL, any replica may take any job, never two the same), so an
 * extraction never holds up a session: the user's next message goes ahead while it runs. The memories are
 * written in the same transaction that closes the job, only while the claim is still this replica's.
 */
export class MemoryWorker {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private timer: unknown = null;
  private readonly retries = new Set<unknown>();
  /** The earliest "now" claims use (see wakeIn). */
  private floor = 0;

  constructor(private readonly deps: MemoryWorkerDeps) {}

  start(): void {
    this.schedule();
    this.wake();
  }

  /** There may be a job due now. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: unknown) => this.deps.log.error({ err: error }, "memory extraction stopped on a store error; the next wake-up tries again"))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves when no extraction is running here (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.deps.timers.clearTimeout(this.timer);
    for (const handle of this.retries) this.deps.timers.clearTimeout(handle);
    this.retries.clear();
    await this.idle();
  }

  /** A wake-up when a retry is due (the poll would find it too, later). */
  private wakeIn(ms: number, dueAt: number): void {
    const handle = this.deps.timers.setTimeout(() => {
      this.retries.delete(handle);
      // A timer may fire a moment before the wall clock reaches dueAt: the job it is for counts as due.
      this.floor = Math.max(this.floor, dueAt);
      this.wake();
    }, ms);
    (handle as { unref?: () => void } | null)?.unref?.();
    this.retries.add(handle);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.deps.timers.setTimeout(() => {
      this.wake();
      this.schedule();
    }, this.deps.pollMs ?? 30_000);
    (this.timer as { unref?: () => void } | null)?.unref?.();
  }

  private async drain(): Promise<void> {
    const { store, holder } = this.deps;
    const claimMs = this.deps.claimMs ?? 120_000;
    for (;;) {
      if (this.stopped) return;
      const job = await store.memories.claimJob(holder, Math.max(this.deps.now(), this.floor), claimMs, this.deps.maxAttempts ?? 5);
      if (!job) return;
      const log = this.deps.log.child({ task: job.taskId });
      try {
        const changes = await this.deps.extract(job);
        const written = await store.memories.finishJob(job.taskId, holder, changes);
        if (written) log.info({ added: changes?.add?.length ?? 0, replaced: changes?.remove?.length ?? 0 }, "memories extracted");
        else log.warn("a memory extraction's claim ran out before it finished; another run writes it");
      } catch (error) {
        if (!this.deps.retryable(error)) {
          log.warn({ err: error }, "memory extraction failed for good; the task's memories are not kept");
          await store.memories.finishJob(job.taskId, holder, null);
          continue;
        }
        const delay = (this.deps.retryBaseMs ?? 5_000) * 2 ** Math.min(job.attempts - 1, 10);
        log.warn({ err: error, attempt: job.attempts, retryInMs: delay }, "memory extraction failed; it will be retried");
        await store.memories.retryJob(job.taskId, holder, error instanceof Error ? error.message : String(error), this.deps.now() + delay);
        this.wakeIn(delay, this.deps.now() + delay);
      }
    }
  }
}
