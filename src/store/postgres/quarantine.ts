// Rows that cannot be read back are set aside instead of failing every reader (the same rules as the SQLite
// store): an unreadable approval is taken out of play, a task's unreadable structured output is dropped from
// it. Each is recorded once in the quarantine table, in one statement, and reported to the store's owner.
import type pg from "pg";
import type { ApprovalRecord, QuarantineRecord, TaskRecord } from "../store.js";
import { nullable, toApproval, toQuarantine, type Row } from "./rows.js";
import { S } from "./statements.js";

export class Quarantine {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => number,
    private readonly onQuarantine: ((record: QuarantineRecord) => void) | undefined,
  ) {}

  /** The readable approvals of `found`; each unreadable one is quarantined (status 'quarantined') and skipped. */
  async approvals(found: Row[]): Promise<ApprovalRecord[]> {
    const read: ApprovalRecord[] = [];
    for (const row of found) {
      try {
        read.push(toApproval(row));
      } catch (error) {
        const reason = `${error instanceof Error ? error.message : String(error)}: ${String(row.input).slice(0, 2000)}`;
        await this.record("approval", String(row.id), nullable(row.session_key), reason, true);
      }
    }
    return read;
  }

  /** One approval row (or none), read like approvals(). */
  async approval(found: Row | null): Promise<ApprovalRecord | null> {
    return found ? ((await this.approvals([found]))[0] ?? null) : null;
  }

  /** A task whose structured output cannot be read keeps working without it; the value is quarantined. */
  async task(r: Row): Promise<TaskRecord> {
    let structuredOutput: unknown = null;
    if (r.structured_output !== null && r.structured_output !== undefined) {
      try {
        structuredOutput = JSON.parse(String(r.structured_output));
      } catch {
        const reason = `structured_output is not valid JSON: ${String(r.structured_output).slice(0, 2000)}`;
        await this.record("task", String(r.id), String(r.session_key), reason, false);
      }
    }
    return {
      id: String(r.id),
      sessionKey: String(r.session_key),
      ownerId: String(r.owner_id),
      status: String(r.status) as TaskRecord["status"],
      requestId: nullable(r.request_id),
      result: nullable(r.result),
      error: nullable(r.error),
      structuredOutput,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    };
  }

  async list(): Promise<QuarantineRecord[]> {
    return (await this.pool.query<Row>({ ...S.quarantined, values: [] })).rows.map(toQuarantine);
  }

  private async record(kind: QuarantineRecord["kind"], rowId: string, sessionKey: string | null, reason: string, approval: boolean): Promise<void> {
    const createdAt = this.now();
    try {
      const statement = approval ? S.quarantineApproval : S.insertQuarantine;
      const values = approval ? [rowId, sessionKey, reason, createdAt] : [kind, rowId, sessionKey, reason, createdAt];
      const { rowCount } = await this.pool.query({ ...statement, values });
      if (rowCount === 1) this.onQuarantine?.({ kind, rowId, sessionKey, reason, createdAt });
    } catch {
      // The database refuses writes right now: the row is skipped all the same and reported when it can be.
    }
  }
}
