// The daily usage counters on SQLite (the quotas'). Its statements are its own, prepared once per connection.
import type Database from "better-sqlite3";
import { usageDay, type Row } from "../rows.js";
import { noUsage, type UsageDay, type UsageIncrement, type UsageScope, type UsageStore } from "../roles/usage.js";
import type { SqliteContext } from "./context.js";

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
  };
}

/** How a limit's name is kept in `told`: delimited, so one name is never found inside another. */
export const toldMark = (limit: string): string => `|${limit}|`;

export class SqliteUsage implements UsageStore {
  private readonly stmts: ReturnType<typeof prepare>;

  constructor(private readonly ctx: SqliteContext) {
    this.stmts = prepare(ctx.db);
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
}
