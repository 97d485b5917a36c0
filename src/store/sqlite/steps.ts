// The journal of turns on SQLite: a step is written through group commit (one transaction for the writes that
// become ready together, each in its own savepoint), its fence checked inside that transaction.
import { inputHash } from "../input-hash.js";
import { toFrame, toLogEntry, type Row } from "../rows.js";
import { FencedError, requestChanges, type Fence, type FrameRecord, type Lease, type LogEntry, type SessionWriter, type StepCommit, type StepStore } from "../store.js";
import type { SqliteContext } from "./context.js";
import type { SqliteMemories } from "./memories.js";
import { insertFilesNow } from "./files.js";
import { insertOutbound } from "./outbox.js";

export class SqliteSteps implements StepStore {
  constructor(
    private readonly ctx: SqliteContext,
    private readonly memories: SqliteMemories,
  ) {}

  writer(lease: Lease): SessionWriter {
    const sessionKey = lease.key;
    const fence: Fence = { holder: lease.holder, token: lease.token };
    return { sessionKey, fence, commit: (step) => this.commit(sessionKey, fence, step) };
  }

  private commit(key: string, fence: Fence, step: StepCommit): Promise<void> {
    return this.ctx.writes.run(
      () => this.write(key, fence, step),
      () => this.announce(key, step),
    );
  }

  private write(key: string, fence: Fence, step: StepCommit): void {
    const { stmts: s, leases } = this.ctx;
    const now = this.ctx.now();
    const current = leases.current(key)?.token ?? null;
    if (current !== fence.token) throw new FencedError(key, fence.token, current);
    if (step.taskCreated) {
      const t = step.taskCreated;
      s.insertTask.run(t.id, key, t.ownerId, t.requestId, t.options?.expiresAt ?? null, t.options?.metadataJson ?? null, now, now);
    }
    for (const e of step.log ?? []) {
      s.insertLog.run(key, e.taskId, e.requestId, e.frameId, e.agentSessionId, e.type, JSON.stringify(e.payload), now);
    }
    // Push before pop: a frame pushed and popped in the same step (main answering at once) nets to nothing.
    for (const frame of step.framesPushed ?? []) {
      if (s.pushFrame.run({ frame: frame.frameId, key, data: JSON.stringify(frame) }).changes === 0) {
        throw new Error(`frame ${frame.frameId} is already on the stack of ${key}: a step pushes a new frame id`);
      }
    }
    for (const frame of step.framesUpdated ?? []) s.updateFrame.run(JSON.stringify(frame), key, frame.frameId);
    for (const frameId of step.framesPopped ?? []) s.deleteFrame.run(key, frameId);
    if (step.task) {
      const t = step.task;
      const structured = t.structuredOutput === undefined ? null : JSON.stringify(t.structuredOutput);
      s.updateTask.run(t.status, t.result ?? null, t.error ?? null, structured, now, t.id);
    }
    for (const r of requestChanges(step)) {
      const failed = r.status === "failed" ? r : null;
      s.updateRequest.run(r.status, r.taskId ?? null, failed?.error ?? null, failed?.errorCode ?? null, now, r.id);
    }
    if (step.usage) {
      const u = step.usage;
      s.addUsage.run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, u.costNanoUsd, u.requestId);
      const total = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
      s.addSessionUsage.run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, total, u.costNanoUsd, u.costNanoUsd, key);
    }
    for (const file of step.files ?? []) insertFilesNow(s, key, null, file.ownerId, [file], now);
    if (step.outbound) insertOutbound(s, key, step.outbound, now);
    if (step.newMainAgentSessionId) s.setMainSession.run(step.newMainAgentSessionId, now, key);
    for (const a of step.approvalsCreated ?? []) {
      s.insertApproval.run(
        a.id,
        key,
        a.taskId,
        a.requestId,
        a.frameId,
        a.toolUseId,
        a.toolName,
        JSON.stringify(a.input),
        inputHash(a.input),
        a.agent,
        a.ownerId,
        now,
        now + a.timeoutMs,
      );
    }
    if (step.framesQuarantined) {
      for (const row of s.frameRows.all(key) as Row[]) {
        s.insertQuarantine.run("frame", String(row.frame_id), key, `${step.framesQuarantined.reason}: ${String(row.data).slice(0, 2000)}`, now);
      }
      s.deleteFrames.run(key);
    }
    if (step.memoryJob) this.memories.queueJob(key, step.memoryJob, now);
  }

  private announce(sessionKey: string, step: StepCommit): void {
    for (const r of [...(step.request ? [step.request] : []), ...(step.requestsClosed ?? [])]) {
      if (r.status === "done" || r.status === "failed") this.ctx.emit({ kind: "done", sessionKey, requestId: r.id });
    }
    if (step.outbound?.length) this.ctx.emit({ kind: "outbound", sessionKey, requestIds: step.outbound.map((o) => o.requestId) });
  }

  async frames(sessionKey: string): Promise<FrameRecord[]> {
    return (this.ctx.stmts.frames.all(sessionKey) as Row[]).map((row) => toFrame(row, sessionKey));
  }

  async history(sessionKey: string, agentSessionId: string): Promise<LogEntry[]> {
    return (this.ctx.stmts.history.all(sessionKey, agentSessionId) as Row[]).map(toLogEntry);
  }

  async log(sessionKey: string): Promise<LogEntry[]> {
    return (this.ctx.stmts.sessionLog.all(sessionKey) as Row[]).map(toLogEntry);
  }

  async openAgentSessions(sessionKey: string): Promise<Array<{ agentSessionId: string; agentName: string }>> {
    return (this.ctx.stmts.openAgentSessions.all(sessionKey) as Row[]).map((r) => ({ agentSessionId: String(r.id), agentName: String(r.name) }));
  }
}
