// The backends the Store contract suite runs against: SQLite, and PostgreSQL (a fresh database per test on
// the server test/setup/postgres.ts provides). The suite itself talks only to the Store interface.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { withHolderCache } from "../../../src/store/holder-cache.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../../src/store/store.js";
import { adminQuery, dropEmptyDatabase, emptyDatabase, postgresSkipReason, type FreshDatabase } from "../../helpers/postgres.js";

export interface StoreBackend {
  name: string;
  /** Set when the backend cannot run here (no PostgreSQL server): its tests are skipped, saying why. */
  unavailable?: string | null;
  /** A fresh, empty store whose timestamps come from `now`. */
  open(now: () => number): Promise<Store>;
  /** Closes `store` and opens the same database again (what a restart does). */
  reopen(store: Store, now: () => number): Promise<Store>;
  /** Closes the store and throws its database away. */
  close(store: Store): Promise<void>;
  /** After the suite: releases what the backend kept between tests. */
  teardown?(): Promise<void>;
  // Backend hooks: the only place the suite reaches below the interface, to plant a row the store cannot
  // read back (a hand-edited or truncated row). Each throws when the row does not exist, so a test that
  // plants into nothing fails instead of passing vacuously. A backend without them skips those tests.
  plantCorruptApproval?: (store: Store, approvalId: string) => Promise<void>;
  plantCorruptTaskOutput?: (store: Store, taskId: string) => Promise<void>;
  plantCorruptTaskMetadata?: (store: Store, taskId: string) => Promise<void>;
  plantCorruptFrame?: (store: Store, frameId: string) => Promise<void>;
  /** A frame whose stored data is not JSON at all (plantCorruptFrame's is JSON of the wrong shape). */
  plantUnparsableFrame?: (store: Store, frameId: string) => Promise<void>;
}

const sqliteFiles = new Map<Store, { dir: string; file: string }>();

function sqliteFile(store: Store): { dir: string; file: string } {
  const where = sqliteFiles.get(store);
  if (!where) throw new Error("this store was not opened by the sqlite contract backend");
  return where;
}

/** Runs `sql` on a second connection to the store's file (WAL mode lets both be open). */
function plantSqlite(store: Store, sql: string, id: string): Promise<void> {
  const db = new Database(sqliteFile(store).file);
  try {
    const changes = db.prepare(sql).run(id).changes;
    if (changes !== 1) throw new Error(`plant: no row ${id} to corrupt (${sql})`);
  } finally {
    db.close();
  }
  return Promise.resolve();
}

/** SQLite as the gateway opens it (`exclusive`: the process lock, leases in memory), or as a second process would. */
const sqliteBackend = (exclusive: boolean): StoreBackend => ({
  name: exclusive ? "sqlite, exclusive" : "sqlite",
  open(now) {
    const dir = mkdtempSync(join(tmpdir(), "switchboard-contract-"));
    const file = join(dir, "switchboard.db");
    const store = new SqliteStore(file, now, { exclusive });
    sqliteFiles.set(store, { dir, file });
    return Promise.resolve(store);
  },
  async reopen(store, now) {
    const where = sqliteFile(store);
    await store.close();
    sqliteFiles.delete(store);
    const next = new SqliteStore(where.file, now, { exclusive });
    sqliteFiles.set(next, where);
    return next;
  },
  async close(store) {
    const where = sqliteFiles.get(store);
    await store.close();
    sqliteFiles.delete(store);
    if (where) rmSync(where.dir, { recursive: true, force: true });
  },
  plantCorruptApproval: (store, id) => plantSqlite(store, `UPDATE approvals SET input = '{"url": "https://exa' WHERE id = ?`, id),
  plantCorruptTaskOutput: (store, id) => plantSqlite(store, `UPDATE tasks SET structured_output = '{"total": ' WHERE id = ?`, id),
  plantCorruptTaskMetadata: (store, id) => plantSqlite(store, `UPDATE tasks SET metadata = '["not", "an object"]' WHERE id = ?`, id),
  plantCorruptFrame: (store, id) => plantSqlite(store, `UPDATE frames SET data = '{"frameId": 3}' WHERE frame_id = ?`, id),
  plantUnparsableFrame: (store, id) => plantSqlite(store, `UPDATE frames SET data = '{"agentName": "ma' WHERE frame_id = ?`, id),
});

