// A store opened on a database an older Switchboard left: built up to schema `version`, with rows planted the way
// that version stored them; opening the store migrates it on. For the tests of what an upgrade keeps.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { migrate as migratePostgres } from "../../src/store/postgres/migrations.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { migrate as migrateSqlite } from "../../src/store/sqlite/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { FreshDatabase } from "./postgres.js";

/** Runs `check` on a SQLite store upgraded from `version` with `rows`; the files are removed after. */
export async function fromOldSqlite(version: number, rows: string[], check: (store: Store) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-upgrade-"));
  try {
    const file = join(dir, "db.sqlite");
    const db = new Database(file);
    migrateSqlite(db, version);
    for (const sql of rows) db.prepare(sql).run();
    db.close();
    const store = new SqliteStore(file);
    try {
      await check(store);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `check` on a PostgreSQL store upgraded from `version` with `rows`, in `database`. */
export async function fromOldPostgres(database: FreshDatabase, version: number, rows: string[], check: (store: Store) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await migratePostgres(client, version);
    for (const sql of rows) await client.query(sql);
  } finally {
    await client.end();
  }
  const store = await PostgresStore.open(database.url);
  try {
    await check(store);
  } finally {
    await store.close();
  }
}
