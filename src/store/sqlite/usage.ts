// The daily usage counters on SQLite (the quotas'). Its statements are its own, prepared once per connection.
import type Database from "better-sqlite3";
import { quotaRefusal, usageDay, type Row } from "../rows.js";
import {
  noUsage,
  type HoldResult,
  type QuotaRefusalRecord,
  type UsageDay,
  type UsageHold,
  type UsageIncrement,
  type UsageScope,
  type UsageStore,
} from "../roles/usage.js";
import type { SqliteContext } from "./context.js";
import { preparedOnUse } from "./prepared-on-use.js";

function prepare(db: Database.Database) {
  return {
    add: db.prepare(
      `INSERT INTO usage_daily (scope, subject, day, messages, cost_nano_usd, told, updated_at) VALUES (?, ?, ?, ?, ?, '', ?)
       ON CONFLICT (scope, subject, day) DO UPDATE SET messages = messages + excluded.messages,
         cost_nano_usd = cost_nano_usd + excluded.cost_nano_usd, updated_at = excluded.updated_at`,
    ),
    get: db.prepare(`SELECT * FROM usage_daily WHERE scope = ? AND subject = ? AND day = ?`),
    tell: db.prepare(
      `INSERT INTO usage_daily (scope, subject, day, messages, cost_nano_usd, told, updated_at) VALUES (?, ?, ?, 0, 0, ?, ?)
       ON CONFLICT (scope, subject, day) DO UPDATE SET told = usage_daily.told || excluded.told
       WHERE instr(usage_daily.told, excluded.told) = 0`,
    ),
    recent: db.prepare(`SELECT * FROM usage_daily WHERE scope = ? AND updated_at >= ? ORDER BY subject, day DESC`),
    sweep: db.prepare(`DELETE FROM usage_holds WHERE expires_at <= ?`),
    spent: db.prepare(`SELECT cost_nano_usd FROM usage_daily WHERE scope = ? AND subject = ? AND day = ?`),
    held: db.prepare(`SELECT COALESCE(SUM(cost_nano_usd), 0) AS held FROM usage_holds WHERE scope = ? AND subject = ? AND day = ? AND expires_at > ?`),
    hold: db.prepare(`INSERT INTO usage_holds (id, scope, subject, day, cost_nano_usd, expires_at) VALUES (?, ?, ?, ?, ?, ?)`),
    release: db.prepare(`DELETE FROM usage_holds WHERE id = ?`),
    refused: db.prepare(
      `INSERT INTO quota_refusals (request_id, session_key, user_id, limit_name, resets_at, created_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (request_id) DO NOTHING`,
    ),
    refusal: db.prepare(`SELECT * FROM quota_refusals WHERE request_id = ?`),
  };
}

/** How a limit's name is kept in `told`: delimited, so one name is never found inside another. */
export const toldMark = (limit: string): string => `|${limit}|`;

export class SqliteUsage implements UsageStore {
  private readonly stmts: ReturnType<typeof prepare>;

  constructor(private readonly ctx: SqliteContext) {
    this.stmts = preparedOnUse(ctx.db, prepare);
  }

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    const now = this.ctx.now();
    this.ctx.db.transaction(() => {
      for (const i of increments) this.stmts.add.run(i.scope, i.subject, i.day, i.messages ?? 0, i.costNanoUsd ?? 0, now);
    })();
  }

  async get(scope: UsageScope, subject: string, day: string): Promise<UsageDay> {
    const row = this.stmts.get.get(scope, subject, day) as Row | undefined;
    return row ? usageDay(row) : noUsage(scope, subject, day);
  }

  async tell(scope: UsageScope, subject: string, day: string, limit: string): Promise<boolean> {
    return this.stmts.tell.run(scope, subject, day, toldMark(limit), this.ctx.now()).changes === 1;
  }

  async recent(scope: UsageScope, since: number): Promise<UsageDay[]> {
    return (this.stmts.recent.all(scope, since) as Row[]).map(usageDay);
  }

  // One process writes this database, and a transaction runs to its end without yielding: holds are serialised.
  async hold(hold: UsageHold): Promise<HoldResult> {
    const now = this.ctx.now();
    return this.ctx.db.transaction((): HoldResult => {
      this.stmts.sweep.run(now);
      for (const c of hold.counters) {
        if (c.limitNanoUsd <= 0) continue;
        const used = this.spent(c.scope, c.subject, c.day) + this.heldAt(c.scope, c.subject, c.day, now);
        if (used >= c.limitNanoUsd) return { status: "over", scope: c.scope, subject: c.subject, day: c.day, usedNanoUsd: used };
      }
      for (const c of hold.counters) this.stmts.hold.run(hold.id, c.scope, c.subject, c.day, hold.costNanoUsd, now + hold.ttlMs);
      return { status: "held" };
    })();
  }

  async settle(id: string, increments: readonly UsageIncrement[]): Promise<void> {
    const now = this.ctx.now();
    this.ctx.db.transaction(() => {
      this.stmts.release.run(id);
      for (const i of increments) this.stmts.add.run(i.scope, i.subject, i.day, i.messages ?? 0, i.costNanoUsd ?? 0, now);
    })();
  }

  async release(id: string): Promise<void> {
    this.stmts.release.run(id);
  }

  async held(scope: UsageScope, subject: string, day: string): Promise<number> {
    return this.heldAt(scope, subject, day, this.ctx.now());
  }

  async refused(r: Omit<QuotaRefusalRecord, "createdAt">): Promise<void> {
    this.stmts.refused.run(r.requestId, r.sessionKey, r.userId, r.limit, r.resetsAt, this.ctx.now());
  }

  async refusal(requestId: string): Promise<QuotaRefusalRecord | null> {
    const row = this.stmts.refusal.get(requestId) as Row | undefined;
    return row ? quotaRefusal(row) : null;
  }

  private spent(scope: UsageScope, subject: string, day: string): number {
    return Number((this.stmts.spent.get(scope, subject, day) as Row | undefined)?.cost_nano_usd ?? 0);
  }

  private heldAt(scope: UsageScope, subject: string, day: string, now: number): number {
    return Number((this.stmts.held.get(scope, subject, day, now) as Row).held);
  }
}
