import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { inputHash } from "../input-hash.js";
import {
  FencedError,
  type Lease,
  type MemoryChanges,
  type MemoryJob,
  type MemoryRecord,
  type StoreChange,
  type ApprovalRecord,
  type ApprovalScope,
  type ApprovalStatus,
  type FrameRecord,
  type IdempotencyRecord,
  type InsertResult,
  type LogEntry,
  type NewRequest,
  ownerAdmits,
  type OutboundRecord,
  type QuarantineRecord,
  type RequestRecord,
  type SessionRecord,
  type StepCommit,
  type Store,
  type TaskRecord,
  type ToolCallRef,
  type UndeliverableRecord,
  type Usage,
  type UserExport,
  type UserFootprint,
} from "../store.js";
import type { OperationalCounts, SessionError, SessionSummary, StuckWork } from "../operations.js";
import { migrate } from "./migrations.js";
import { GroupCommit, type GroupCommitHooks } from "./group-commit.js";
import { MemoryLeases } from "./memory-leases.js";
import { prepareStatements, type Statements } from "./statements.js";
import { ProcessLock } from "./process-lock.js";
import { SqliteMemories } from "./memories.js";
import { SqliteOperations } from "./operations.js";
import { userFootprint } from "./footprint.js";
import { deleteUser, exportUser } from "./user-data.js";
import { nullable, toApproval, toFrame, toTask, toIdempotency, toLease, toLogEntry, toOutbound, toQuarantine, toRequest, toSession, toSessionUsage, toTaskUsage, toUndeliverable, type Row } from "../rows.js";


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
 * The durable store: one SQLite file in WAL mode. Steps, inbound messages, delivery marks and leases go through
 * group commit (one transaction for all the writes that become ready together, each in its own savepoint; see GroupCommit);
 * reads answer synchronously underneath, and the change feed is this process's own.
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly stmts: Statements;
  private readonly watchers = new Set<(change: StoreChange) => void>();
  private readonly processLock: ProcessLock | null;
  private readonly memory: SqliteMemories;
  private readonly operations: SqliteOperations;
  private readonly writes: GroupCommit;
  /** With the process lock, leases live in memory (MemoryLeases); else in the leases table. */
  private readonly memoryLeases: MemoryLeases | null;

  constructor(
    file: string,
    private readonly now: () => number = Date.now,
    private readonly options: SqliteStoreOptions = {},
  ) {
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
    this.stmts = prepareStatements(this.db);
    this.writes = new GroupCommit(this.db, options.groupCommit);
    this.memoryLeases = options.exclusive ? new MemoryLeases() : null;
    this.memory = new SqliteMemories(this.db, this.stmts, now);
    this.operations = new SqliteOperations(this.stmts, (rows) => this.readApprovals(rows));
    // With the process lock held, every lease and every memory job claim in the file belongs to a process that is
    // gone: a restart resumes its sessions, and the extractions it was running, at once instead of waiting for them
    // to run out (the cut-off run still counts as an attempt).
    if (this.processLock) {
      this.stmts.expireLeases.run();
      this.stmts.expireMemoryClaims.run();
    }
  }

  commit(step: StepCommit): Promise<void> {
    return this.writes.run(() => this.commitNow(step), () => this.announceStep(step));
  }

  private commitNow(step: StepCommit): void {
    const s = this.stmts;
    const now = this.now();
    const key = step.sessionKey;
    {
      if (step.fence) {
        const current = this.leaseNow(key)?.token ?? null;
        if (current !== step.fence.token) throw new FencedError(key, step.fence.token, current);
      }
      if (step.taskCreated) {
        const t = step.taskCreated;
        s.insertTask.run(t.id, key, t.ownerId, t.requestId, t.options?.expiresAt ?? null, t.options?.metadataJson ?? null, now, now);
      }
      for (const e of step.log ?? []) {
        s.insertLog.run(key, e.taskId, e.requestId, e.frameId, e.agentSessionId, e.type, JSON.stringify(e.payload), now);
      }
      // Push before pop: a frame pushed and popped in the same step (main answering at once) nets to nothing.
      for (const frame of step.framesPushed ?? []) {
        const top = (s.maxPosition.get(key) as { p: number }).p;
        s.insertFrame.run(frame.frameId, key, top + 1, JSON.stringify(frame));
      }
      for (const frame of step.framesUpdated ?? []) s.updateFrame.run(JSON.stringify(frame), frame.frameId);
      for (const frameId of step.framesPopped ?? []) s.deleteFrame.run(frameId);
      if (step.task) {
        const t = step.task;
        const structured = t.structuredOutput === undefined ? null : JSON.stringify(t.structuredOutput);
        s.updateTask.run(t.status, t.result ?? null, t.error ?? null, structured, now, t.id);
      }
      if (step.request) {
        const r = step.request;
        s.updateRequest.run(r.status, r.taskId ?? null, r.error ?? null, now, r.id);
      }
      for (const r of step.requestsClosed ?? []) s.updateRequest.run(r.status, r.taskId ?? null, r.error ?? null, now, r.id);
      if (step.usage) {
        const u = step.usage;
        s.addUsage.run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, u.costNanoUsd, u.requestId);
        const total = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
        s.addSessionUsage.run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, total, u.costNanoUsd, u.costNanoUsd, key);
      }
      for (const o of step.outbound ?? []) {
        s.insertOutbound.run(o.id, key, o.requestId, o.taskId, o.agent, o.depth, o.text, o.kind, o.approvalId ?? null, now);
      }
      if (step.newMainAgentSessionId) s.setMainSession.run(step.newMainAgentSessionId, now, key);
      for (const a of step.approvalsCreated ?? []) {
        s.insertApproval.run(a.id, key, a.taskId, a.requestId, a.frameId, a.toolUseId, a.toolName, JSON.stringify(a.input), inputHash(a.input), a.agent, a.ownerId, now, now + a.timeoutMs);
      }
      if (step.framesQuarantined) {
        for (const row of s.frameRows.all(key) as Row[]) {
          s.insertQuarantine.run("frame", String(row.frame_id), key, `${step.framesQuarantined.reason}: ${String(row.data).slice(0, 2000)}`, now);
        }
        s.deleteFrames.run(key);
      }
      if (step.memoryJob) this.memory.queueJob(key, step.memoryJob, now);
    }
  }

  private announceStep(step: StepCommit): void {
    const key = step.sessionKey;
    for (const r of [...(step.request ? [step.request] : []), ...(step.requestsClosed ?? [])]) {
      if (r.status === "done" || r.status === "failed") this.emit({ kind: "done", sessionKey: key, requestId: r.id });
    }
    if (step.outbound?.length) this.emit({ kind: "outbound", sessionKey: key, requestIds: step.outbound.map((o) => o.requestId) });
  }

  async session(key: string, newMainAgentSessionId: () => string): Promise<SessionRecord> {
    let row = this.stmts.getSession.get(key) as Row | undefined;
    if (!row) {
      const now = this.now();
      this.stmts.insertSession.run(key, newMainAgentSessionId(), now, now);
      row = this.stmts.getSession.get(key) as Row;
    }
    return toSession(row);
  }

  async findSession(key: string): Promise<SessionRecord | null> {
    const row = this.stmts.getSession.get(key) as Row | undefined;
    return row ? toSession(row) : null;
  }

  insertRequest(input: NewRequest): Promise<InsertResult> {
    return this.writes.run(
      () => this.insertRequestNow(input),
      (result) => result.status === "inserted" && this.emit({ kind: "request", sessionKey: input.sessionKey, requestId: input.id }),
    );
  }

  private insertRequestNow(input: NewRequest): InsertResult {
    {
      const s = this.stmts;
      const now = this.now();
      if (input.idempotency) {
        const seen = s.idempotency.get(input.userId, input.idempotency.key) as Row | undefined;
        if (seen) return { status: "duplicate", request: toRequest(s.requestById.get(String(seen.request_id)) as Row) };
      }
      if (input.claimSession) {
        if (!s.getSession.get(input.sessionKey)) s.insertSession.run(input.sessionKey, input.claimSession.mainAgentSessionId, now, now);
        s.claimSession.run(input.userId, input.sessionKey);
        const owner = String((s.getSession.get(input.sessionKey) as Row).owner_id);
        if (owner !== input.userId) return { status: "forbidden", ownerId: owner };
      }
      if (input.owner && !s.requestByExternal.get(input.sessionKey, input.externalId)) {
        const owner = this.ownerNow(input.sessionKey);
        if (!ownerAdmits(input.owner, owner, input.userId)) return { status: "busy", ownerId: owner };
      }
      const options = input.taskOptions;
      const info = s.insertRequest.run(input.id, input.sessionKey, input.externalId, input.kind, input.userId, input.text, options?.expiresAt ?? null, options?.metadataJson ?? null, now, now);
      if (info.changes === 0) {
        return { status: "duplicate", request: toRequest(s.requestByExternal.get(input.sessionKey, input.externalId) as Row) };
      }
      if (input.idempotency) {
        s.insertIdempotency.run(input.userId, input.idempotency.key, input.id, input.sessionKey, input.idempotency.fingerprint, now);
      }
      const { claimSession: _claim, idempotency: _key, taskOptions: _options, owner: _owner, ...fields } = input;
      const request: RequestRecord = {
        ...fields,
        taskOptions: options && (options.expiresAt !== null || options.metadataJson !== null) ? options : null,
        status: "pending",
        taskId: null,
        error: null,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: 0,
        createdAt: now,
        updatedAt: now,
      };
      return { status: "inserted", request };
    }
  }

  async idempotency(userId: string, key: string): Promise<IdempotencyRecord | null> {
    const r = this.stmts.idempotency.get(userId, key) as Row | undefined;
    return r ? toIdempotency(r) : null;
  }

  async saveIdempotentResponse(userId: string, key: string, response: string): Promise<void> {
    this.stmts.saveIdempotent.run(response, userId, key);
  }

  async request(id: string): Promise<RequestRecord | null> {
    const row = this.stmts.requestById.get(id) as Row | undefined;
    return row ? toRequest(row) : null;
  }

  async requests(sessionKey: string): Promise<RequestRecord[]> {
    return (this.stmts.requestsOf.all(sessionKey) as Row[]).map(toRequest);
  }

  async unfinishedRequests(): Promise<RequestRecord[]> {
    return (this.stmts.unfinished.all() as Row[]).map(toRequest);
  }

  async unfinishedRequestsOf(sessionKey: string): Promise<RequestRecord[]> {
    return (this.stmts.unfinishedOf.all(sessionKey) as Row[]).map(toRequest);
  }

  async task(id: string): Promise<TaskRecord | null> {
    const row = this.stmts.taskById.get(id) as Row | undefined;
    return row ? this.toTask(row) : null;
  }

  async tasks(sessionKey: string): Promise<TaskRecord[]> {
    return (this.stmts.tasksOf.all(sessionKey) as Row[]).map((r) => this.toTask(r));
  }

  async activeTask(sessionKey: string): Promise<TaskRecord | null> {
    const row = this.stmts.activeTask.get(sessionKey) as Row | undefined;
    return row ? this.toTask(row) : null;
  }

  async conversationOwner(sessionKey: string): Promise<string | null> {
    return this.ownerNow(sessionKey);
  }

  private ownerNow(sessionKey: string): string | null {
    const owner = (this.stmts.conversationOwner.get(sessionKey, sessionKey) as Row).owner;
    return owner === null || owner === undefined ? null : String(owner);
  }

  async activeTaskOf(keyPrefix: string, ownerId: string): Promise<TaskRecord | null> {
    const row = this.stmts.activeTaskOf.get(ownerId, keyPrefix, keyPrefix, keyPrefix) as Row | undefined;
    return row ? this.toTask(row) : null;
  }

  /** A task whose structured output cannot be read keeps working without it; the value is quarantined. */
  private toTask(r: Row): TaskRecord {
    const { task, unreadable } = toTask(r);
    if (unreadable) this.quarantine("task", task.id, task.sessionKey, unreadable);
    return task;
  }

  /** Records an unreadable row once and tells the owner of the store (who logs it). */
  private quarantine(kind: QuarantineRecord["kind"], rowId: string, sessionKey: string | null, reason: string): void {
    const createdAt = this.now();
    try {
      if (this.stmts.insertQuarantine.run(kind, rowId, sessionKey, reason, createdAt).changes === 1) {
        this.options.onQuarantine?.({ kind, rowId, sessionKey, reason, createdAt });
      }
    } catch {
      // The store cannot write (disk full): the row is skipped all the same; it is reported when it can be.
    }
  }

  async quarantined(): Promise<QuarantineRecord[]> {
    return (this.stmts.quarantined.all() as Row[]).map(toQuarantine);
  }

  async frames(sessionKey: string): Promise<FrameRecord[]> {
    return (this.stmts.frames.all(sessionKey) as Row[]).map((row) => toFrame(row, sessionKey));
  }

  async history(agentSessionId: string): Promise<LogEntry[]> {
    return (this.stmts.history.all(agentSessionId) as Row[]).map(toLogEntry);
  }

  async sessionLog(sessionKey: string): Promise<LogEntry[]> {
    return (this.stmts.sessionLog.all(sessionKey) as Row[]).map(toLogEntry);
  }

  async sessionUsage(sessionKey: string) {
    return toSessionUsage((this.stmts.sessionUsage.get(sessionKey) as Row | undefined) ?? null);
  }

  async taskUsage(taskId: string): Promise<Usage> {
    return toTaskUsage(this.stmts.taskUsage.get(taskId) as Row);
  }

  async openAgentSessions(sessionKey: string): Promise<Array<{ agentSessionId: string; agentName: string }>> {
    return (this.stmts.openAgentSessions.all(sessionKey) as Row[]).map((r) => ({ agentSessionId: String(r.id), agentName: String(r.name) }));
  }

  async pendingOutbound(sessionKey?: string): Promise<OutboundRecord[]> {
    const rows = (sessionKey ? this.stmts.pendingFor.all(sessionKey) : this.stmts.pendingAll.all()) as Row[];
    return rows.map(toOutbound);
  }

  async outboundFor(requestId: string): Promise<OutboundRecord[]> {
    return (this.stmts.outboundFor.all(requestId) as Row[]).map(toOutbound);
  }

  async markDelivered(outboundId: string): Promise<void> {
    await this.writes.run(() => this.stmts.markDelivered.run(this.now(), outboundId));
  }

  async markUndelivered(outboundId: string): Promise<void> {
    await this.writes.run(() => this.stmts.markUndelivered.run(outboundId));
  }

  async markUndeliverable(outboundId: string, reason: string): Promise<boolean> {
    return this.stmts.markUndeliverable.run(this.now(), reason, outboundId).changes === 1;
  }

  async undeliverable(sessionKey: string): Promise<UndeliverableRecord[]> {
    return (this.stmts.undeliverable.all(sessionKey) as Row[]).map(toUndeliverable);
  }

  async moveSession(from: string, to: string): Promise<{ moved: number } | { refused: string }> {
    return this.db.transaction((): { moved: number } | { refused: string } => {
      const under = (column: string) => `(${column} = @from OR substr(${column}, 1, length(@from) + 1) = @from || ':')`;
      const renamed = (column: string) => `@to || substr(${column}, length(@from) + 1)`;
      const keys = this.db.prepare(`SELECT key FROM sessions WHERE ${under("key")}`).all({ from }) as Array<{ key: string }>;
      for (const { key } of keys) {
        const target = to + key.slice(from.length);
        if (!this.stmts.getSession.get(target)) continue;
        // The new chat already has a session of its own (a message got there first): fine while it holds no work.
        if (this.stmts.activeTask.get(target) || (this.stmts.frames.all(target) as Row[]).length > 0) {
          return { refused: `${target} already has a conversation under way` };
        }
        this.db.prepare(`DELETE FROM sessions WHERE key = ?`).run(target);
        this.stmts.deleteIndicator.run(target);
      }
      // A request of the new key's idle conversation may share an external id with one moving in (ids unique per
      // chat only): the moving one keeps its identity under a prefixed id, so both stay and neither is lost.
      this.db
        .prepare(
          `UPDATE requests SET external_id = 'moved:' || session_key || ':' || external_id WHERE ${under("session_key")}
           AND EXISTS (SELECT 1 FROM requests b WHERE b.session_key = ${renamed("requests.session_key")} AND b.external_id = requests.external_id)`,
        )
        .run({ from, to });
      for (const table of ["tasks", "requests", "frames", "context_log", "outbox", "approvals", "idempotency_keys", "quarantine", "indicators", "memory_jobs"]) {
        this.db.prepare(`UPDATE ${table} SET session_key = ${renamed("session_key")} WHERE ${under("session_key")}`).run({ from, to });
      }
      this.db.prepare(`UPDATE sessions SET key = ${renamed("key")} WHERE ${under("key")}`).run({ from, to });
      return { moved: keys.length };
    })();
  }

  async saveIndicator(sessionKey: string, data: string): Promise<void> {
    this.stmts.saveIndicator.run(sessionKey, data, this.now());
  }

  async deleteIndicator(sessionKey: string): Promise<void> {
    this.stmts.deleteIndicator.run(sessionKey);
  }

  async indicators(provider: string): Promise<Array<{ sessionKey: string; data: string }>> {
    return (this.stmts.indicators.all(provider, provider) as Row[]).map((r) => ({ sessionKey: String(r.session_key), data: String(r.data) }));
  }

  async runningRequests(sessionKey: string): Promise<RequestRecord[]> {
    return (this.stmts.runningFor.all(sessionKey) as Row[]).map(toRequest);
  }

  async deliveredChunks(outboundId: string): Promise<number[]> {
    return (this.stmts.chunks.all(outboundId) as Row[]).map((r) => Number(r.chunk));
  }

  async recordChunk(outboundId: string, chunk: number, platformMessageId: string): Promise<void> {
    await this.writes.run(() => this.stmts.recordChunk.run(outboundId, chunk, platformMessageId, this.now()));
  }

  async approvalFor(call: ToolCallRef, scope: ApprovalScope): Promise<ApprovalRecord | null> {
    const row = this.stmts.approvalByCall.get(scope.sessionKey, scope.taskId, call.id, call.name, inputHash(call.input)) as Row | undefined;
    return row ? this.readApprovals([row])[0] ?? null : null;
  }

  async approval(id: string): Promise<ApprovalRecord | null> {
    const row = this.stmts.approvalById.get(id) as Row | undefined;
    return row ? this.readApprovals([row])[0] ?? null : null;
  }

  async pendingApprovals(sessionKey: string): Promise<ApprovalRecord[]> {
    return this.readApprovals(this.stmts.pendingApprovals.all(sessionKey) as Row[]);
  }

  /**
   * An approval row that cannot be read is taken out of play (status 'quarantined', so no sweep or click
   * finds it again) instead of failing every reader: its turn then asks for a new approval.
   */
  private readApprovals(rows: Row[]): ApprovalRecord[] {
    const read: ApprovalRecord[] = [];
    for (const row of rows) {
      try {
        read.push(toApproval(row));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        try {
          this.stmts.quarantineApproval.run(String(row.id));
        } catch {
          // cannot write now; the row stays skipped for this read
        }
        this.quarantine("approval", String(row.id), nullable(row.session_key), `${reason}: ${String(row.input).slice(0, 2000)}`);
      }
    }
    return read;
  }

  async decideApproval(id: string, status: Exclude<ApprovalStatus, "pending" | "quarantined">, decidedBy: string): Promise<boolean> {
    return this.decideNow(id, status, decidedBy);
  }

  private decideNow(id: string, status: Exclude<ApprovalStatus, "pending" | "quarantined">, decidedBy: string): boolean {
    return this.stmts.decideApproval.run(status, decidedBy, this.now(), id).changes === 1;
  }

  async decideApprovalAndResume(id: string, status: Exclude<ApprovalStatus, "pending" | "quarantined">, decidedBy: string, resume: NewRequest): Promise<boolean> {
    const decided = this.db.transaction(() => {
      if (!this.decideNow(id, status, decidedBy)) return false;
      return this.insertRequestNow(resume).status === "inserted";
    })();
    if (decided) this.emit({ kind: "request", sessionKey: resume.sessionKey, requestId: resume.id });
    return decided;
  }

  async dueApprovals(now: number): Promise<ApprovalRecord[]> {
    return this.readApprovals(this.stmts.dueApprovals.all(now) as Row[]);
  }

  async claimNextOutbound(sessionKey: string): Promise<OutboundRecord | null> {
    // Nothing pending (the common case at the end of a pass) costs a read, not a write. The claim itself reads
    // again inside the group transaction: one process per file, so nothing interleaves within it.
    if (!this.stmts.nextPending.get(sessionKey)) return null;
    return this.writes.run(() => {
      const next = this.stmts.nextPending.get(sessionKey) as { seq: number } | undefined;
      const row = next ? (this.stmts.claim.get(this.now(), next.seq) as Row | undefined) : undefined;
      return row ? toOutbound(row) : null;
    });
  }

  /** The lease on `key` as it stands (in memory when the file is this process's, else in the leases table). */
  private leaseNow(key: string): Lease | null {
    if (this.memoryLeases) return this.memoryLeases.get(key);
    const row = this.stmts.lease.get(key) as Row | undefined;
    return row ? toLease(row) : null;
  }

  acquireLease(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    if (this.memoryLeases) return Promise.resolve(this.memoryLeases.acquire(key, holder, ttlMs, this.now()));
    return this.writes.run(() => {
      const now = this.now();
      const row = this.stmts.acquireLease.get({ key, holder, expires: now + ttlMs, now }) as Row | undefined;
      return row ? toLease(row) : null;
    });
  }

  async renewLease(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    if (this.memoryLeases) return this.memoryLeases.renew(key, holder, token, this.now() + ttlMs);
    return this.stmts.renewLease.run(this.now() + ttlMs, key, holder, token).changes === 1;
  }

  async releaseLease(key: string, holder: string, token: number): Promise<void> {
    if (this.memoryLeases) return this.memoryLeases.release(key, holder, token);
    await this.writes.run(() => this.stmts.releaseLease.run(key, holder, token));
  }

  async lease(key: string): Promise<Lease | null> {
    return this.leaseNow(key);
  }


  /** Sessions with work (unfinished requests, replies not yet sent) whose lease nobody holds now. */
  async orphanedSessions(): Promise<string[]> {
    const now = this.now();
    return (this.stmts.withWork.all() as Row[]).map((r) => String(r.key)).filter((key) => (this.leaseNow(key)?.expiresAt ?? 0) <= now);
  }


  // ── long-term memory and a user's data (memories.ts, user-data.ts) ──

  async memories(userId: string): Promise<MemoryRecord[]> {
    return this.memory.memories(userId);
  }

  async searchMemories(userId: string, query: string, limit: number): Promise<MemoryRecord[]> {
    return this.memory.search(userId, query, limit);
  }

  async saveMemories(userId: string, changes: MemoryChanges): Promise<void> {
    this.memory.save(userId, changes);
  }

  async deleteMemories(userId: string, ids?: string[]): Promise<number> {
    return this.memory.delete(userId, ids);
  }

  async claimMemoryJob(holder: string, now: number, claimMs: number, maxAttempts: number): Promise<MemoryJob | null> {
    return this.memory.claimJob(holder, now, claimMs, maxAttempts);
  }

  async finishMemoryJob(taskId: string, holder: string, changes: MemoryChanges | null): Promise<boolean> {
    return this.memory.finishJob(taskId, holder, changes);
  }

  async retryMemoryJob(taskId: string, holder: string, error: string, retryAt: number): Promise<void> {
    this.memory.retryJob(taskId, holder, error, retryAt);
  }

  async pendingMemoryJobs(): Promise<Array<MemoryJob & { status: string; nextAt: number; error: string | null }>> {
    return this.memory.pendingJobs();
  }

  // ── operator queries (operations.ts) ──

  async recentSessions(limit: number): Promise<SessionSummary[]> {
    return this.operations.recentSessions(limit);
  }

  async sessionSummary(sessionKey: string): Promise<SessionSummary | null> {
    return this.operations.sessionSummary(sessionKey);
  }

  async allPendingApprovals(): Promise<ApprovalRecord[]> {
    return this.operations.allPendingApprovals();
  }

  async stuckWork(before: number, limit: number): Promise<StuckWork> {
    return this.operations.stuckWork(before, limit);
  }

  async recentErrors(sessionKey: string, limit: number): Promise<SessionError[]> {
    return this.operations.recentErrors(sessionKey, limit);
  }

  async operationalCounts(): Promise<OperationalCounts> {
    return this.operations.operationalCounts();
  }

  async exportUser(userId: string): Promise<UserExport> {
    return exportUser(this.db, userId, this.now());
  }

  async deleteUser(userId: string): Promise<Record<string, number>> {
    return deleteUser(this.db, userId);
  }

  async userFootprint(userId: string): Promise<UserFootprint> {
    return userFootprint(this.db, userId);
  }

  watch(listener: (change: StoreChange) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  async announce(change: StoreChange): Promise<void> {
    this.emit(change);
  }

  async ping(): Promise<void> {
    this.stmts.getSession.get("@ping");
  }

  /** Tells this process's watchers, after the change committed; a failing watcher never fails the store. */
  private emit(change: StoreChange): void {
    for (const listener of this.watchers) {
      try {
        listener(change);
      } catch {
        // a watcher's own failure is its business
      }
    }
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
    this.watchers.clear();
  }
}
