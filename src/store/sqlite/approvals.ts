// Approvals on SQLite: reads go through the quarantine (an unreadable row is taken out of play); a decision is a
// compare-and-set, and with its resume one transaction.
import { inputHash } from "../input-hash.js";
import type { Row } from "../rows.js";
import type { ApprovalDecision, ApprovalRecord, ApprovalScope, ApprovalStore, NewRequest, ToolCallRef } from "../store.js";
import type { SqliteContext } from "./context.js";
import type { SqliteRequests } from "./requests.js";

export class SqliteApprovals implements ApprovalStore {
  constructor(
    private readonly ctx: SqliteContext,
    private readonly requests: SqliteRequests,
  ) {}

  async forCall(call: ToolCallRef, scope: ApprovalScope): Promise<ApprovalRecord | null> {
    return this.ctx.quarantine.approval(this.ctx.stmts.approvalByCall.get(scope.sessionKey, scope.taskId, call.id, call.name, inputHash(call.input)) as Row | undefined);
  }

  async get(id: string): Promise<ApprovalRecord | null> {
    return this.ctx.quarantine.approval(this.ctx.stmts.approvalById.get(id) as Row | undefined);
  }

  async pending(sessionKey: string): Promise<ApprovalRecord[]> {
    return this.ctx.quarantine.approvals(this.ctx.stmts.pendingApprovals.all(sessionKey) as Row[]);
  }

  async decide(id: string, status: ApprovalDecision, decidedBy: string): Promise<boolean> {
    return this.decideNow(id, status, decidedBy);
  }

  private decideNow(id: string, status: ApprovalDecision, decidedBy: string): boolean {
    return this.ctx.stmts.decideApproval.run(status, decidedBy, this.ctx.now(), id).changes === 1;
  }

  async decideAndResume(id: string, status: ApprovalDecision, decidedBy: string, resume: NewRequest): Promise<boolean> {
    const decided = this.ctx.db.transaction(() => {
      if (!this.decideNow(id, status, decidedBy)) return false;
      return this.requests.insertNow(resume).status === "inserted";
    })();
    if (decided) this.ctx.emit({ kind: "request", sessionKey: resume.sessionKey, requestId: resume.id });
    return decided;
  }

  async due(now: number): Promise<ApprovalRecord[]> {
    return this.ctx.quarantine.approvals(this.ctx.stmts.dueApprovals.all(now) as Row[]);
  }
}
