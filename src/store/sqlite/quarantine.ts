// Rows that cannot be read back are set aside instead of failing every reader: an unreadable approval is taken
// out of play (status 'quarantined', so no sweep or click finds it again; its turn then asks anew), a task's
// unreadable structured output or metadata is dropped from it. Each is recorded once in the quarantine table and
// reported to the store's owner.
import { nullable, toApproval, toTask, type Row } from "../rows.js";
import type { ApprovalRecord, QuarantineRecord, TaskRecord } from "../store.js";
import type { Statements } from "./statements.js";

export class SqliteQuarantine {
  constructor(
    private readonly stmts: Statements,
    private readonly now: () => number,
    private readonly onQuarantine: ((record: QuarantineRecord) => void) | undefined,
  ) {}

  /** The readable approvals of `rows`; each unreadable one is quarantined and skipped. */
  approvals(rows: Row[]): ApprovalRecord[] {
    const read: ApprovalRecord[] = [];
    for (const row of rows) {
      try {
        read.push(toApproval(row));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        try {
          this.stmts.quarantineApproval.run(String(row.id));
        } catch {
          // cannot write now; the row stays skipped for this read
        }
        this.record("approval", String(row.id), nullable(row.session_key), `${reason}: ${String(row.input).slice(0, 2000)}`);
      }
    }
    return read;
  }

  /** One approval row (or none), read like approvals(). */
  approval(row: Row | undefined): ApprovalRecord | null {
    return row ? (this.approvals([row])[0] ?? null) : null;
  }

  /** A task whose structured output cannot be read keeps working without it; the value is quarantined. */
  task(r: Row): TaskRecord {
    const { task, unreadable } = toTask(r);
    if (unreadable) this.record("task", task.id, task.sessionKey, unreadable);
    return task;
  }

  /** Records an unreadable row once and tells the owner of the store (who logs it). */
  private record(kind: QuarantineRecord["kind"], rowId: string, sessionKey: string | null, reason: string): void {
    const createdAt = this.now();
    try {
      if (this.stmts.insertQuarantine.run(kind, rowId, sessionKey, reason, createdAt).changes === 1) {
        this.onQuarantine?.({ kind, rowId, sessionKey, reason, createdAt });
      }
    } catch {
      // The store cannot write (disk full): the row is skipped all the same; it is reported when it can be.
    }
  }
}
