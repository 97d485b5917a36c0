// A batch of statements in one round trip (statement-batch.ts), on a live server: all of it or nothing, the fence
// refusing a step whose lease moved on, values bound (never written into the text), the connection reusable after
// a failure, and one write to the socket for the whole batch.
import { afterEach, beforeEach, expect, it } from "vitest";
import { createPool } from "../../../src/store/postgres/connection.js";
import { migrate } from "../../../src/store/postgres/migrations.js";
import { fencedCurrent, FENCED_SQLSTATE, StatementBatch } from "../../../src/store/postgres/statement-batch.js";
import { sql } from "../../../src/store/postgres/statements.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../../helpers/postgres.js";
import type pg from "pg";

const put = sql("test_put", "INSERT INTO leases (key, holder, token, expires_at) VALUES ($1, $2, $3, 0) RETURNING key");
const read = sql("test_read", "SELECT key, holder, token FROM leases ORDER BY key");
const fail = sql("test_fail", "SELECT 1 / $1::int AS x");

describeIfPostgres("PostgreSQL statement batch", () => {
  let database: FreshDatabase;
  let pool: pg.Pool;
  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, { poolMax: 1 });
    pool.on("error", () => undefined); // the drop after each test ends idle connections
    const client = await pool.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
  });
  afterEach(async () => {
    await pool.end();
    await database.drop();
  });

  const keys = async () => (await pool.query({ ...read, values: [] })).rows.map((r) => `${r.key}:${r.holder}:${r.token}`);

  it("runs its statements in order as one transaction, each seeing the ones before, one result each", async () => {
    const batch = new StatementBatch();
    batch.add(put, ["a", "h", 1]);
    const seen = batch.add(read, []);
    const results = await batch.send(pool);
    expect(results).toHaveLength(2);
    expect(results[seen]!.rows.map((r) => r.key)).toEqual(["a"]);
    expect(await keys()).toEqual(["a:h:1"]);
    expect(await new StatementBatch().send(pool)).toEqual([]); // nothing to send: no round trip, no empty transaction
  });

  it("writes nothing when a later statement fails, and the connection serves the next query", async () => {
    const batch = new StatementBatch();
    batch.add(put, ["a", "h", 1]);
    batch.add(fail, [0]);
    batch.add(put, ["b", "h", 1]);
    await expect(batch.send(pool)).rejects.toMatchObject({ code: "22012" }); // division_by_zero
    expect(await keys()).toEqual([]);
    // poolMax 1: the same connection, idle again (not left inside an aborted transaction).
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("binds values: text that looks like SQL is stored as written", async () => {
    const hostile = "x'); DROP TABLE leases; --";
    const batch = new StatementBatch();
    batch.add(put, [hostile, '$1 \\ " {a,b}', 1]);
    await batch.send(pool);
    expect(await keys()).toEqual([`${hostile}:$1 \\ " {a,b}:1`]);
  });

  it("the fence lets the holder's token through and refuses any other, naming the current token", async () => {
    await pool.query("INSERT INTO leases (key, holder, token, expires_at) VALUES ('s', 'me', 7, 0)");
    const ok = new StatementBatch();
    ok.fence("s", 7);
    ok.add(put, ["after-fence", "h", 1]);
    await ok.send(pool);

    const stale = new StatementBatch();
    stale.fence("s", 6);
    stale.add(put, ["stale", "h", 1]);
    const error = await stale.send(pool).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: FENCED_SQLSTATE });
    expect(fencedCurrent(error)).toBe(7);

    const nobody = new StatementBatch();
    nobody.fence("no-such-lease", 1);
    expect(fencedCurrent(await nobody.send(pool).catch((e: unknown) => e))).toBeNull();
    expect((await keys()).filter((k) => k !== "s:me:7")).toEqual(["after-fence:h:1"]);
  });

  it("joins the caller's transaction when given a client: the caller's ROLLBACK undoes it", async () => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const batch = new StatementBatch();
      batch.add(put, ["inside", "h", 1]);
      await batch.send(client);
      expect((await client.query({ ...read, values: [] })).rows).toHaveLength(1);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(await keys()).toEqual([]);
  });

  it("goes out in one write to the socket: BEGIN, the statements and COMMIT together", async () => {
    const client = await pool.connect();
    // What reaches the socket: Writable calls _write for one chunk or _writev for all it holds, once per write(2).
    type Sink = { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
    const stream = (client as unknown as { connection: { stream: Sink } }).connection.stream;
    const original = { _write: stream._write, _writev: stream._writev };
    let writes = 0;
    stream._write = (...a: unknown[]) => {
      writes++;
      original._write.apply(stream, a);
    };
    stream._writev = (...a: unknown[]) => {
      writes++;
      original._writev.apply(stream, a);
    };
    try {
      const batch = new StatementBatch();
      for (let i = 0; i < 5; i++) batch.add(put, [`k${i}`, "h", i]);
      await batch.send(client);
    } finally {
      Object.assign(stream, original);
      client.release();
    }
    expect(await keys()).toHaveLength(5);
    expect(writes).toBeLessThanOrEqual(1);
  });

  it("reads the current token from the fence's error, and nothing from other errors", () => {
    expect(fencedCurrent({ code: FENCED_SQLSTATE, detail: "7" })).toBe(7);
    expect(fencedCurrent({ code: FENCED_SQLSTATE, detail: "" })).toBeNull();
    expect(fencedCurrent({ code: "23505" })).toBeUndefined();
  });
});
