// Scheduled jobs and users' time zones on SQLite. One connection: a count and an insert in one transaction are
// atomic, and a compare-and-set UPDATE decides which caller moves a job on.
import type Database from "better-sqlite3";
import type { Row } from "../rows.js";
import { jobValues, readJobs, toScheduleJob } from "../schedule-rows.js";
import type { AdvanceNotice, NewScheduleJob, ScheduleJobRecord, ScheduleStore } from "../store.js";
import type { SqliteContext } from "./context.js";
import { insertOutbound } from "./outbox.js";
import { preparedOnUse } from "./prepared-on-use.js";

const COLUMNS = "id, owner_id, session_key, instruction, schedule, timezone, next_due, created_by_task, created_at, traceparent";

export class SqliteSchedules implements ScheduleStore {
  private readonly s;
  private readonly db: Database.Database;
  private readonly now: () => number;

  constructor(
    private readonly ctx: SqliteContext,
    private readonly onCorrupt: (message: string) => void = () => {},
  ) {
    const db = (this.db = ctx.db);
    this.now = ctx.now;
    this.s = preparedOnUse(db, (db) => ({
      held: db.prepare(`SELECT count(*) AS n FROM schedule_jobs WHERE owner_id = ? AND status IN ('active', 'paused')`),
      insert: db.prepare(`INSERT INTO schedule_jobs (${COLUMNS}, status, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?)`),
      get: db.prepare(`SELECT * FROM schedule_jobs WHERE id = ?`),
      list: db.prepare(`SELECT * FROM schedule_jobs WHERE owner_id = ? ORDER BY created_at, id`),
      listIn: db.prepare(`SELECT * FROM schedule_jobs WHERE owner_id = ? AND session_key = ? ORDER BY created_at, id`),
      all: db.prepare(`SELECT * FROM schedule_jobs ORDER BY created_at, id LIMIT ?`),
      due: db.prepare(`SELECT * FROM schedule_jobs WHERE status = 'active' AND next_due <= ? ORDER BY next_due, id LIMIT ?`),
      nextDue: db.prepare(`SELECT min(next_due) AS at FROM schedule_jobs WHERE status = 'active'`),
      advance: db.prepare(
        `UPDATE schedule_jobs SET next_due = ?, status = CASE WHEN ? IS NULL THEN 'done' ELSE status END, last_due = ?, last_result = ?, updated_at = ?
         WHERE id = ? AND next_due = ? AND status = 'active'`,
      ),
      pause: db.prepare(`UPDATE schedule_jobs SET status = 'paused', last_result = ?, updated_at = ? WHERE id = ? AND status = 'active'`),
      cancel: db.prepare(`DELETE FROM schedule_jobs WHERE id = ? AND owner_id = ?`),
      zone: db.prepare(`SELECT timezone FROM user_timezones WHERE user_id = ?`),
      setZone: db.prepare(
        `INSERT INTO user_timezones (user_id, timezone, updated_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET timezone = excluded.timezone, updated_at = excluded.updated_at`,
      ),
    }));
  }

  private read(rows: unknown[]): ScheduleJobRecord[] {
    return readJobs(rows as Row[], (error) => this.onCorrupt(error.message));
  }

  async create(job: NewScheduleJob, maxPerUser: number): Promise<boolean> {
    return this.db.transaction(() => {
      if (Number((this.s.held.get(job.ownerId) as Row).n) >= maxPerUser) return false;
      const now = this.now();
      this.s.insert.run(...jobValues(job, now), now);
      return true;
    })();
  }

  async get(id: string): Promise<ScheduleJobRecord | null> {
    const row = this.s.get.get(id) as Row | undefined;
    return row ? toScheduleJob(row) : null;
  }

  async list(ownerId: string, sessionKey?: string): Promise<ScheduleJobRecord[]> {
    return this.read(sessionKey === undefined ? this.s.list.all(ownerId) : this.s.listIn.all(ownerId, sessionKey));
  }

  async all(limit: number): Promise<ScheduleJobRecord[]> {
    return this.read(this.s.all.all(limit));
  }

  async due(now: number, limit: number): Promise<ScheduleJobRecord[]> {
    return this.read(this.s.due.all(now, limit));
  }

  async nextDue(): Promise<number | null> {
    const at = (this.s.nextDue.get() as Row).at;
    return at === null || at === undefined ? null : Number(at);
  }

  async advance(id: string, from: number, next: number | null, lastDue: number, result: string, notice?: AdvanceNotice): Promise<boolean> {
    if (!notice) return this.s.advance.run(next, next, lastDue, result, this.now(), id, from).changes === 1;
    // One transaction (a group commit, announced like a step's replies once it is on disk): the move and its notice.
    return this.ctx.writes.run(
      () => {
        const now = this.now();
        if (this.s.advance.run(next, next, lastDue, result, now, id, from).changes !== 1) return false;
        insertOutbound(this.ctx.stmts, notice.sessionKey, [notice.message], now);
        return true;
      },
      (moved) => moved && this.ctx.emit({ kind: "outbound", sessionKey: notice.sessionKey, requestIds: [notice.message.requestId] }),
    );
  }

  async pause(id: string, reason: string): Promise<boolean> {
    return this.s.pause.run(`paused: ${reason}`, this.now(), id).changes === 1;
  }

  async cancel(id: string, ownerId: string): Promise<boolean> {
    return this.s.cancel.run(id, ownerId).changes === 1;
  }

  async timezone(userId: string): Promise<string | null> {
    const row = this.s.zone.get(userId) as Row | undefined;
    return row ? String(row.timezone) : null;
  }

  async setTimezone(userId: string, zone: string): Promise<void> {
    this.s.setZone.run(userId, zone, this.now());
  }
}
