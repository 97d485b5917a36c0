// SQLite's physical layout: the index the hot path no longer writes (and what the operator's views read instead),
// and statements prepared once per connection rather than per call.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { migrate, SCHEMA_VERSION } from "../../src/store/sqlite/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { prepareStatements } from "../../src/store/sqlite/statements.js";
import { commitStep } from "../helpers/steps.js";
import { ALICE, newRequest } from "./contract/fixtures.js";

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "switchboard-layout-"));
  file = join(dir, "switchboard.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Opens the file beside the store, as an operator's sqlite3 shell would. */
function inspect<T>(read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const indexesOf = (db: Database.Database, table: string) =>
  (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name`).all(table) as Array<{ name: string }>).map((r) => r.name);

it("drops requests_activity from a database made before without losing a row", async () => {
  const old = new Database(file);
  old.pragma("journal_mode = WAL");
  migrate(old, 23);
  old.prepare(`INSERT INTO sessions (key, main_agent_session_id, created_at, updated_at) VALUES ('telegram:1', 'as-1', 5, 5)`).run();
  old
    .prepare(
      `INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, created_at, updated_at) VALUES ('r1', 'telegram:1', 'm1', 'message', ?, 'hi', 'done', 5, 9)`,
    )
    .run(ALICE);
  expect(indexesOf(old, "requests")).toContain("requests_activity");
  old.close();

  const store = new SqliteStore(file, () => 100);
  expect(await store.requests.get("r1")).toMatchObject({ id: "r1", text: "hi", status: "done", updatedAt: 9 });
  expect(await store.operations.sessionSummary("telegram:1")).toMatchObject({ key: "telegram:1", lastActivity: 9 });
  await store.close();
  expect(inspect((db) => db.pragma("user_version", { simple: true }))).toBe(SCHEMA_VERSION);
  expect(inspect((db) => indexesOf(db, "requests"))).not.toContain("requests_activity");
});

it("finds a session's last activity for the operator's views through that session's requests only", () => {
  const db = new Database(":memory:");
  migrate(db);
  const s = prepareStatements(db);
  for (const [name, statement, params] of [
    ["sessionSummary", s.sessionSummary, { key: "telegram:1" }],
    ["recentSessions", s.recentSessions, { limit: 50 }],
  ] as const) {
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(params) as Array<{ detail: string }>).map((r) => r.detail);
    // One index search per session picked, never a walk through every request of the database.
    expect(plan, name).toContainEqual(expect.stringMatching(/^SEARCH r USING INDEX sqlite_autoindex_requests_\d \(session_key=\?\)$/));
    expect(
      plan.filter((line) => /^SCAN r\b/.test(line)),
      name,
    ).toEqual([]);
  }
  db.close();
});

it("prepares no statement per call on a message's path, files included", async () => {
  const store = new SqliteStore(file, () => 1_000, { exclusive: true });
  const prepare = vi.spyOn((store as unknown as { db: Database.Database }).db, "prepare");
  const photo = { id: "file-1", publicId: "pub-1", sha256: "ab".repeat(32), name: "a.jpg", mime: "image/jpeg", kind: "image" as const, size: 3, voice: false };
  await store.sessions.open("telegram:1", () => "as-1");
  await store.requests.insert(newRequest("r1", "telegram:1", { files: [{ ...photo, bytes: Buffer.from("abc") }] }));
  await commitStep(store, {
    sessionKey: "telegram:1",
    taskCreated: { id: "t1", ownerId: ALICE, requestId: "r1" },
    request: { id: "r1", status: "done", taskId: "t1" },
    files: [{ ...photo, id: "file-2", publicId: "pub-2", sha256: "cd".repeat(32), ownerId: ALICE, bytes: Buffer.from("def") }],
    outbound: [{ id: "o1", requestId: "r1", taskId: "t1", agent: "main", depth: 0, text: "done", kind: "message" }],
  });
  expect((await store.files.ofRequest("r1")).map((f) => f.id)).toEqual(["file-1"]);
  expect(await store.files.get("file-2")).toMatchObject({ requestId: null, ownerId: ALICE });
  expect(await store.files.byPublicId("pub-1")).toMatchObject({ id: "file-1" });
  expect(await store.files.bytes("telegram:1", "cd".repeat(32))).toEqual(Buffer.from("def"));
  expect(await store.files.sessionBytes("telegram:1")).toBe(6);
  expect((await store.files.ofSession("telegram:1")).length).toBe(2);
  expect(await store.outbox.claimNext("telegram:1")).toMatchObject({ id: "o1" });
  await store.outbox.markDelivered("o1");
  expect(await store.userData.footprint(ALICE)).toMatchObject({ sessions: 0 });
  expect(prepare).not.toHaveBeenCalled();
  await store.close();
});
