// SQLite's frames table without its frame_id key (migration 26): a frame pushed, updated or popped writes two
// B-trees, not three; every statement on frames still finds its rows through the session's (session_key, position)
// key; and a database made before keeps every frame.
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { migrate } from "../../src/store/sqlite/migrations.js";
import { prepareStatements } from "../../src/store/sqlite/statements.js";
import { fromOldSqlite } from "../helpers/old-schema.js";
import { commitStep } from "../helpers/steps.js";
import { frame } from "./contract/fixtures.js";

const quote = (value: unknown) => `'${JSON.stringify(value).replaceAll("'", "''")}'`;

it("keeps every frame of a database made before, in order, and writes them on under the session's key", async () => {
  const main = frame("f-main", { systemPrompt: "It's you." });
  const child = frame("f-child", { agentName: "skill:interview", agentType: "skill", iteration: 2 });
  const other = frame("f-other");
  const rows = [
    `INSERT INTO frames (frame_id, session_key, position, data) VALUES ('f-child', 'telegram:1', 1, ${quote(child)})`,
    `INSERT INTO frames (frame_id, session_key, position, data) VALUES ('f-main', 'telegram:1', 0, ${quote(main)})`,
    `INSERT INTO frames (frame_id, session_key, position, data) VALUES ('f-other', 'telegram:2', 0, ${quote(other)})`,
  ];
  await fromOldSqlite(25, rows, async (store) => {
    expect(await store.steps.frames("telegram:1")).toEqual([main, child]);
    expect(await store.steps.frames("telegram:2")).toEqual([other]);
    const grandchild = frame("f-grandchild", { agentName: "a", agentType: "agent" });
    await commitStep(store, { sessionKey: "telegram:1", framesPushed: [grandchild], framesUpdated: [{ ...child, iteration: 3 }], framesPopped: ["f-main"] });
    expect(await store.steps.frames("telegram:1")).toEqual([{ ...child, iteration: 3 }, grandchild]);
    // A step names its own session's frames only: another session's frame id is not touched.
    await commitStep(store, { sessionKey: "telegram:1", framesUpdated: [{ ...other, iteration: 9 }], framesPopped: ["f-other"] });
    expect(await store.steps.frames("telegram:2")).toEqual([other]);
  });
});

it("has one key on frames, (session_key, position), and every frame statement searches it by session", () => {
  const db = new Database(":memory:");
  try {
    migrate(db);
    const keys = db.prepare(`SELECT name FROM pragma_index_list('frames')`).all() as Array<{ name: string }>;
    expect(keys.map((k) => (db.prepare(`SELECT group_concat(name, ', ') AS on_ FROM pragma_index_info(?)`).get(k.name) as { on_: string }).on_)).toEqual([
      "session_key, position",
    ]);
    const s = prepareStatements(db);
    for (const [name, statement] of Object.entries({
      pushFrame: s.pushFrame,
      frames: s.frames,
      frameRows: s.frameRows,
      updateFrame: s.updateFrame,
      deleteFrame: s.deleteFrame,
      deleteFrames: s.deleteFrames,
    })) {
      const params = statement.source.includes("@") ? [{ frame: "f", key: "k", data: "{}" }] : Array.from({ length: statement.source.split("?").length - 1 }, () => "x");
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail);
      const reads = plan.filter((line) => /^(SEARCH|SCAN) frames\b/.test(line));
      expect(reads.length, name).toBeGreaterThan(0);
      expect(reads, name).toEqual(reads.map(() => expect.stringMatching(/^SEARCH frames USING (COVERING )?INDEX sqlite_autoindex_frames_1 \(session_key=\?\)$/)));
    }
  } finally {
    db.close();
  }
});
