import type Database from "better-sqlite3";

/**
 * When a group commits: once the microtasks already queued have run, so every write that became ready in the same
 * wave of promise continuations (the messages of one getUpdates batch, the sessions one poll wakes) joins it, without
 * waiting a turn of the event loop. Writes from separate I/O or timer callbacks (model answers, separate HTTP
 * requests) commit one by one. Waiting for the next turn (setImmediate) batched those too but cost every write a
 * loop iteration: the handoff round trip lost a fifth of its rate and the tail under load grew (docs/engineering/performance.md).
 */
const afterThisWave = (run: () => void): void => queueMicrotask(run);

/**
 * Where a process can die around a group commit (the simulation and the crash tests kill it there). A hook that
 * throws is that death: every writer of the batch gets the error, and nothing more happens in this process.
 */
export interface GroupCommitHooks {
  /** Before the batch's transaction: its writes are lost, none was acknowledged. */
  before?: (writes: number) => void;
  /** After the batch committed, before any writer hears of it: on disk, unacknowledged. */
  after?: (writes: number) => void;
}

interface Write {
  work: () => unknown;
  /** Runs once the batch committed, before the writer hears of it (the change feed: `emit`). */
  after: ((value: unknown) => void) | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit: the writes asked for in one wave of work (across sessions: steps, inbound messages, delivery
 * marks, leases of a non-exclusive store) commit together in one SQLite transaction once that wave is done, and
 * each caller hears of its write only after that transaction committed. So a message is acknowledged to its
 * platform, and a reply is sent, only once it is on disk, as before; what changes is that N writes cost one
 * commit instead of N.
 *
 * Each write runs in its own savepoint: one that fails (a fenced step, a broken row) is rolled back alone and
 * rejects alone; the others commit. A failing COMMIT (disk full) rejects every write of the batch.
 */
export class GroupCommit {
  private queue: Write[] = [];
  private scheduled = false;
  /** Batches committed, the writes in them and the largest batch (the bench reports them). */
  readonly stats = { batches: 0, writes: 0, largest: 0 };

  constructor(
    private readonly db: Database.Database,
    private readonly hooks: GroupCommitHooks = {},
  ) {}

  /**
   * Runs `work` inside the next group transaction; once that transaction committed, runs `after` with its
   * result (to announce the change) and resolves with it.
   */
  run<T>(work: () => T, after?: (value: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, after: after as ((value: unknown) => void) | undefined, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        afterThisWave(() => this.flush());
      }
    });
  }

  /** Commits what is queued now (also before the database closes, so nothing already asked for is dropped). */
  flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.hooks.before?.(batch.length);
      if (batch.length === 1) outcomes.push({ ok: true, value: this.db.transaction(batch[0]!.work)() });
      else {
        this.db.transaction(() => {
          for (const write of batch) {
            try {
              // Nested: a savepoint, so a failure undoes this write only.
              outcomes.push({ ok: true, value: this.db.transaction(write.work)() });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        })();
      }
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    this.stats.batches++;
    this.stats.writes += batch.length;
    this.stats.largest = Math.max(this.stats.largest, batch.length);
    try {
      this.hooks.after?.(batch.length);
    } catch (error) {
      // The process "died" here (a test's crash point): nobody hears of these writes.
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) return write.reject(outcome.error);
      try {
        write.after?.(outcome.value);
      } catch {
        // announcing is best effort (the change feed's listeners guard themselves); the write committed
      }
      write.resolve(outcome.value);
    });
  }
}
