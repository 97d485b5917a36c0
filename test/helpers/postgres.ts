// PostgreSQL for tests: the server test/setup/postgres.ts started (or was pointed at), and a fresh, empty
// database per test, owned by the application role, so tests never see each other's rows or notifications.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, inject } from "vitest";
import type { PostgresTestServer } from "../setup/postgres.js";

export interface FreshDatabase {
  name: string;
  /** The application role's URL for this database (what a Store opens). */
  url: string;
  /** The admin's URL for this database (to plant rows the application would never write). */
  adminUrl: string;
  /** Drops the database, disconnecting whoever is still connected. */
  drop(): Promise<void>;
}

function server(): PostgresTestServer {
  return inject("postgres") ?? { unavailable: "the PostgreSQL globalSetup (test/setup/postgres.ts) did not run" };
}

export function postgresAvailable(): boolean {
  return !("unavailable" in server());
}

/** Why the PostgreSQL tests skip; null when they run. */
export function postgresSkipReason(): string | null {
  const s = server();
  return "unavailable" in s ? s.unavailable : null;
}

/** `describe` when a PostgreSQL server is there; otherwise the block is skipped, its name saying why. */
export function describeIfPostgres(name: string, body: () => void): void {
  const reason = postgresSkipReason();
  if (reason === null) describe(name, body);
  else describe.skip(`${name} (skipped: ${reason})`, body);
}

/** `url` pointing at `database` instead of its own. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

let admin: pg.Pool | null = null;
let created = 0;

function adminPool(adminUrl: string): pg.Pool {
  if (!admin) {
    // Idle connections let the worker exit; no test closes this pool.
    admin = new pg.Pool({ connectionString: adminUrl, max: 2, idleTimeoutMillis: 1_000, allowExitOnIdle: true });
    admin.on("error", () => undefined);
  }
  return admin;
}

/** A new empty database owned by the application role (FILE_COPY from template0: about 45 ms here). */
export async function freshDatabase(): Promise<FreshDatabase> {
  const s = server();
  if ("unavailable" in s) throw new Error(`no PostgreSQL server for this test: ${s.unavailable}`);
  const owner = decodeURIComponent(new URL(s.url).username);
  const name = `sb_test_${process.pid}_${++created}_${randomBytes(3).toString("hex")}`;
  const pool = adminPool(s.adminUrl);
  await pool.query(`CREATE DATABASE ${name} OWNER ${pg.escapeIdentifier(owner)} TEMPLATE template0 STRATEGY FILE_COPY`);
  return {
    name,
    url: withDatabase(s.url, name),
    adminUrl: withDatabase(s.adminUrl, name),
    drop: async () => {
      await pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Runs `sql` as the admin in `database`'s own database and returns the rows. */
export async function adminQuery<R extends pg.QueryResultRow = Record<string, unknown>>(
  database: FreshDatabase,
  sql: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  const client = new pg.Client({ connectionString: database.adminUrl });
  await client.connect();
  try {
    return await client.query<R>(sql, values);
  } finally {
    await client.end();
  }
}

let recycled: { database: FreshDatabase; admin: pg.Pool } | null = null;

/**
 * A database at the current schema with no rows, for suites that need an empty store per test but not a new
 * database (the Store contract): one database per test file, created and migrated on first use, then emptied
 * (every row of every table but schema_migrations deleted, one round trip, ~2 ms) each time it is handed out.
 * Creating and dropping a database per test costs ~150-300 ms here; emptying it isolates as well, because a
 * file runs one test at a time and no other file ever sees this database. Sequences are not reset: tests rely
 * on the order of seq columns, never on their values. dropEmptyDatabase() (in afterAll) throws it away.
 */
export async function emptyDatabase(): Promise<FreshDatabase> {
  if (!recycled) {
    const database = await freshDatabase();
    const { migrateDatabase } = await import("../../src/store/postgres/migrations.js");
    await migrateDatabase(database.url);
    const admin = new pg.Pool({ connectionString: database.adminUrl, max: 1, idleTimeoutMillis: 5_000, allowExitOnIdle: true });
    admin.on("error", () => undefined);
    recycled = { database, admin };
  }
  await recycled.admin.query(`DO $$
    DECLARE t text;
    BEGIN
      FOR t IN SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' LOOP
        EXECUTE 'DELETE FROM ' || t;
      END LOOP;
    END $$`);
  return recycled.database;
}

export async function dropEmptyDatabase(): Promise<void> {
  if (!recycled) return;
  const { database, admin } = recycled;
  recycled = null;
  await admin.end();
  await database.drop();
}

/** Runs `sql` as the admin on the server's admin database (cluster-wide views, ALTER DATABASE …). */
export async function serverAdminQuery<R extends pg.QueryResultRow = Record<string, unknown>>(sql: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  const s = server();
  if ("unavailable" in s) throw new Error(`no PostgreSQL server for this test: ${s.unavailable}`);
  return adminPool(s.adminUrl).query<R>(sql, values);
}

/**
 * A login role that owns nothing, on the server of `database`, and its URL for that database: whoever else can
 * connect (PostgreSQL lets any role connect to a database unless CONNECT is revoked from PUBLIC).
 */
export async function otherRole(database: FreshDatabase): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sb_other_${randomBytes(4).toString("hex")}`;
  const password = randomBytes(12).toString("hex");
  await serverAdminQuery(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
  const url = new URL(database.url);
  url.username = name;
  url.password = password;
  return { url: url.toString(), drop: () => serverAdminQuery(`DROP ROLE IF EXISTS ${name}`).then(() => undefined) };
}
