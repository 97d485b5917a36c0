// The daily usage counters on PostgreSQL (the quotas'). An increment is one upsert, so replicas add up.
import { noUsage, type UsageDay, type UsageIncrement, type UsageScope, type UsageStore } from "../roles/usage.js";
import { usageDay } from "../rows.js";
import { toldMark } from "../sqlite/usage.js";
import type { PostgresContext } from "./context.js";
import { sql } from "./statements.js";

const U = {
  add: sql(
    "usage_add",
    `INSERT INTO usage_daily (scope, subject, day, messages, cost_nano_usd, told, updated_at)
     SELECT e.s, e.j, e.d, e.m, e.c, '', $1::bigint
     FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[]) AS e(s, j, d, m, c)
     ON CONFLICT (scope, subject, day) DO UPDATE SET messages = usage_daily.messages + EXCLUDED.messages,
       cost_nano_usd = usage_daily.cost_nano_usd + EXCLUDED.cost_nano_usd, updated_at = EXCLUDED.updated_at`,
  ),
  get: sql("usage_get", `SELECT * FROM usage_daily WHERE scope = $1 AND subject = $2 AND day = $3`),
  tell: sql(
    "usage_tell",
    `INSERT INTO usage_daily (scope, subject, day, messages, cost_nano_usd, told, updated_at) VALUES ($1, $2, $3, 0, 0, $4, $5)
     ON CONFLICT (scope, subject, day) DO UPDATE SET told = usage_daily.told || EXCLUDED.told
     WHERE strpos(usage_daily.told, EXCLUDED.told) = 0`,
  ),
  recent: sql("usage_recent", `SELECT * FROM usage_daily WHERE scope = $1 AND updated_at >= $2 ORDER BY subject, day DESC`),
};

export class PostgresUsage implements UsageStore {
  constructor(private readonly ctx: PostgresContext) {}

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    if (increments.length === 0) return;
    // Several increments of one counter in one statement would conflict with themselves: summed first.
    const summed = new Map<string, UsageIncrement & { messages: number; costNanoUsd: number }>();
    for (const i of increments) {
      const key = JSON.stringify([i.scope, i.subject, i.day]);
      const at = summed.get(key) ?? { scope: i.scope, subject: i.subject, day: i.day, messages: 0, costNanoUsd: 0 };
      at.messages += i.messages ?? 0;
      at.costNanoUsd += i.costNanoUsd ?? 0;
      summed.set(key, at);
    }
    const rows = [...summed.values()];
    await this.ctx.changed(U.add, [
      this.ctx.now(),
      rows.map((r) => r.scope),
      rows.map((r) => r.subject),
      rows.map((r) => r.day),
      rows.map((r) => r.messages),
      rows.map((r) => r.costNanoUsd),
    ]);
  }

  async get(scope: UsageScope, subject: string, day: string): Promise<UsageDay> {
    return (await this.ctx.maybe(U.get, [scope, subject, day], usageDay)) ?? noUsage(scope, subject, day);
  }

  async tell(scope: UsageScope, subject: string, day: string, limit: string): Promise<boolean> {
    return (await this.ctx.changed(U.tell, [scope, subject, day, toldMark(limit), this.ctx.now()])) === 1;
  }

  async recent(scope: UsageScope, since: number): Promise<UsageDay[]> {
    return (await this.ctx.all(U.recent, [scope, since])).map(usageDay);
  }
}
