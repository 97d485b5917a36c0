// The change feed's receiving end: one dedicated connection that LISTENs on the channel and hands every change to
// the store's watchers. When the connection drops (server restart, network, an admin's pg_terminate_backend) it
// reconnects with backoff and logs; it never throws into the process. Changes sent while it was away are lost:
// the replicas' orphan poll (Store.orphanedSessions) is what catches up with them.
import pg from "pg";
import type { Logger } from "pino";
import type { StoreChange } from "../store.js";
import { CHANNEL, decodeChange } from "./changes.js";

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 10_000;

export class ChangeListener {
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;

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
    if (this.retry) clearTimeout(this.retry);
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
      if (message.channel === CHANNEL) this.deliver(message.payload);
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

  private deliver(payload: string | undefined): void {
    const change = decodeChange(payload);
    if (!change) {
      this.log.warn({ channel: CHANNEL, payload: payload?.slice(0, 200) }, "ignored a notification that is not a store change");
      return;
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.log.error({ err: error, change: change.kind }, "a store change listener threw");
      }
    }
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
    this.retry = setTimeout(() => {
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
          this.log.warn({ err: error.message, retryInMs: Math.min(FIRST_RETRY_MS * 2 ** this.failures, MAX_RETRY_MS) }, "cannot reconnect the PostgreSQL change feed yet");
          this.scheduleReconnect();
        },
      );
    }, delay);
    // The pool and the service's own handles keep the process alive; a pending retry alone must not.
    this.retry.unref();
  }
}
