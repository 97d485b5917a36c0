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
  // A message's path, in a session of its own: the first pass prepares what it uses (each statement on its first
  // use), the second may prepare nothing more.
  const path = async (n: number) => {
    const key = `telegram:${n}`;
    const photo = {
      id: `file-${n}a`,
      publicId: `pub-${n}a`,
      sha256: `a${n}`.repeat(32),
      name: "a.jpg",
      mime: "image/jpeg",
      kind: "image" as const,
      size: 3,
      voice: false,
    };
    await store.sessions.open(key, () => `as-${n}`);
    await store.requests.insert(newRequest(`r${n}`, key, { files: [{ ...photo, bytes: Buffer.from("abc") }] }));
    await commitStep(store, {
      sessionKey: key,
      taskCreated: { id: `t${n}`, ownerId: ALICE, requestId: `r${n}` },
      request: { id: `r${n}`, status: "done", taskId: `t${n}` },
      files: [{ ...photo, id: `file-${n}b`, publicId: `pub-${n}b`, sha256: `c${n}`.repeat(32), ownerId: ALICE, bytes: Buffer.from("def") }],
      outbound: [{ id: `o${n}`, requestId: `r${n}`, taskId: `t${n}`, agent: "main", depth: 0, text: "done", kind: "message" }],
    });
    expect((await store.files.ofRequest(`r${n}`)).map((f) => f.id)).toEqual([`file-${n}a`]);
    expect(await store.files.get(`file-${n}b`)).toMatchObject({ requestId: null, ownerId: ALICE });
    expect(await store.files.byPublicId(`pub-${n}a`)).toMatchObject({ id: `file-${n}a` });
    expect(await store.files.bytes(key, `c${n}`.repeat(32))).toEqual(Buffer.from("def"));
    expect(await store.files.sessionBytes(key)).toBe(6);
    expect((await store.files.ofSession(key)).length).toBe(2);
    expect(await store.outbox.claimNext(key)).toMatchObject({ id: `o${n}` });
    await store.outbox.markDelivered(`o${n}`);
    expect(await store.userData.footprint(ALICE)).toMatchObject({ sessions: 0 });
  };
  await path(1);
  expect(prepare).toHaveBeenCalled();
  prepare.mockClear();
  await path(2);
  expect(prepare).not.toHaveBeenCalled();
  await store.close();
});
