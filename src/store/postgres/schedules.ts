// Scheduled jobs and users' time zones on PostgreSQL. Creating a job counts the owner's jobs under a transaction
// advisory lock on the owner, so two replicas cannot both add the twenty-first; moving a job on is a
// compare-and-set on the due time it was read at, so of two replicas that saw it due one wins.
import type pg from "pg";
import type { Row } from "../rows.js";
import { jobValues, readJobs, toScheduleJob } from "../schedule-rows.js";
import type { AdvanceNotice, NewScheduleJob, ScheduleJobRecord, ScheduleStore } from "../store.js";
import { insertOutbound, stepChanges, writeChanges } from "./commit.js";
import { transaction } from "./connection.js";
import type { PostgresContext } from "./context.js";
import { sql } from "./statements.js";

const S = {
  lockOwner: sql("schedule_lock_owner", `SELECT pg_advisory_xact_lock(hashtext('schedule_jobs:' || $1))`),
  held: sql("schedule_held", `SELECT count(*) AS n FROM schedule_jobs WHERE owner_id = $1 AND status IN ('active', 'paused')`),
  insert: sql(
    "schedule_insert",
    `INSERT INTO schedule_jobs (id, owner_id, session_key, instruction, schedule, timezone, next_due, created_by_task, created_at, traceparent, status, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'active', $9)`,
  ),
  get: sql("schedule_get", `SELECT * FROM schedule_jobs WHERE id = $1`),
  list: sql("schedule_list", `SELECT * FROM schedule_jobs WHERE owner_id = $1 AND ($2::text IS NULL OR session_key = $2) ORDER BY created_at, id`),
  all: sql("schedule_all", `SELECT * FROM schedule_jobs ORDER BY created_at, id LIMIT $1`),
  due: sql("schedule_due", `SELECT * FROM schedule_jobs WHERE status = 'active' AND next_due <= $1 ORDER BY next_due, id LIMIT $2`),
  nextDue: sql("schedule_next_due", `SELECT min(next_due) AS at FROM schedule_jobs WHERE status = 'active'`),
  advance: sql(
    "schedule_advance",
    `UPDATE schedule_jobs SET next_due = $1::bigint, status = CASE WHEN $1::bigint IS NULL THEN 'done' ELSE status END, last_due = $2, last_result = $3, updated_at = $4
     WHERE id = $5 AND next_due = $6 AND status = 'active'`,
  ),
  pause: sql("schedule_pause", `UPDATE schedule_jobs SET status = 'paused', last_result = $1, updated_at = $2 WHERE id = $3 AND status = 'active'`),
  cancel: sql("schedule_cancel", `DELETE FROM schedule_jobs WHERE id = $1 AND owner_id = $2`),
  zone: sql("schedule_zone", `SELECT timezone FROM user_timezones WHERE user_id = $1`),
  setZone: sql(
    "schedule_set_zone",
    `INSERT INTO user_timezones (user_id, timezone, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (user_id) DO UPDATE SET timezone = EXCLUDED.timezone, updated_at = EXCLUDED.updated_at`,
  ),
};

export class PostgresSchedules implements ScheduleStore {
  private readonly pool: pg.Pool;
  private readonly now: () => number;

  constructor(
    private readonly ctx: PostgresContext,
    private readonly onCorrupt: (message: string) => void = () => {},
  ) {
    this.pool = ctx.pool;
    this.now = ctx.now;
  }

  private async rows(statement: (typeof S)[keyof typeof S], values: unknown[]): Promise<Row[]> {
    return (await this.pool.query<Row>({ ...statement, values })).rows;
  }

  private async changed(statement: (typeof S)[keyof typeof S], values: unknown[]): Promise<boolean> {
    return ((await this.pool.query({ ...statement, values })).rowCount ?? 0) === 1;
  }

  private read(rows: Row[]): ScheduleJobRecord[] {
    return readJobs(rows, (error) => this.onCorrupt(error.message));
  }

  async create(job: NewScheduleJob, maxPerUser: number): Promise<boolean> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query({ ...S.lockOwner, values: [job.ownerId] });
      const held = Number((await client.query<Row>({ ...S.held, values: [job.ownerId] })).rows[0]!.n);
      if (held >= maxPerUser) {
        await client.query("ROLLBACK");
        return false;
      }
      await client.query({ ...S.insert, values: jobValues(job, this.now()) });
      await client.query("COMMIT");
      return true;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async get(id: string): Promise<ScheduleJobRecord | null> {
    const row = (await this.rows(S.get, [id]))[0];
    return row ? toScheduleJob(row) : null;
  }

  async list(ownerId: string, sessionKey?: string): Promise<ScheduleJobRecord[]> {
    return this.read(await this.rows(S.list, [ownerId, sessionKey ?? null]));
  }

  async all(limit: number): Promise<ScheduleJobRecord[]> {
    return this.read(await this.rows(S.all, [limit]));
  }

  async due(now: number, limit: number): Promise<ScheduleJobRecord[]> {
    return this.read(await this.rows(S.due, [now, limit]));
  }

  async nextDue(): Promise<number | null> {
    const at = (await this.rows(S.nextDue, []))[0]?.at;
    return at === null || at === undefined ? null : Number(at);
  }

  async advance(id: string, from: number, next: number | null, lastDue: number, result: string, notice?: AdvanceNotice): Promise<boolean> {
    if (!notice) return this.changed(S.advance, [next, lastDue, result, this.now(), id, from]);
    // One transaction: the compare-and-set, and (only when it won) the notice with its change-feed row.
    await this.ctx.feed.settled();
    const now = this.now();
    const written = await transaction(this.pool, async (client) => {
      if (((await client.query({ ...S.advance, values: [next, lastDue, result, now, id, from] })).rowCount ?? 0) !== 1) return null;
      await insertOutbound(client, notice.sessionKey, [notice.message], now);
      return writeChanges(client, stepChanges(notice.sessionKey, { outbound: [notice.message] }));
    });
    if (written === null) return false;
    this.ctx.feed.committed(written);
    return true;
  }

  async pause(id: string, reason: string): Promise<boolean> {
    return this.changed(S.pause, [`paused: ${reason}`, this.now(), id]);
  }

  async cancel(id: string, ownerId: string): Promise<boolean> {
    return this.changed(S.cancel, [id, ownerId]);
  }

  async timezone(userId: string): Promise<string | null> {
    const row = (await this.rows(S.zone, [userId]))[0];
    return row ? String(row.timezone) : null;
  }

  async setTimezone(userId: string, zone: string): Promise<void> {
    await this.rows(S.setZone, [userId, zone, this.now()]);
  }
}
