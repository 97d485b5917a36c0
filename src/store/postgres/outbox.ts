// The delivery journal on PostgreSQL: a reply is claimed with FOR UPDATE SKIP LOCKED, so two replicas never send
// the same one.
import * as rows from "../rows.js";
import type { ClaimedOutbound, OutboundInput, OutboundRecord, OutboxStore, UndeliverableRecord } from "../store.js";
import { insertOutbound, stepChanges, writeChanges } from "./commit.js";
import { transaction } from "./connection.js";
import type { PostgresContext } from "./context.js";
import { S } from "./statements.js";

export class PostgresOutbox implements OutboxStore {
  constructor(private readonly ctx: PostgresContext) {}

  async enqueue(sessionKey: string, messages: OutboundInput[]): Promise<void> {
    // Announced after what was announced before it, like a step.
    await this.ctx.feed.settled();
    const now = this.ctx.now();
    const written = await transaction(this.ctx.pool, async (client) => {
      await insertOutbound(client, sessionKey, messages, now);
      return writeChanges(client, stepChanges(sessionKey, { outbound: messages }));
    });
    this.ctx.feed.committed(written);
  }

  async pending(sessionKey?: string): Promise<OutboundRecord[]> {
    const found = sessionKey === undefined ? await this.ctx.all(S.pendingAll) : await this.ctx.all(S.pendingFor, [sessionKey]);
    return found.map(rows.toOutbound);
  }

  async ofRequest(requestId: string): Promise<OutboundRecord[]> {
    return (await this.ctx.all(S.outboundFor, [requestId])).map(rows.toOutbound);
  }

  claimNext(sessionKey: string): Promise<ClaimedOutbound | null> {
    return this.ctx.maybe(S.claimNext, [sessionKey, this.ctx.now()], (row) => ({
      ...rows.toOutbound(row),
      sentChunks: (row.sent_chunks as unknown[]).map(Number),
      morePending: row.more_pending === true,
    }));
  }

  async markDelivered(outboundId: string): Promise<void> {
    await this.ctx.changed(S.markDelivered, [this.ctx.now(), outboundId]);
  }

  async markUndelivered(outboundId: string): Promise<void> {
    await this.ctx.changed(S.markUndelivered, [outboundId]);
  }

  async markUndeliverable(outboundId: string, reason: string): Promise<boolean> {
    return (await this.ctx.changed(S.markUndeliverable, [this.ctx.now(), reason, outboundId])) === 1;
  }

  async undeliverable(sessionKey: string): Promise<UndeliverableRecord[]> {
    return (await this.ctx.all(S.undeliverable, [sessionKey])).map(rows.toUndeliverable);
  }

  async deliveredChunks(outboundId: string): Promise<number[]> {
    return (await this.ctx.all(S.chunks, [outboundId])).map((r) => Number(r.chunk));
  }

  async recordChunk(outboundId: string, chunk: number, platformMessageId: string): Promise<void> {
    await this.ctx.changed(S.recordChunk, [outboundId, chunk, platformMessageId, this.ctx.now()]);
  }
}
