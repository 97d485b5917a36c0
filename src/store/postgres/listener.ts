// The change feed's receiving end: one dedicated connection that LISTENs on the channel, reads each change a
// notification names from `change_feed` (changes.ts says why notifications carry ids only) and hands it to the
// store's watchers, in the order the notifications came. When the connection drops (server restart, network, an
// admin's pg_terminate_backend) it reconnects with backoff and logs; it never throws into the process. Changes sent
// while it was away are lost: the replicas' orphan poll (Store.orphanedSessions) is what catches up with them.
import pg from "pg";
import type { Logger } from "pino";
import { backgroundTimers } from "../../runtime/deps.js";
import type { StoreChange } from "../store.js";
import { CHANNEL, changeId, decodeChange, FEED_WINDOW_SECONDS, type FeedEntry } from "./changes.js";
import { sql } from "./statements.js";

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 10_000;
/** Ids read in one query. */
const BATCH = 500;
/** Ids waiting to be read beyond this are dropped (a flood of notifications); the orphan poll catches up. */
const MAX_WAITING = 50_000;

// Only rows of the last window: an older id is a replay (or too late to matter). The database's clock decides.
const READ = sql(
  "read_changes",
  `SELECT id::text AS id, change, (extract(epoch FROM created_at) * 1000)::float8 AS at, (extract(epoch FROM now()) * 1000)::float8 AS now
   FROM change_feed WHERE id = ANY($1::bigint[]) AND created_at > now() - make_interval(secs => $2)`,
);
const PRUNE = sql("prune_changes", `DELETE FROM change_feed WHERE created_at < now() - make_interval(secs => $1)`);

export class ChangeListener {
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private client: pg.Client | null = null;
  private retry: unknown = null;
  private failures = 0;
  private closed = false;
  /** Ids heard and not read yet, in the order they were heard. */
  private waiting: string[] = [];
  private reading = false;
  /** Ids delivered within the window, with when they were written (database clock, ms): a repeat is dropped. */
  private readonly delivered = new Map<string, number>();
  /** When this replica last deleted old rows (database clock, ms). */
  private prunedAt = 0;
  /** Notifications heard that were not change ids. */
  private ignored = 0;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly log: Logger,
  ) {}

  /** Connects and listens; rejects when the first connection fails (the store's open reports it). */
  async start(): Promise<void> {
    await this.connect();
  }

  watch(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry !== null) backgroundTimers.clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.config, application_name: "switchboard-listener" });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("the connection ended")));
    client.on("notification", (message) => {
      if (message.channel === CHANNEL) this.heard(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  /**
   * Changes this replica wrote, delivered here at once instead of read back from the table; their notifications,
   * when they arrive (before or after), are then repeats and dropped.
   */
  ownChanges(entries: readonly FeedEntry[]): void {
    if (this.closed || entries.length === 0) return;
    for (const { id, at, change } of entries) {
      if (this.delivered.has(id)) continue;
      this.delivered.set(id, at);
      this.deliver(change);
    }
    // A replica that only hears itself reads nothing back: its writes' time keeps the bookkeeping going.
    this.forget(Math.max(...entries.map((e) => e.at)));
  }

  private heard(payload: string | undefined): void {
    const id = changeId(payload);
    if (id === null) {
      // Whoever sent it, its text is not logged, and a flood of them is not a flood of log lines: the first and
      // every thousandth after it.
      if (this.ignored++ % 1000 === 0) {
        this.log.warn(
          { channel: CHANNEL, bytes: payload?.length ?? 0, ignored: this.ignored },
          "ignored a notification that is not a change id (another program, or another role, uses the channel)",
        );
      }
      return;
    }
    if (this.waiting.length >= MAX_WAITING) this.waiting.shift();
    this.waiting.push(id);
    if (!this.reading) void this.read();
  }

  /** Reads what was heard, batch after batch, and delivers it in the order it was heard. */
  private async read(): Promise<void> {
    this.reading = true;
    try {
      // One turn first: notifications that arrived in the same packet are read with one query.
      await Promise.resolve();
      while (this.waiting.length > 0 && this.client && !this.closed) {
        // Ids delivered already (this replica's own changes, a replay) are not read again.
        const ids = this.waiting.splice(0, BATCH).filter((id) => !this.delivered.has(id));
        if (ids.length === 0) continue;
        const rows = await this.client
          .query<{ id: string; change: string; at: number; now: number }>({ ...READ, values: [ids, FEED_WINDOW_SECONDS] })
          .then((r) => r.rows)
          .catch((error: Error) => {
            // The connection is going away (lost() reconnects): these changes are lost, like any sent meanwhile.
            this.log.warn({ err: error.message, changes: ids.length }, "could not read changes from the feed");
            return [];
          });
        const byId = new Map(rows.map((row) => [row.id, row]));
        for (const id of ids) {
          const row = byId.get(id);
          // Unknown (forged, or deleted), or delivered before (a replayed notification): nothing to do.
          if (!row || this.delivered.has(id)) continue;
          this.delivered.set(id, row.at);
          const change = decodeChange(row.change);
          if (change) this.deliver(change);
          else this.log.error({ change: id }, "a change_feed row does not hold a change; it was skipped");
        }
        if (rows.length > 0) this.forget(rows[0]!.now);
      }
    } finally {
      this.reading = false;
    }
  }

  private deliver(change: StoreChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.log.error({ err: error, change: change.kind }, "a store change listener threw");
      }
    }
  }

  /** Drops delivered ids past the window (they can no longer be read) and, once a window, old rows. */
  private forget(now: number): void {
    const horizon = now - FEED_WINDOW_SECONDS * 1000;
    for (const [id, at] of this.delivered) if (at < horizon) this.delivered.delete(id);
    if (now - this.prunedAt < FEED_WINDOW_SECONDS * 1000) return;
    this.prunedAt = now;
    this.client?.query({ ...PRUNE, values: [2 * FEED_WINDOW_SECONDS] }).then(
      (result) => this.log.debug({ rows: result.rowCount ?? 0 }, "deleted old rows of the change feed"),
      (error: Error) => this.log.warn({ err: error.message }, "could not delete old rows of the change feed"),
    );
  }

  /** The listening connection went away: forget it and reconnect (only once per connection, however it ended). */
  private lost(client: pg.Client, error: Error): void {
    if (client !== this.client || this.closed) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.log.warn({ err: error.message }, "lost the PostgreSQL change feed connection; reconnecting");
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = Math.min(FIRST_RETRY_MS * 2 ** this.failures, MAX_RETRY_MS);
    // The pool and the service's own handles keep the process alive; a pending retry alone must not (unref'd).
    this.retry = backgroundTimers.setTimeout(() => {
      this.retry = null;
      this.connect().then(
        () => {
          if (this.closed) return;
          this.log.info({ attempts: this.failures + 1 }, "listening to the PostgreSQL change feed again");
          this.failures = 0;
        },
        (error: Error) => {
          if (this.closed) return;
          this.failures++;
          this.log.warn(
            { err: error.message, retryInMs: Math.min(FIRST_RETRY_MS * 2 ** this.failures, MAX_RETRY_MS) },
            "cannot reconnect the PostgreSQL change feed yet",
          );
          this.scheduleReconnect();
        },
      );
    }, delay);
  }
}
