// Leases with fencing tokens: a replica's hold on a session key (or on a singleton job such as
// `@telegram-polling`), each call one atomic statement. Rows are never deleted, so a key's token only grows; a
// released lease keeps holder and token with expires_at = 0. The fence itself is checked in commit.ts.
import type pg from "pg";
import type { Lease, LeaseRecord, LeaseStore } from "../store.js";
import { toLease, type Row } from "../rows.js";
import { S, type Sql } from "./statements.js";

export class PostgresLeases implements LeaseStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => number,
  ) {}

  private query(statement: Sql, values: unknown[]) {
    return this.pool.query<Row>({ ...statement, values });
  }

  async acquire(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    const now = this.now();
    const { rows } = await this.query(S.acquireLease, [key, holder, now, now + ttlMs]);
    return rows[0] ? (toLease(rows[0]) as Lease) : null;
  }

  async renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    return (await this.query(S.renewLease, [key, holder, token, this.now() + ttlMs])).rowCount === 1;
  }

  async release(key: string, holder: string, token: number): Promise<void> {
    await this.query(S.releaseLease, [key, holder, token]);
  }

  async get(key: string): Promise<LeaseRecord | null> {
    const { rows } = await this.query(S.lease, [key]);
    return rows[0] ? toLease(rows[0]) : null;
  }

  /** Session keys with unfinished requests or undelivered replies and no live lease (never `@…` job keys). */
  async orphanedSessions(): Promise<string[]> {
    return (await this.query(S.orphaned, [this.now()])).rows.map((r) => String(r.key));
  }
}
