// Rows that cannot be read back are set aside instead of failing every reader (the same rules as the SQLite
// store): an unreadable approval is taken out of play, a task's unreadable structured output is dropped from
// it. Each is recorded once in the quarantine table, in one statement, and reported to the store's owner.
import type pg from "pg";
import type { ApprovalRecord, QuarantineRecord, TaskRecord } from "../store.js";
import { nullable, toApproval, toQuarantine, toTask, type Row } from "../rows.js";
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
    const { task, unreadable } = toTask(r);
    if (unreadable) await this.record("task", task.id, task.sessionKey, unreadable, false);
    return task;
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
