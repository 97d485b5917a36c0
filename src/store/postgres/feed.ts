// The change feed on PostgreSQL: changes are rows of `change_feed` named by NOTIFY (changes.ts says why), heard by
// the LISTEN connection (listener.ts). Announcements go out one batch at a time, in the order they were made.
import type pg from "pg";
import type { ChangeFeed, StoreChange } from "../store.js";
import { writeChanges } from "./commit.js";
import type { FeedEntry } from "./changes.js";
import type { ChangeListener } from "./listener.js";

export class PostgresFeed implements ChangeFeed {
  /** The last batch of announcements sent (see announce()). */
  private announcing: Promise<unknown> = Promise.resolve();
  /** The batch that waits for the one being sent; changes announced meanwhile join it. */
  private waiting: { changes: StoreChange[]; sent: Promise<void> } | null = null;

  constructor(
    private readonly pool: pg.Pool,
    readonly listener: ChangeListener,
  ) {}

  watch(listener: (change: StoreChange) => void): () => void {
    return this.listener.watch(listener);
  }

  /**
   * One batch at a time, in the order they were made: each query may take another pooled connection, so
   * concurrent writes would reach the other replicas shuffled (a reply's pieces out of order). Changes announced
   * while a batch is being written wait together and go out as the next batch, in one statement (a streaming
   * reply's deltas come faster than one round trip each).
   */
  announce(change: StoreChange): Promise<void> {
    if (this.waiting) {
      this.waiting.changes.push(change);
      return this.waiting.sent;
    }
    const batch: { changes: StoreChange[]; sent: Promise<void> } = { changes: [change], sent: Promise.resolve() };
    batch.sent = this.announcing.then(async () => {
      if (this.waiting === batch) this.waiting = null;
      this.listener.ownChanges(await writeChanges(this.pool, batch.changes));
    });
    this.waiting = batch;
    this.announcing = batch.sent.catch(() => {});
    return batch.sent;
  }

  /** Resolves once what was announced so far went out: a commit waits for it, so the others hear it first. */
  settled(): Promise<unknown> {
    return this.announcing;
  }

  /** Changes this replica committed: heard here at once (the others hear them through NOTIFY). */
  committed(entries: FeedEntry[]): void {
    this.listener.ownChanges(entries);
  }
}
