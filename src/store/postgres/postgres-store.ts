import type pg from "pg";
import pino, { type Logger } from "pino";
import { inputHash } from "../input-hash.js";
import type {
  ApprovalRecord,
  ApprovalScope,
  ApprovalStatus,
  FrameRecord,
  IdempotencyRecord,
  InsertResult,
  Lease,
  LogEntry,
  MemoryChanges,
  MemoryJob,
  MemoryRecord,
  NewRequest,
  OutboundRecord,
  QuarantineRecord,
  RequestRecord,
  SessionRecord,
  SessionUsage,
  StepCommit,
  Store,
  StoreChange,
  TaskRecord,
  ToolCallRef,
  UndeliverableRecord,
  Usage,
  UserExport,
  UserFootprint,
} from "../store.js";
import type { OperationalCounts, SessionError, SessionSummary, StuckWork } from "../operations.js";
import type { FeedEntry } from "./changes.js";
import { writeChanges, writeStep } from "./commit.js";
import { connect } from "./connect.js";
import { userFootprint } from "./footprint.js";
import { transaction } from "./connection.js";
import type { ChangeListener } from "./listener.js";
import { Leases } from "./leases.js";
import { PostgresMemories } from "./memories.js";
import { moveSession } from "./move.js";
import { PostgresOperations } from "./operations.js";
import { Quarantine } from "./quarantine.js";
import { insertRequestWith, needsTransaction } from "./requests.js";
import * as rows from "../rows.js";
import { S, type Sql } from "./statements.js";
import { deleteUser, exportUser } from "./user-data.js";

export interface PostgresStoreOptions {
  /** Where timestamps come from (tests drive a fake clock). */
  now?: () => number;
  /** Called once per row that could not be read and was set aside (the caller logs it). */
  onQuarantine?: (record: QuarantineRecord) => void;
  /** Connections in the query pool (the change feed has one more of its own). */
  poolMax?: number;
  log?: Logger;
}

type Row = rows.Row;

/**
 * The store on PostgreSQL, for several replicas sharing one database: a pool for queries (every StepCommit one
 * transaction), one more connection LISTENing for the change feed, leases with fencing tokens in a table.
 */
