import type pg from "pg";
import pino, { type Logger } from "pino";
import type { QuarantineRecord, Store } from "../store.js";
import { PostgresApprovals } from "./approvals.js";
import { connect } from "./connect.js";
import { PostgresContext } from "./context.js";
import { PostgresFeed } from "./feed.js";
import { PostgresFiles } from "./files.js";
import { PostgresIndicators } from "./indicators.js";
import { PostgresSchedules } from "./schedules.js";
import { PostgresUsage } from "./usage.js";
import { PostgresWorkspaces } from "./workspaces.js";
import { PostgresLeases } from "./leases.js";
import type { ChangeListener } from "./listener.js";
import { PostgresMemories } from "./memories.js";
import { PostgresOperations } from "./operations.js";
import { PostgresOutbox } from "./outbox.js";
import { Quarantine } from "./quarantine.js";
import { PostgresRequests } from "./requests.js";
import { PostgresSessions } from "./sessions.js";
import { PostgresSteps } from "./steps.js";
import { PostgresTasks } from "./tasks.js";
import { PostgresUserData } from "./user-data.js";

export interface PostgresStoreOptions {
  /** Where timestamps come from (tests drive a fake clock). */
  now?: () => number;
  /** Called once per row that could not be read and was set aside (the caller logs it). */
  onQuarantine?: (record: QuarantineRecord) => void;
  /** Connections in the query pool (the change feed has one more of its own). */
  poolMax?: number;
  log?: Logger;
}

/**
 * The store on PostgreSQL, for several replicas sharing one database: a pool for queries (every step one
 * transaction), one more connection LISTENing for the change feed, leases with fencing tokens in a table. Its roles
 * are in the files beside this one.
 */
export class PostgresStore implements Store {
  readonly sessions: PostgresSessions;
  readonly steps: PostgresSteps;
  readonly tasks: PostgresTasks;
  readonly requests: PostgresRequests;
  readonly outbox: PostgresOutbox;
  readonly approvals: PostgresApprovals;
  readonly leases: PostgresLeases;
  readonly feed: PostgresFeed;
  readonly memories: PostgresMemories;
  readonly userData: PostgresUserData;
  readonly operations: PostgresOperations;
  readonly indicators: PostgresIndicators;
  readonly files: PostgresFiles;
  readonly schedules: PostgresSchedules;
  readonly usage: PostgresUsage;
  readonly workspaces: PostgresWorkspaces;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly listener: ChangeListener,
    now: () => number,
    private readonly log: Logger,
    onQuarantine: ((record: QuarantineRecord) => void) | undefined,
  ) {
    const quarantine = new Quarantine(pool, now, onQuarantine);
    this.feed = new PostgresFeed(pool, listener);
    const ctx = new PostgresContext(pool, now, this.feed, quarantine);
    this.sessions = new PostgresSessions(ctx);
    this.steps = new PostgresSteps(ctx);
    this.tasks = new PostgresTasks(ctx);
    this.requests = new PostgresRequests(ctx);
    this.outbox = new PostgresOutbox(ctx);
    this.approvals = new PostgresApprovals(ctx);
    this.leases = new PostgresLeases(pool, now);
    this.memories = new PostgresMemories(pool, now);
    this.userData = new PostgresUserData(pool, now);
    this.operations = new PostgresOperations(pool, quarantine);
    this.indicators = new PostgresIndicators(ctx);
    this.files = new PostgresFiles(ctx);
    this.schedules = new PostgresSchedules(ctx);
    this.usage = new PostgresUsage(ctx);
    this.workspaces = new PostgresWorkspaces(ctx);
  }

  /** Connects, brings the schema up to date and starts listening. Rejects with a one-line reason (no password). */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const log = options.log ?? pino({ level: "silent" });
    const { pool, listener } = await connect(url, { poolMax: options.poolMax, log });
    return new PostgresStore(pool, listener, options.now ?? Date.now, log, options.onQuarantine);
  }

  async ping(): Promise<void> {
    await this.pool.query("SELECT 1");
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.listener.close();
      await this.pool.end().catch((error: Error) => this.log.warn({ err: error.message }, "closing the PostgreSQL pool failed"));
    })();
    return this.closing;
  }
}
