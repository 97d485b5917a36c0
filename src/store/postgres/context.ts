// What the PostgreSQL store's roles share: the query pool (with small helpers over named statements), the clock,
// the change feed (the LISTEN connection, and the order announcements go out in) and the quarantine.
import type pg from "pg";
import type { Row } from "../rows.js";
import type { PostgresFeed } from "./feed.js";
import type { Quarantine } from "./quarantine.js";
import type { Sql } from "./statements.js";

export class PostgresContext {
  constructor(
    readonly pool: pg.Pool,
    readonly now: () => number,
    readonly feed: PostgresFeed,
    readonly quarantine: Quarantine,
  ) {}

  async all(statement: Sql, values: unknown[] = []): Promise<Row[]> {
    return (await this.pool.query<Row>({ ...statement, values })).rows;
  }

  async one(statement: Sql, values: unknown[]): Promise<Row | null> {
    return (await this.all(statement, values))[0] ?? null;
  }

  async maybe<T>(statement: Sql, values: unknown[], read: (row: Row) => T): Promise<T | null> {
    const row = await this.one(statement, values);
    return row ? read(row) : null;
  }

  /** Runs a write; how many rows it changed. */
  async changed(statement: Sql, values: unknown[]): Promise<number> {
    return (await this.pool.query({ ...statement, values })).rowCount ?? 0;
  }
}
