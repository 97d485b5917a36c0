// Databases from before approvals named their request and belonged to their session and task (SQLite version 11,
// PostgreSQL version 3): upgrading reads each approval's request from the outbox row that asked it, and two sessions
// may then hold approvals of the very same call.
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { fromOldPostgres, fromOldSqlite } from "../helpers/old-schema.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../helpers/postgres.js";
import { commitStep } from "../helpers/steps.js";

const OLD_ROWS = [
  `INSERT INTO approvals (id, session_key, task_id, frame_id, tool_use_id, tool_name, input, input_hash, agent, owner_id, status, requested_at, expires_at)
   VALUES ('ap1', 'telegram:1', 't1', 'f1', 'toolu_1', 'transfer', '{"amount":1}', 'h1', 'main', 'telegram:1', 'pending', 1, 999999999999)`,
  `INSERT INTO approvals (id, session_key, task_id, frame_id, tool_use_id, tool_name, input, input_hash, agent, owner_id, status, requested_at, expires_at)
   VALUES ('ap2', 'telegram:1', 't1', 'f1', 'toolu_2', 'transfer', '{"amount":2}', 'h2', 'main', 'telegram:1', 'approved', 1, 999999999999)`,
  `INSERT INTO outbox (id, session_key, request_id, task_id, agent, depth, text, kind, approval_id, created_at)
   VALUES ('o1', 'telegram:1', 'req_1', 't1', 'main', 1, 'asks', 'notice', 'ap1', 1)`,
];

/** What the upgrade must give: ap1's request read from its prompt, none for ap2 (no prompt row), and per-session calls. */
async function expectUpgraded(store: Store): Promise<void> {
  expect(await store.approvals.get("ap1")).toMatchObject({ requestId: "req_1", taskId: "t1", status: "pending" });
  expect(await store.approvals.get("ap2")).toMatchObject({ requestId: null, status: "approved" });
  const call = { id: "toolu_1", name: "transfer", input: { amount: 1 } };
  await commitStep(store, {
    sessionKey: "telegram:2",
    approvalsCreated: [
      {
        id: "ap3",
        taskId: "t9",
        requestId: "req_9",
        frameId: "f9",
        toolUseId: call.id,
        toolName: call.name,
        input: call.input,
        agent: "main",
        ownerId: "telegram:2",
        timeoutMs: 1_000,
      },
    ],
  });
  expect(await store.approvals.forCall(call, { sessionKey: "telegram:2", taskId: "t9" })).toMatchObject({ id: "ap3", requestId: "req_9" });
}

describe("SQLite: upgrading approvals from schema version 11", () => {
  it("names each approval's request and lets another session ask for the same call", async () => {
    await fromOldSqlite(11, OLD_ROWS, expectUpgraded);
  });
});

describeIfPostgres("PostgreSQL: upgrading approvals from schema version 3", () => {
  let database: FreshDatabase | null = null;
  afterEach(async () => {
    await database?.drop();
    database = null;
  });

  it("names each approval's request and lets another session ask for the same call", async () => {
    database = await freshDatabase();
    await fromOldPostgres(database, 3, OLD_ROWS, expectUpgraded);
  });
});
