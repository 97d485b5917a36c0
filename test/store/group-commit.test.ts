// Group commit on its own: writes asked for in one wave share one transaction, each in its own savepoint; a writer
// hears of its write only after the commit; a crash before or after the commit reaches every writer of the batch.
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";

let db: Database.Database;
const rows = () => (db.prepare("SELECT v FROM t ORDER BY v").all() as Array<{ v: string }>).map((r) => r.v);
const insert = (v: string) => () => db.prepare("INSERT INTO t (v) VALUES (?)").run(v).changes;

beforeEach(() => {
  db = new Database(":memory:");
  db.exec("CREATE TABLE t (v TEXT PRIMARY KEY)");
});
afterEach(() => db.close());

it("commits the writes of one wave in one transaction; a failing one is rolled back alone and rejects alone", async () => {
  const group = new GroupCommit(db);
  const results = await Promise.allSettled([
    group.run(insert("a")),
    group.run(() => {
      insert("b")();
      throw new Error("this write is refused");
    }),
    group.run(insert("c")),
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ message: "this write is refused" });
  expect(rows()).toEqual(["a", "c"]);
  expect(group.stats).toMatchObject({ batches: 1, writes: 3, largest: 3 });
});

it("tells a writer only after the transaction committed, announcing first", async () => {
  const seen: string[] = [];
  const group = new GroupCommit(db, { after: () => seen.push(`committed: ${rows().join(",")}`) });
  const done = group.run(insert("a"), () => seen.push("announced")).then(() => seen.push("writer told"));
  seen.push("asked");
  expect(rows()).toEqual([]);
  await done;
  expect(seen).toEqual(["asked", "committed: a", "announced", "writer told"]);
});

it("a death before the commit loses every write of the batch; one after it leaves them on disk; nobody is told either way", async () => {
  const before = new GroupCommit(db, {
    before: () => {
      throw new Error("died before the commit");
    },
  });
  const lost = await Promise.allSettled([before.run(insert("a")), before.run(insert("b"))]);
  expect(lost.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect(rows()).toEqual([]);

  const after = new GroupCommit(db, {
    after: () => {
      throw new Error("died after the commit");
    },
  });
  const unacknowledged = await Promise.allSettled([after.run(insert("c")), after.run(insert("d"))]);
  expect(unacknowledged.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect(rows()).toEqual(["c", "d"]);
});

it("a COMMIT that fails rejects every writer of the batch and keeps nothing", async () => {
  const group = new GroupCommit(db);
  db.exec("CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)");
  db.pragma("foreign_keys = ON");
  const results = await Promise.allSettled([group.run(insert("a")), group.run(() => db.prepare("INSERT INTO child (p) VALUES (42)").run())]);
  expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_CONSTRAINT_FOREIGNKEY" });
  expect(rows()).toEqual([]);
});