const postgresDatabases = new Map<Store, FreshDatabase>();

function postgresDatabase(store: Store): FreshDatabase {
  const database = postgresDatabases.get(store);
  if (!database) throw new Error("this store was not opened by the postgres contract backend");
  return database;
}

/** Runs `sql` as the admin in the store's database: the same malformed JSON the SQLite hooks write. */
async function plantPostgres(store: Store, sql: string, id: string): Promise<void> {
  const { rowCount } = await adminQuery(postgresDatabase(store), sql, [id]);
  if (rowCount !== 1) throw new Error(`plant: no row ${id} to corrupt (${sql})`);
}

// Each test gets an empty database: the file's one database, emptied (see emptyDatabase: the same isolation as
// a new database per test, at a fiftieth of the cost). The PostgreSQL-only tests use new databases.
const postgres: StoreBackend = {
  name: "postgres",
  unavailable: postgresSkipReason(),
  async open(now) {
    const database = await emptyDatabase();
    const store = await PostgresStore.open(database.url, { now, poolMax: 4 });
    postgresDatabases.set(store, database);
    return store;
  },
  async reopen(store, now) {
    const database = postgresDatabase(store);
    await store.close();
    postgresDatabases.delete(store);
    const next = await PostgresStore.open(database.url, { now, poolMax: 4 });
    postgresDatabases.set(next, database);
    return next;
  },
  async close(store) {
    await store.close();
    postgresDatabases.delete(store);
  },
  teardown: dropEmptyDatabase,
  plantCorruptApproval: (store, id) => plantPostgres(store, `UPDATE approvals SET input = '{"url": "https://exa' WHERE id = $1`, id),
  plantCorruptTaskOutput: (store, id) => plantPostgres(store, `UPDATE tasks SET structured_output = '{"total": ' WHERE id = $1`, id),
  plantCorruptTaskMetadata: (store, id) => plantPostgres(store, `UPDATE tasks SET metadata = '["not", "an object"]' WHERE id = $1`, id),
  plantCorruptFrame: (store, id) => plantPostgres(store, `UPDATE frames SET data = '{"frameId": 3}' WHERE frame_id = $1`, id),
  plantUnparsableFrame: (store, id) => plantPostgres(store, `UPDATE frames SET data = '{"agentName": "ma' WHERE frame_id = $1`, id),
};

/**
 * `backend` as the gateway uses it: through the lease holder's cache (src/store/holder-cache.ts), which must keep
 * every promise of the contract. The hooks plant into the store underneath.
 */
function throughHolderCache(backend: StoreBackend): StoreBackend {
  const inner = new Map<Store, Store>();
  const innerOf = (store: Store): Store => {
    const found = inner.get(store);
    if (!found) throw new Error("this store was not opened through the holder's cache backend");
    return found;
  };
  const wrap = (store: Store): Store => {
    const cached = withHolderCache(store);
    inner.set(cached, store);
    return cached;
  };
  const plant = (hook: StoreBackend["plantCorruptFrame"]) => hook && ((store: Store, id: string) => hook(innerOf(store), id));
  return {
    name: `${backend.name}, through the holder's cache`,
    unavailable: backend.unavailable,
    open: async (now) => wrap(await backend.open(now)),
    reopen: async (store, now) => {
      const next = wrap(await backend.reopen(innerOf(store), now));
      inner.delete(store);
      return next;
    },
    close: async (store) => {
      await backend.close(innerOf(store));
      inner.delete(store);
    },
    teardown: async () => {
      await backend.teardown?.();
    },
    plantCorruptApproval: plant(backend.plantCorruptApproval),
    plantCorruptTaskOutput: plant(backend.plantCorruptTaskOutput),
    plantCorruptTaskMetadata: plant(backend.plantCorruptTaskMetadata),
    plantCorruptFrame: plant(backend.plantCorruptFrame),
    plantUnparsableFrame: plant(backend.plantUnparsableFrame),
  };
}

export const BACKENDS: StoreBackend[] = [sqliteBackend(false), sqliteBackend(true), postgres, throughHolderCache(sqliteBackend(true)), throughHolderCache(postgres)];
