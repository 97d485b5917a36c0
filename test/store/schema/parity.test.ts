// One schema, two dialects, no drift: a fresh SQLite and a fresh PostgreSQL database, migrated by their own
// migration lists, read back from their catalogs and compared with the one description (src/store/schema.ts).
// Only the differences it declares (DIALECT_ONLY, SQLite's rowid) are allowed.
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate as migratePostgres } from "../../../src/store/postgres/migrations.js";
import { migrate as migrateSqlite } from "../../../src/store/sqlite/migrations.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../../helpers/postgres.js";
import { readPostgresSchema, readSqliteSchema } from "./catalog.js";
import { differences } from "./expected.js";

describe("the SQLite schema", () => {
  let db: Database.Database;
  beforeAll(() => {
    db = new Database(":memory:");
    migrateSqlite(db);
  });
  afterAll(() => db.close());

  it("is the description, bar the declared SQLite-only objects", () => {
    expect(differences("sqlite", readSqliteSchema(db))).toEqual([]);
  });

  it("any drift is reported: an index on other columns, an undescribed index, a column the description lacks", () => {
    const drifted = new Database(":memory:");
    try {
      migrateSqlite(drifted);
      drifted.exec(`DROP INDEX requests_unfinished; CREATE INDEX requests_unfinished ON requests(seq) WHERE status IN ('pending', 'running')`);
      drifted.exec(`CREATE INDEX outbox_by_agent ON outbox(agent); ALTER TABLE tasks ADD COLUMN note TEXT`);
      expect(differences("sqlite", readSqliteSchema(drifted))).toEqual([
        "column tasks.note: not in the description",
        "index outbox_by_agent: not in the description",
        `index requests_unfinished: {"table":"requests","on":"seq","unique":false,"where":"status in ('pending', 'running')"}, described {"table":"requests","on":"session_key, seq","unique":false,"where":"status in ('pending', 'running')"}`,
      ]);
    } finally {
      drifted.close();
    }
  });
});

describeIfPostgres("the PostgreSQL schema", () => {
  let database: FreshDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    database = await freshDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await migratePostgres(client);
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  it("is the description, bar the declared PostgreSQL-only objects", async () => {
    expect(differences("postgres", await readPostgresSchema(client))).toEqual([]);
  });

  it("any drift is reported: a nullable column that should not be, a missing index", async () => {
    await client.query("BEGIN");
    try {
      await client.query(`ALTER TABLE leases ALTER COLUMN holder DROP NOT NULL; DROP INDEX outbox_by_request`);
      expect(differences("postgres", await readPostgresSchema(client))).toEqual([
        "column leases.holder: text, described text not null",
        "index outbox_by_request: missing",
      ]);
    } finally {
      await client.query("ROLLBACK");
    }
  });
});
