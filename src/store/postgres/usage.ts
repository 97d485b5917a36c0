// The daily usage counters on PostgreSQL (the quotas'). An increment is one upsert, so replicas add up.
import type pg from "pg";
import {
  counterKey,
  lockOrder,
  noUsage,
  type HoldResult,
  type QuotaRefusalRecord,
  type UsageDay,
  type UsageHold,
  type UsageIncrement,
  type UsageScope,
  type UsageStore,
} from "../roles/usage.js";
import { quotaRefusal, usageDay } from "../rows.js";
import { transaction } from "./connection.js";
import { toldMark } from "../sqlite/usage.js";
import type { PostgresContext } from "./context.js";
import { sql } from "./statements.js";

/** The first key of the counters' advisory locks ("uh" in ASCII). */
const HOLD_LOCK = 0x7568;

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
  // Holds, settles and releases of one counter take its lock for their transaction, on every replica ("uh").
  lock: sql("usage_lock", `SELECT pg_advisory_xact_lock(${HOLD_LOCK}, hashtext($1))`),
  // Expired holds go without waiting for anyone: a row another transaction has is left for the next sweep.
  sweep: sql("usage_sweep", `DELETE FROM usage_holds WHERE ctid IN (SELECT ctid FROM usage_holds WHERE expires_at <= $1 FOR UPDATE SKIP LOCKED)`),
  used: sql(
    "usage_used",
    `SELECT COALESCE((SELECT cost_nano_usd FROM usage_daily WHERE scope = $1 AND subject = $2 AND day = $3), 0)
       + COALESCE((SELECT SUM(cost_nano_usd) FROM usage_holds WHERE scope = $1 AND subject = $2 AND day = $3 AND expires_at > $4), 0) AS used`,
  ),
  held: sql("usage_held", `SELECT COALESCE(SUM(cost_nano_usd), 0) AS held FROM usage_holds WHERE scope = $1 AND subject = $2 AND day = $3 AND expires_at > $4`),
  hold: sql(
    "usage_hold",
    `INSERT INTO usage_holds (id, scope, subject, day, cost_nano_usd, expires_at)
     SELECT $1, e.s, e.j, e.d, $2::bigint, $3::bigint FROM unnest($4::text[], $5::text[], $6::text[]) AS e(s, j, d)`,
  ),
  release: sql("usage_release", `DELETE FROM usage_holds WHERE id = $1 RETURNING scope, subject, day`),
  refused: sql(
    "usage_refused",
    `INSERT INTO quota_refusals (request_id, session_key, user_id, limit_name, resets_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (request_id) DO NOTHING`,
  ),
  refusal: sql("usage_refusal", `SELECT * FROM quota_refusals WHERE request_id = $1`),
};

export class PostgresUsage implements UsageStore {
  constructor(private readonly ctx: PostgresContext) {}

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    if (increments.length === 0) return;
    await this.ctx.changed(U.add, this.addValues(increments));
  }

  private addValues(increments: readonly UsageIncrement[]): unknown[] {
    // Several increments of one counter in one statement would conflict with themselves: summed first.
    const summed = new Map<string, UsageIncrement & { messages: number; costNanoUsd: number }>();
    for (const i of increments) {
      const key = JSON.stringify([i.scope, i.subject, i.day]);
      const at = summed.get(key) ?? { scope: i.scope, subject: i.subject, day: i.day, messages: 0, costNanoUsd: 0 };
      at.messages += i.messages ?? 0;
      at.costNanoUsd += i.costNanoUsd ?? 0;
      summed.set(key, at);
    }
    const rows = lockOrder([...summed.values()]);
    return [this.ctx.now(), rows.map((r) => r.scope), rows.map((r) => r.subject), rows.map((r) => r.day), rows.map((r) => r.messages), rows.map((r) => r.costNanoUsd)];
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

  async hold(hold: UsageHold): Promise<HoldResult> {
    const now = this.ctx.now();
    // On its own, before the transaction: the rows it takes are let go at once, never held while a lock is awaited.
    await this.ctx.changed(U.sweep, [now]);
    return transaction(this.ctx.pool, async (client): Promise<HoldResult> => {
      const counters = lockOrder(hold.counters);
      await lock(client, counters);
      for (const c of counters) {
        if (c.limitNanoUsd <= 0) continue;
        const used = Number((await client.query({ ...U.used, values: [c.scope, c.subject, c.day, now] })).rows[0].used);
        if (used >= c.limitNanoUsd) return { status: "over", scope: c.scope, subject: c.subject, day: c.day, usedNanoUsd: used };
      }
      await client.query({
        ...U.hold,
        values: [hold.id, hold.costNanoUsd, now + hold.ttlMs, counters.map((c) => c.scope), counters.map((c) => c.subject), counters.map((c) => c.day)],
      });
      return { status: "held" };
    });
  }

  async settle(id: string, increments: readonly UsageIncrement[]): Promise<void> {
    await transaction(this.ctx.pool, async (client) => {
      // The counters' locks first, so a hold never sees the cost gone from the holds and not yet on the counter.
      await lock(client, increments);
      await client.query({ ...U.release, values: [id] });
      if (increments.length > 0) await client.query({ ...U.add, values: this.addValues(increments) });
    });
  }

  async release(id: string): Promise<void> {
    await this.ctx.changed(U.release, [id]);
  }

  async held(scope: UsageScope, subject: string, day: string): Promise<number> {
    return Number((await this.ctx.one(U.held, [scope, subject, day, this.ctx.now()]))?.held ?? 0);
  }

  async refused(r: Omit<QuotaRefusalRecord, "createdAt">): Promise<void> {
    await this.ctx.changed(U.refused, [r.requestId, r.sessionKey, r.userId, r.limit, r.resetsAt, this.ctx.now()]);
  }

  async refusal(requestId: string): Promise<QuotaRefusalRecord | null> {
    return this.ctx.maybe(U.refusal, [requestId], quotaRefusal);
  }
}

/** Takes the counters' locks, in one order (no two transactions wait on each other). */
async function lock(client: pg.PoolClient, counters: readonly { scope: string; subject: string; day: string }[]): Promise<void> {
  const keys = [...new Set(lockOrder(counters).map(counterKey))];
  for (const key of keys) await client.query({ ...U.lock, values: [key] });
}
