// The operator's queries on SQLite (what each returns: ../roles/operations.ts). Read-only, one prepared statement
// each (statements.ts); approval rows are read through the quarantine, like every other approval read.
import { toOperationalCounts, toOutbound, toQuarantine, toRequest, toSessionError, toSessionSummary, type Row } from "../rows.js";
import type { ApprovalRecord, OperationalCounts, OperationsStore, QuarantineRecord, SessionError, SessionSummary, StuckWork } from "../store.js";
import type { SqliteContext } from "./context.js";

/** A limit as SQL takes it: SQLite reads a negative LIMIT as "no limit". */
const bounded = (limit: number): number => Math.max(0, Math.floor(limit));

export class SqliteOperations implements OperationsStore {
  constructor(private readonly ctx: SqliteContext) {}

  async recentSessions(limit: number): Promise<SessionSummary[]> {
    return (this.ctx.stmts.recentSessions.all({ limit: bounded(limit) }) as Row[]).map(toSessionSummary);
  }

  async sessionSummary(sessionKey: string): Promise<SessionSummary | null> {
    const row = this.ctx.stmts.sessionSummary.get({ key: sessionKey }) as Row | undefined;
    return row ? toSessionSummary(row) : null;
  }

  async allPendingApprovals(): Promise<ApprovalRecord[]> {
    return this.ctx.quarantine.approvals(this.ctx.stmts.allPendingApprovals.all() as Row[]);
  }

  async stuckWork(before: number, limit: number): Promise<StuckWork> {
    const s = this.ctx.stmts;
    const n = bounded(limit);
    return {
      requests: (s.stuckRequests.all(before, n) as Row[]).map(toRequest),
      outbound: (s.stuckOutbound.all(before, n) as Row[]).map(toOutbound),
      approvals: this.ctx.quarantine.approvals(s.stuckApprovals.all(before, n) as Row[]),
    };
  }

  async recentErrors(sessionKey: string, limit: number): Promise<SessionError[]> {
    return (this.ctx.stmts.recentErrors.all({ key: sessionKey, limit: bounded(limit) }) as Row[]).map(toSessionError);
  }

  async operationalCounts(): Promise<OperationalCounts> {
    return toOperationalCounts(this.ctx.stmts.operationalCounts.get() as Row);
  }

  async quarantined(): Promise<QuarantineRecord[]> {
    return (this.ctx.stmts.quarantined.all() as Row[]).map(toQuarantine);
  }
}
