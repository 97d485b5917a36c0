// Approvals on PostgreSQL: reads go through the quarantine (an unreadable row is taken out of play); a decision is
// a compare-and-set, and with its resume one transaction.
import { inputHash } from "../input-hash.js";
import type { ApprovalDecision, ApprovalRecord, ApprovalScope, ApprovalStore, NewRequest, ToolCallRef } from "../store.js";
import type { FeedEntry } from "./changes.js";
import { transaction } from "./connection.js";
import type { PostgresContext } from "./context.js";
import { insertRequestWith } from "./requests.js";
import { S } from "./statements.js";

export class PostgresApprovals implements ApprovalStore {
  constructor(private readonly ctx: PostgresContext) {}

  async forCall(call: ToolCallRef, scope: ApprovalScope): Promise<ApprovalRecord | null> {
    return this.ctx.quarantine.approval(await this.ctx.one(S.approvalByCall, [scope.sessionKey, scope.taskId, call.id, call.name, inputHash(call.input)]));
  }

  async get(id: string): Promise<ApprovalRecord | null> {
    return this.ctx.quarantine.approval(await this.ctx.one(S.approvalById, [id]));
  }

  async pending(sessionKey: string): Promise<ApprovalRecord[]> {
    return this.ctx.quarantine.approvals(await this.ctx.all(S.pendingApprovals, [sessionKey]));
  }

  async due(now: number): Promise<ApprovalRecord[]> {
    return this.ctx.quarantine.approvals(await this.ctx.all(S.dueApprovals, [now]));
  }

  async decide(id: string, status: ApprovalDecision, decidedBy: string): Promise<boolean> {
    return (await this.ctx.changed(S.decideApproval, [status, decidedBy, this.ctx.now(), id])) === 1;
  }

  async decideAndResume(id: string, status: ApprovalDecision, decidedBy: string, resume: NewRequest): Promise<boolean> {
    const now = this.ctx.now();
    const announced: FeedEntry[] = [];
    const decided = await transaction(this.ctx.pool, async (client) => {
      const decided = await client.query({ ...S.decideApproval, values: [status, decidedBy, now, id] });
      if (decided.rowCount !== 1) return false;
      await insertRequestWith(client, resume, now, announced);
      return true;
    });
    this.ctx.feed.committed(announced);
    return decided;
  }
}
