// The SQLite store prepares each statement on its first use: opening a store prepares none, a statement is prepared
// once however often it runs, and every statement the store can run still compiles against the migrated schema.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { migrate } from "../../src/store/sqlite/migrations.js";
import { preparedOnUse } from "../../src/store/sqlite/prepared-on-use.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

let db: Database.Database;
beforeEach(() => {
  db = new Database(":memory:");
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)");
});
afterEach(() => db.close());

it("prepares nothing up front, each statement once on its first use, nested ones included", () => {
  const prepare = vi.spyOn(db, "prepare");
  const s = preparedOnUse(db, (db) => ({
    add: db.prepare(`INSERT INTO notes (text) VALUES (?)`),
    nested: { count: db.prepare(`SELECT count(*) AS n FROM notes`), unused: db.prepare(`SELECT * FROM notes`) },
  }));
  expect(prepare).not.toHaveBeenCalled();
  s.add.run("one");
  s.add.run("two");
  expect(s.nested.count.get()).toEqual({ n: 2 });
  expect(s.add).toBe(s.add);
  expect(prepare.mock.calls.map(([sql]) => sql)).toEqual([`INSERT INTO notes (text) VALUES (?)`, `SELECT count(*) AS n FROM notes`]);
  expect(Object.keys(s)).toEqual(["add", "nested"]);
});

it("reports a statement that does not compile where it is first used, naming what is wrong", () => {
  const s = preparedOnUse(db, (db) => ({ good: db.prepare(`SELECT 1 AS one`), broken: db.prepare(`SELECT missing FROM notes`) }));
  expect(s.good.get()).toEqual({ one: 1 });
  expect(() => s.broken.get()).toThrow(/no such column: missing/);
});

/** Every statement reachable from `value`, by its path (the lazily prepared ones are getters, which this runs). */
function statements(value: object, path: string): Array<[string, unknown]> {
  return Object.keys(value).flatMap((name) => {
    const item = (value as Record<string, unknown>)[name];
    if (typeof item === "object" && item !== null && !(item instanceof Object.getPrototypeOf(db.prepare("SELECT 1")).constructor))
      return statements(item, `${path}.${name}`);
    return [[`${path}.${name}`, item] as [string, unknown]];
  });
}

it("every statement the store prepares on use compiles against the migrated schema", async () => {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-prepared-"));
  const store = new SqliteStore(join(dir, "switchboard.db"));
  try {
    const inner = store as unknown as { stmts: object; schedules: { s: object }; usage: { stmts: object } };
    const all = [...statements(inner.stmts, "stmts"), ...statements(inner.schedules.s, "schedules"), ...statements(inner.usage.stmts, "usage")];
    expect(all.length).toBeGreaterThan(100);
    // Reading each one prepared it: one that does not compile threw above, naming its fault.
    for (const [path, statement] of all) expect((statement as Database.Statement).source, path).toMatch(/^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it("opens a store at the migrated schema without preparing its statements", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "switchboard-prepared-")), "switchboard.db");
  const migrated = new Database(file);
  migrate(migrated);
  migrated.close();
  const prepare = vi.spyOn(Database.prototype, "prepare");
  try {
    const store = new SqliteStore(file, () => 1_000, { exclusive: true });
    // The start-up sweep of a dead process's leases and memory job claims, and the few statements the workspaces and
    // a user's footprint keep outside the sets prepared on use: not the ~150 that the store can run.
    const prepared = prepare.mock.calls.map(([sql]) => sql);
    expect(prepared).toContain("UPDATE leases SET expires_at = 0");
    expect(prepared.length).toBeLessThan(10);
    await store.close();
  } finally {
    prepare.mockRestore();
    rmSync(join(file, ".."), { recursive: true, force: true });
  }
});
