// The delivery journal on SQLite. Claims and delivery marks go through group commit, like steps.
import { toOutbound, toUndeliverable, type Row } from "../rows.js";
import type { ClaimedOutbound, OutboundInput, OutboundRecord, OutboxStore, UndeliverableRecord } from "../store.js";
import type { SqliteContext } from "./context.js";
import type { Statements } from "./statements.js";

/** Writes `messages` to the outbox of `sessionKey` (inside the caller's transaction). */
export function insertOutbound(s: Statements, sessionKey: string, messages: OutboundInput[], now: number): void {
  for (const o of messages) {
    s.insertOutbound.run(o.id, sessionKey, o.requestId, o.taskId, o.agent, o.depth, o.text, o.kind, o.approvalId ?? null, o.fileId ?? null, now);
  }
}

export class SqliteOutbox implements OutboxStore {
  constructor(private readonly ctx: SqliteContext) {}

  enqueue(sessionKey: string, messages: OutboundInput[]): Promise<void> {
    return this.ctx.writes.run(
      () => insertOutbound(this.ctx.stmts, sessionKey, messages, this.ctx.now()),
      () => messages.length > 0 && this.ctx.emit({ kind: "outbound", sessionKey, requestIds: messages.map((o) => o.requestId) }),
    );
  }

  async pending(sessionKey?: string): Promise<OutboundRecord[]> {
    const { stmts } = this.ctx;
    const rows = (sessionKey ? stmts.pendingFor.all(sessionKey) : stmts.pendingAll.all()) as Row[];
    return rows.map(toOutbound);
  }

  async ofRequest(requestId: string): Promise<OutboundRecord[]> {
    return (this.ctx.stmts.outboundFor.all(requestId) as Row[]).map(toOutbound);
  }

  async claimNext(sessionKey: string): Promise<ClaimedOutbound | null> {
    const { stmts } = this.ctx;
    // Nothing pending (the common case at the end of a pass) costs a read, not a write. The claim itself reads
    // again inside the group transaction: one process per file, so nothing interleaves within it.
    if (!stmts.nextPending.get(sessionKey)) return null;
    return this.ctx.writes.run(() => {
      const next = stmts.nextPending.get(sessionKey) as { seq: number } | undefined;
      const row = next ? (stmts.claim.get(this.ctx.now(), next.seq) as Row | undefined) : undefined;
      if (!row) return null;
      const sentChunks = (stmts.chunks.all(String(row.id)) as Row[]).map((r) => Number(r.chunk));
      // Always "maybe": telling costs the same in-process read as the claim that finds nothing, which says it too.
      return { ...toOutbound(row), sentChunks, morePending: true };
    });
  }

  async markDelivered(outboundId: string): Promise<void> {
    await this.ctx.writes.run(() => this.ctx.stmts.markDelivered.run(this.ctx.now(), outboundId));
  }

  async markUndelivered(outboundId: string): Promise<void> {
    await this.ctx.writes.run(() => this.ctx.stmts.markUndelivered.run(outboundId));
  }

  async markUndeliverable(outboundId: string, reason: string): Promise<boolean> {
    return this.ctx.stmts.markUndeliverable.run(this.ctx.now(), reason, outboundId).changes === 1;
  }

  async undeliverable(sessionKey: string): Promise<UndeliverableRecord[]> {
    return (this.ctx.stmts.undeliverable.all(sessionKey) as Row[]).map(toUndeliverable);
  }

  async deliveredChunks(outboundId: string): Promise<number[]> {
    return (this.ctx.stmts.chunks.all(outboundId) as Row[]).map((r) => Number(r.chunk));
  }

  async recordChunk(outboundId: string, chunk: number, platformMessageId: string): Promise<void> {
    await this.ctx.writes.run(() => this.ctx.stmts.recordChunk.run(outboundId, chunk, platformMessageId, this.ctx.now()));
  }
}
