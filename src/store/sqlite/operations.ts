// The operator's queries on SQLite (what each returns: ../operations.ts). Read-only, one prepared statement each
// (statements.ts); approval rows are read through the store, which quarantines the ones it cannot read.
import type { OperationalCounts, SessionError, SessionSummary, StuckWork } from "../operations.js";
import { toOperationalCounts, toOutbound, toRequest, toSessionError, toSessionSummary, type Row } from "../rows.js";
import type { ApprovalRecord } from "../store.js";
import type { Statements } from "./statements.js";

/** A limit as SQL takes it: SQLite reads a negative LIMIT as "no limit". */
const bounded = (limit: number): number => Math.max(0, Math.floor(limit));

export class SqliteOperations {
  constructor(
    private readonly stmts: Statements,
    private readonly readApprovals: (rows: Row[]) => ApprovalRecord[],
  ) {}

  recentSessions(limit: number): SessionSummary[] {
    return (this.stmts.recentSessions.all({ limit: bounded(limit) }) as Row[]).map(toSessionSummary);
  }

  sessionSummary(sessionKey: string): SessionSummary | null {
    const row = this.stmts.sessionSummary.get({ key: sessionKey }) as Row | undefined;
    return row ? toSessionSummary(row) : null;
  }

  allPendingApprovals(): ApprovalRecord[] {
    return this.readApprovals(this.stmts.allPendingApprovals.all() as Row[]);
  }

  stuckWork(before: number, limit: number): StuckWork {
    const s = this.stmts;
    const n = bounded(limit);
    return {
      requests: (s.stuckRequests.all(before, n) as Row[]).map(toRequest),
      outbound: (s.stuckOutbound.all(before, n) as Row[]).map(toOutbound),
      approvals: this.readApprovals(s.stuckApprovals.all(before, n) as Row[]),
    };
  }

  recentErrors(sessionKey: string, limit: number): SessionError[] {
    return (this.stmts.recentErrors.all({ key: sessionKey, limit: bounded(limit) }) as Row[]).map(toSessionError);
  }

  operationalCounts(): OperationalCounts {
    return toOperationalCounts(this.stmts.operationalCounts.get() as Row);
  }
}