export class PostgresStore implements Store {
  private closing: Promise<void> | null = null;
  /** The last batch of announcements sent (see announce()). */
  private announcing: Promise<unknown> = Promise.resolve();
  /** The batch that waits for the one being sent; changes announced meanwhile join it. */
  private waiting: { changes: StoreChange[]; sent: Promise<void> } | null = null;
  private readonly quarantine: Quarantine;
  private readonly leases: Leases;
  private readonly memory: PostgresMemories;
  private readonly operations: PostgresOperations;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly listener: ChangeListener,
    private readonly now: () => number,
    private readonly log: Logger,
    onQuarantine: ((record: QuarantineRecord) => void) | undefined,
  ) {
    this.quarantine = new Quarantine(pool, now, onQuarantine);
    this.leases = new Leases(pool, now);
    this.memory = new PostgresMemories(pool, now);
    this.operations = new PostgresOperations(pool, this.quarantine);
  }

  /** Connects, brings the schema up to date and starts listening. Rejects with a one-line reason (no password). */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const log = options.log ?? pino({ level: "silent" });
    const { pool, listener } = await connect(url, { poolMax: options.poolMax, log });
    return new PostgresStore(pool, listener, options.now ?? Date.now, log, options.onQuarantine);
  }

  private async all(statement: Sql, values: unknown[] = []): Promise<Row[]> {
    return (await this.pool.query<Row>({ ...statement, values })).rows;
  }

  private async one(statement: Sql, values: unknown[]): Promise<Row | null> {
    return (await this.all(statement, values))[0] ?? null;
  }

  private async maybe<T>(statement: Sql, values: unknown[], read: (row: Row) => T): Promise<T | null> {
    const row = await this.one(statement, values);
    return row ? read(row) : null;
  }

  private async changed(statement: Sql, values: unknown[]): Promise<number> {
    return (await this.pool.query({ ...statement, values })).rowCount ?? 0;
  }

  async commit(step: StepCommit): Promise<void> {
    // What was announced before this step (the reply's streamed pieces) reaches the others before the step does.
    await this.announcing;
    const now = this.now();
    this.listener.ownChanges(await transaction(this.pool, (client) => writeStep(client, step, now)));
  }

  // ── sessions and requests ─────────────────────────────────────────────────────────────────────────────

  async session(key: string, newMainAgentSessionId: () => string): Promise<SessionRecord> {
    const found = await this.one(S.getSession, [key]);
    if (found) return rows.toSession(found);
    await this.changed(S.insertSession, [key, newMainAgentSessionId(), this.now()]);
    return rows.toSession((await this.one(S.getSession, [key]))!);
  }

  async findSession(key: string): Promise<SessionRecord | null> {
    return this.maybe(S.getSession, [key], rows.toSession);
  }

  async insertRequest(input: NewRequest): Promise<InsertResult> {
    const now = this.now();
    const announced: FeedEntry[] = [];
    const result = needsTransaction(input)
      ? await transaction(this.pool, (client) => insertRequestWith(client, input, now, announced))
      : await insertRequestWith(this.pool, input, now, announced);
    this.listener.ownChanges(announced);
    return result;
  }

  async idempotency(userId: string, key: string): Promise<IdempotencyRecord | null> {
    return this.maybe(S.idempotency, [userId, key], rows.toIdempotency);
  }

  async saveIdempotentResponse(userId: string, key: string, response: string): Promise<void> {
    await this.changed(S.saveIdempotent, [response, userId, key]);
  }

  async request(id: string): Promise<RequestRecord | null> {
    return this.maybe(S.requestById, [id], rows.toRequest);
  }

  async requests(sessionKey: string): Promise<RequestRecord[]> {
    return (await this.all(S.requestsOf, [sessionKey])).map(rows.toRequest);
  }

  async unfinishedRequests(): Promise<RequestRecord[]> {
    return (await this.all(S.unfinished)).map(rows.toRequest);
  }

  async unfinishedRequestsOf(sessionKey: string): Promise<RequestRecord[]> {
    return (await this.all(S.unfinishedOf, [sessionKey])).map(rows.toRequest);
  }

  async runningRequests(sessionKey: string): Promise<RequestRecord[]> {
    return (await this.all(S.runningFor, [sessionKey])).map(rows.toRequest);
  }

  // ── tasks, frames, the context log, usage ─────────────────────────────────────────────────────────────

  async task(id: string): Promise<TaskRecord | null> {
    return this.maybe(S.taskById, [id], (row) => this.quarantine.task(row));
  }

  async tasks(sessionKey: string): Promise<TaskRecord[]> {
    return Promise.all((await this.all(S.tasksOf, [sessionKey])).map((r) => this.quarantine.task(r)));
  }

  async activeTask(sessionKey: string): Promise<TaskRecord | null> {
    return this.maybe(S.activeTask, [sessionKey], (row) => this.quarantine.task(row));
  }

  async conversationOwner(sessionKey: string): Promise<string | null> {
    const owner = (await this.one(S.conversationOwner, [sessionKey]))?.owner;
    return owner === null || owner === undefined ? null : String(owner);
  }

  async activeTaskOf(keyPrefix: string, ownerId: string): Promise<TaskRecord | null> {
    return this.maybe(S.activeTaskOf, [ownerId, keyPrefix], (row) => this.quarantine.task(row));
  }

  async frames(sessionKey: string): Promise<FrameRecord[]> {
    return (await this.all(S.frames, [sessionKey])).map((r) => rows.toFrame(r, sessionKey));
  }

  async history(agentSessionId: string): Promise<LogEntry[]> {
    return (await this.all(S.history, [agentSessionId])).map(rows.toLogEntry);
  }

  async sessionLog(sessionKey: string): Promise<LogEntry[]> {
    return (await this.all(S.sessionLog, [sessionKey])).map(rows.toLogEntry);
  }

  async openAgentSessions(sessionKey: string): Promise<Array<{ agentSessionId: string; agentName: string }>> {
    return (await this.all(S.openAgentSessions, [sessionKey])).map((r) => rows.toOpenAgentSession(r, sessionKey));
  }

  async sessionUsage(sessionKey: string): Promise<SessionUsage> {
    return rows.toSessionUsage(await this.one(S.sessionUsage, [sessionKey]));
  }

  async taskUsage(taskId: string): Promise<Usage> {
    return rows.toTaskUsage((await this.one(S.taskUsage, [taskId]))!);
  }

  // ── the outbox, deliveries, indicators ────────────────────────────────────────────────────────────────

  async pendingOutbound(sessionKey?: string): Promise<OutboundRecord[]> {
    const found = sessionKey === undefined ? await this.all(S.pendingAll) : await this.all(S.pendingFor, [sessionKey]);
    return found.map(rows.toOutbound);
  }

  async outboundFor(requestId: string): Promise<OutboundRecord[]> {
    return (await this.all(S.outboundFor, [requestId])).map(rows.toOutbound);
  }

  async claimNextOutbound(sessionKey: string): Promise<OutboundRecord | null> {
    return this.maybe(S.claimNext, [sessionKey, this.now()], rows.toOutbound);
  }

  async markDelivered(outboundId: string): Promise<void> {
    await this.changed(S.markDelivered, [this.now(), outboundId]);
  }

  async markUndelivered(outboundId: string): Promise<void> {
    await this.changed(S.markUndelivered, [outboundId]);
  }

  async markUndeliverable(outboundId: string, reason: string): Promise<boolean> {
    return (await this.changed(S.markUndeliverable, [this.now(), reason, outboundId])) === 1;
  }

  async undeliverable(sessionKey: string): Promise<UndeliverableRecord[]> {
    return (await this.all(S.undeliverable, [sessionKey])).map(rows.toUndeliverable);
  }

  async deliveredChunks(outboundId: string): Promise<number[]> {
    return (await this.all(S.chunks, [outboundId])).map((r) => Number(r.chunk));
  }

  async recordChunk(outboundId: string, chunk: number, platformMessageId: string): Promise<void> {
    await this.changed(S.recordChunk, [outboundId, chunk, platformMessageId, this.now()]);
  }

  async saveIndicator(sessionKey: string, data: string): Promise<void> {
    await this.changed(S.saveIndicator, [sessionKey, data, this.now()]);
  }

  async deleteIndicator(sessionKey: string): Promise<void> {
    await this.changed(S.deleteIndicator, [sessionKey]);
  }

  async indicators(provider: string): Promise<Array<{ sessionKey: string; data: string }>> {
    return (await this.all(S.indicators, [provider])).map((r) => ({ sessionKey: String(r.session_key), data: String(r.data) }));
  }

  moveSession(from: string, to: string): Promise<{ moved: number } | { refused: string }> {
    return transaction(this.pool, (client) => moveSession(client, from, to));
  }

  // ── approvals and quarantine ──────────────────────────────────────────────────────────────────────────

  async approvalFor(call: ToolCallRef, scope: ApprovalScope): Promise<ApprovalRecord | null> {
    return this.quarantine.approval(await this.one(S.approvalByCall, [scope.sessionKey, scope.taskId, call.id, call.name, inputHash(call.input)]));
  }

  async approval(id: string): Promise<ApprovalRecord | null> {
    return this.quarantine.approval(await this.one(S.approvalById, [id]));
  }

  async pendingApprovals(sessionKey: string): Promise<ApprovalRecord[]> {
    return this.quarantine.approvals(await this.all(S.pendingApprovals, [sessionKey]));
  }

  async dueApprovals(now: number): Promise<ApprovalRecord[]> {
    return this.quarantine.approvals(await this.all(S.dueApprovals, [now]));
  }

  async decideApproval(id: string, status: Exclude<ApprovalStatus, "pending" | "quarantined">, decidedBy: string): Promise<boolean> {
    return (await this.changed(S.decideApproval, [status, decidedBy, this.now(), id])) === 1;
  }

  async decideApprovalAndResume(id: string, status: Exclude<ApprovalStatus, "pending" | "quarantined">, decidedBy: string, resume: NewRequest): Promise<boolean> {
    const now = this.now();
    const announced: FeedEntry[] = [];
    const decided = await transaction(this.pool, async (client) => {
      const decided = await client.query({ ...S.decideApproval, values: [status, decidedBy, now, id] });
      if (decided.rowCount !== 1) return false;
      await insertRequestWith(client, resume, now, announced);
      return true;
    });
    this.listener.ownChanges(announced);
    return decided;
  }

  quarantined(): Promise<QuarantineRecord[]> {
    return this.quarantine.list();
  }

  // ── leases ────────────────────────────────────────────────────────────────────────────────────────────

  acquireLease(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    return this.leases.acquire(key, holder, ttlMs);
  }

  renewLease(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    return this.leases.renew(key, holder, token, ttlMs);
  }

  releaseLease(key: string, holder: string, token: number): Promise<void> {
    return this.leases.release(key, holder, token);
  }

  lease(key: string): Promise<Lease | null> {
    return this.leases.get(key);
  }

  orphanedSessions(): Promise<string[]> {
    return this.leases.orphanedSessions();
  }

  // ── long-term memory and a user's data (memories.ts, user-data.ts) ──────────────────────────────────────

  memories(userId: string): Promise<MemoryRecord[]> {
    return this.memory.memories(userId);
  }

  searchMemories(userId: string, query: string, limit: number): Promise<MemoryRecord[]> {
    return this.memory.search(userId, query, limit);
  }

  saveMemories(userId: string, changes: MemoryChanges): Promise<void> {
    return this.memory.save(userId, changes);
  }

  deleteMemories(userId: string, ids?: string[]): Promise<number> {
    return this.memory.delete(userId, ids);
  }

  claimMemoryJob(holder: string, now: number, claimMs: number, maxAttempts: number): Promise<MemoryJob | null> {
    return this.memory.claimJob(holder, now, claimMs, maxAttempts);
  }

  finishMemoryJob(taskId: string, holder: string, changes: MemoryChanges | null): Promise<boolean> {
    return this.memory.finishJob(taskId, holder, changes);
  }

  retryMemoryJob(taskId: string, holder: string, error: string, retryAt: number): Promise<void> {
    return this.memory.retryJob(taskId, holder, error, retryAt);
  }

  pendingMemoryJobs(): Promise<Array<MemoryJob & { status: string; nextAt: number; error: string | null }>> {
    return this.memory.pendingJobs();
  }

  // ── operator queries (operations.ts) ──────────────────────────────────────────────────────────────────

  recentSessions(limit: number): Promise<SessionSummary[]> {
    return this.operations.recentSessions(limit);
  }

  sessionSummary(sessionKey: string): Promise<SessionSummary | null> {
    return this.operations.sessionSummary(sessionKey);
  }

  allPendingApprovals(): Promise<ApprovalRecord[]> {
    return this.operations.allPendingApprovals();
  }

  stuckWork(before: number, limit: number): Promise<StuckWork> {
    return this.operations.stuckWork(before, limit);
  }

  recentErrors(sessionKey: string, limit: number): Promise<SessionError[]> {
    return this.operations.recentErrors(sessionKey, limit);
  }

  operationalCounts(): Promise<OperationalCounts> {
    return this.operations.operationalCounts();
  }

  exportUser(userId: string): Promise<UserExport> {
    const now = this.now();
    return transaction(this.pool, (client) => exportUser(client, userId, now));
  }

  deleteUser(userId: string): Promise<Record<string, number>> {
    return transaction(this.pool, (client) => deleteUser(client, userId));
  }

  userFootprint(userId: string): Promise<UserFootprint> {
    return userFootprint(this.pool, userId);
  }

  // ── the change feed, health, shutdown ─────────────────────────────────────────────────────────────────

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
