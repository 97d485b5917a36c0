// The operator's queries on PostgreSQL (what each returns: ../operations.ts). Read-only, one named statement each
// (operation-statements.ts) on the pool; approval rows go through the quarantine like every other approval read.
import type pg from "pg";
import { toOperationalCounts, toOutbound, toRequest, toSessionError, toSessionSummary, type Row } from "../rows.js";
import type { ApprovalRecord, OperationalCounts, OperationsStore, QuarantineRecord, SessionError, SessionSummary, StuckWork } from "../store.js";
import { O } from "./operation-statements.js";
import type { Quarantine } from "./quarantine.js";
import type { Sql } from "./statements.js";

/** A limit as SQL takes it (PostgreSQL refuses a negative LIMIT). */
const bounded = (limit: number): number => Math.max(0, Math.floor(limit));

export class PostgresOperations implements OperationsStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly quarantine: Quarantine,
  ) {}

  private async all(statement: Sql, values: unknown[] = []): Promise<Row[]> {
    return (await this.pool.query<Row>({ ...statement, values })).rows;
  }

  async recentSessions(limit: number): Promise<SessionSummary[]> {
    return (await this.all(O.recentSessions, [bounded(limit)])).map(toSessionSummary);
  }

  async sessionSummary(sessionKey: string): Promise<SessionSummary | null> {
    const [row] = await this.all(O.sessionSummary, [sessionKey]);
    return row ? toSessionSummary(row) : null;
  }

  async allPendingApprovals(): Promise<ApprovalRecord[]> {
    return this.quarantine.approvals(await this.all(O.allPendingApprovals));
  }

  async stuckWork(before: number, limit: number): Promise<StuckWork> {
    const values = [before, bounded(limit)];
    const [requests, outbound, approvals] = await Promise.all([this.all(O.stuckRequests, values), this.all(O.stuckOutbound, values), this.all(O.stuckApprovals, values)]);
    return { requests: requests.map(toRequest), outbound: outbound.map(toOutbound), approvals: await this.quarantine.approvals(approvals) };
  }

  async recentErrors(sessionKey: string, limit: number): Promise<SessionError[]> {
    return (await this.all(O.recentErrors, [sessionKey, bounded(limit)])).map(toSessionError);
  }

  async operationalCounts(): Promise<OperationalCounts> {
    return toOperationalCounts((await this.all(O.operationalCounts))[0]!);
  }

  quarantined(): Promise<QuarantineRecord[]> {
    return this.quarantine.list();
  }
}
