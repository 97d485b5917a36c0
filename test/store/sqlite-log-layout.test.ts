// SQLite's context log with one index, by session then agent session (migration 27), instead of one by session and
// one by agent session: a log row writes two B-trees, not three; a history is an exact search of its agent session's
// rows within its session, and every other read of the log searches by session; a database made before keeps
// every row.
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { migrate } from "../../src/store/sqlite/migrations.js";
import { prepareStatements } from "../../src/store/sqlite/statements.js";
import { fromOldSqlite } from "../helpers/old-schema.js";
import { commitStep } from "../helpers/steps.js";

const K = "telegram:1";
const row = (seq: number, key: string, agentSession: string, type: string, n: number) =>
  `INSERT INTO context_log (seq, session_key, task_id, request_id, frame_id, agent_session_id, type, payload, created_at)
   VALUES (${seq}, '${key}', 't1', 'r1', 'f1', '${agentSession}', '${type}', '{"n":${n},"agent_name":"${agentSession}"}', ${seq})`;

it("keeps every log row of a database made before, and reads histories and logs from them as before", async () => {
  const rows = [
    row(1, K, "as-main", "agent_session", 1),
    row(2, K, "as-main", "message", 2),
    row(3, K, "as-child", "agent_session", 3),
    row(4, "telegram:2", "as-other", "message", 4),
    row(5, K, "as-child", "message", 5),
    row(6, K, "as-main", "tool_result", 6),
    row(7, K, "as-child", "agent_session_complete", 7),
    row(8, K, "as-main", "compaction", 8),
  ];
  await fromOldSqlite(26, rows, async (store) => {
    const payloads = (entries: Array<{ payload: unknown }>) => entries.map((e) => (e.payload as { n: number }).n);
    expect(payloads(await store.steps.history(K, "as-main"))).toEqual([2, 6, 8]);
    expect(payloads(await store.steps.history(K, "as-child"))).toEqual([5]);
    expect(payloads(await store.steps.history("telegram:2", "as-other"))).toEqual([4]);
    expect(payloads(await store.steps.log(K))).toEqual([1, 2, 3, 5, 6, 7, 8]);
    expect(await store.steps.openAgentSessions(K)).toEqual([{ agentSessionId: "as-main", agentName: "as-main" }]);
    await commitStep(store, { sessionKey: K, log: [{ taskId: null, requestId: null, frameId: null, agentSessionId: "as-main", type: "message", payload: { n: 9 } }] });
    expect(payloads(await store.steps.history(K, "as-main"))).toEqual([2, 6, 8, 9]);
    expect((await store.steps.log(K)).map((e) => e.seq)).toEqual([1, 2, 3, 5, 6, 7, 8, 9]);
  });
});

it("indexes the log once, and every read of it searches that index by session", () => {
  const db = new Database(":memory:");
  try {
    migrate(db);
    const indexes = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'context_log' AND sql IS NOT NULL`).all();
    expect(indexes).toEqual([{ name: "log_by_session_agent" }]);
    const s = prepareStatements(db);
    const plan = (statement: Database.Statement, ...params: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail);
    // A history: exactly its agent session's rows, already in order.
    expect(plan(s.history, K, "as-1")).toEqual(["SEARCH context_log USING INDEX log_by_session_agent (session_key=? AND agent_session_id=?)"]);
    // A session's log and its open agent sessions: that session's rows (a sort of them), never the whole log.
    expect(plan(s.sessionLog, K)).toEqual(["SEARCH context_log USING INDEX log_by_session_agent (session_key=?)", "USE TEMP B-TREE FOR ORDER BY"]);
    const open = plan(s.openAgentSessions, K);
    expect(open.filter((line) => /^(SEARCH|SCAN) [sc]\b/.test(line))).toEqual([
      expect.stringMatching(/^SEARCH s USING INDEX log_by_session_agent \(session_key=\?\)$/),
      expect.stringMatching(/^SEARCH c USING INDEX log_by_session_agent \(session_key=\? AND agent_session_id=\?\)$/),
    ]);
  } finally {
    db.close();
  }
});
