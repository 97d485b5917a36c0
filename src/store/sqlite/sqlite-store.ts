import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { QuarantineRecord, Store } from "../store.js";
import { SqliteApprovals } from "./approvals.js";
import type { SqliteContext } from "./context.js";
import { SqliteFeed } from "./feed.js";
import { GroupCommit, type GroupCommitHooks } from "./group-commit.js";
import { SqliteFiles } from "./files.js";
import { SqliteIndicators } from "./indicators.js";
import { SqliteSchedules } from "./schedules.js";
import { SqliteUsage } from "./usage.js";
import { SqliteWorkspaces } from "./workspaces.js";
import { SqliteLeases } from "./leases.js";
import { ProcessLeases } from "./process-leases.js";
import { SqliteMemories } from "./memories.js";
import { migrate } from "./migrations.js";
import { SqliteOperations } from "./operations.js";
import { SqliteOutbox } from "./outbox.js";
import { ProcessLock } from "./process-lock.js";
import { SqliteQuarantine } from "./quarantine.js";
import { SqliteRequests } from "./requests.js";
import { SqliteSessions } from "./sessions.js";
import { preparedOnUse } from "./prepared-on-use.js";
import { prepareStatements, type Statements } from "./statements.js";
import { SqliteSteps } from "./steps.js";
import { SqliteTasks } from "./tasks.js";
import { SqliteUserData } from "./user-data.js";

export interface SqliteStoreOptions {
  /** Called once per row that could not be read and was set aside (the caller logs it). */
  onQuarantine?: (record: QuarantineRecord) => void;
  /**
   * Holds an OS lock on the database for as long as the store is open, so a second process on the same file
   * refuses to start instead of sharing it (the gateway sets it; tools that only read do not).
   */
  exclusive?: boolean;
  /** Around each group commit: where the crash tests and the simulation kill the process. */
  groupCommit?: GroupCommitHooks;
}

/**
 * The durable store: one SQLite file in WAL mode, its roles in the files beside this one. Steps, inbound messages,
 * delivery marks and leases go through group commit (one transaction for all the writes that become ready together,
 * each in its own savepoint; see GroupCommit); reads answer synchronously underneath, and the change feed is this
 * process's own.
 */
export class SqliteStore implements Store {
  readonly sessions: SqliteSessions;
  readonly steps: SqliteSteps;
  readonly tasks: SqliteTasks;
  readonly requests: SqliteRequests;
  readonly outbox: SqliteOutbox;
  readonly approvals: SqliteApprovals;
  readonly leases: SqliteLeases;
  readonly feed: SqliteFeed;
  readonly memories: SqliteMemories;
  readonly userData: SqliteUserData;
  readonly operations: SqliteOperations;
  readonly indicators: SqliteIndicators;
  readonly files: SqliteFiles;
  readonly schedules: SqliteSchedules;
  readonly usage: SqliteUsage;
  readonly workspaces: SqliteWorkspaces;
  private readonly db: Database.Database;
  private readonly stmts: Statements;
  private readonly processLock: ProcessLock | null;
  private readonly writes: GroupCommit;

  constructor(file: string, now: () => number = Date.now, options: SqliteStoreOptions = {}) {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    this.processLock = options.exclusive && file !== ":memory:" ? new ProcessLock(`${file}.lock`) : null;
    this.db = new Database(file);
    try {
      this.db.pragma("busy_timeout = 2000");
      this.db.pragma("journal_mode = WAL");
      migrate(this.db);
    } catch (error) {
      this.db.close();
      this.processLock?.release();
      if ((error as { code?: string }).code === "SQLITE_BUSY") {
        throw new Error(`the database ${file} is locked by another process (is another Switchboard running on this DATA_DIR?)`, { cause: error });
      }
      throw error;
    }
    // NORMAL in WAL mode: a commit is durable against process crashes without an fsync per step; the
    // fsyncs happen at checkpoints. A larger WAL makes those rarer, which keeps the latency tail short.
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("wal_autocheckpoint = 10000");
    this.db.pragma("journal_size_limit = 67108864");
    this.db.pragma("busy_timeout = 5000");
    this.stmts = preparedOnUse(this.db, prepareStatements);
    this.writes = new GroupCommit(this.db, options.groupCommit);
    this.feed = new SqliteFeed();
    this.leases = new SqliteLeases(this.stmts, this.writes, now, options.exclusive ? new ProcessLeases() : null);
    const ctx: SqliteContext = {
      db: this.db,
      stmts: this.stmts,
      now,
      writes: this.writes,
      emit: (change) => this.feed.emit(change),
      leases: this.leases,
      quarantine: new SqliteQuarantine(this.stmts, now, options.onQuarantine),
    };
    this.sessions = new SqliteSessions(ctx);
    this.memories = new SqliteMemories(this.db, this.stmts, now);
    this.steps = new SqliteSteps(ctx, this.memories);
    this.tasks = new SqliteTasks(ctx);
    this.requests = new SqliteRequests(ctx);
    this.outbox = new SqliteOutbox(ctx);
    this.approvals = new SqliteApprovals(ctx, this.requests);
    this.userData = new SqliteUserData(this.db, now);
    this.operations = new SqliteOperations(ctx);
    this.indicators = new SqliteIndicators(ctx);
    this.files = new SqliteFiles(ctx);
    this.schedules = new SqliteSchedules(ctx);
    this.usage = new SqliteUsage(ctx);
    this.workspaces = new SqliteWorkspaces(ctx);
    // With the process lock held, every lease and every memory job claim in the file belongs to a process that is
    // gone: a restart resumes its sessions, and the extractions it was running, at once instead of waiting for them
    // to run out (the cut-off run still counts as an attempt).
    if (this.processLock) {
      this.stmts.expireLeases.run();
      this.stmts.expireMemoryClaims.run();
    }
  }

  async ping(): Promise<void> {
    this.stmts.getSession.get("@ping");
  }

  /** Group commit's figures: batches committed, the writes in them, and the largest batch. */
  groupCommits(): { batches: number; writes: number; largest: number } {
    return { ...this.writes.stats };
  }

  isOpen(): boolean {
    return this.db.open;
  }

  async close(): Promise<void> {
    if (this.db.open) {
      this.writes.flush();
      this.db.close();
    }
    this.processLock?.release();
    this.feed.clear();
  }
}
