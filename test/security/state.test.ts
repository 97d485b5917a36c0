// Stored state under attack: corrupt rows of every kind, approvals that a reused tool_use id or a delegation
// would get around, and a database written before user ids carried their source.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { migrate } from "../../src/store/sqlite/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { bankTools } from "../helpers/tools.js";

let h: Harness | undefined;
let app: App | undefined;
let fake: FakeAnthropic | undefined;
let dir = "";
afterEach(async () => {
  await h?.close();
  await app?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = app = fake = undefined;
  dir = "";
});

function captureLog() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, log: createLogger("info", stream) };
}

describe("corrupt rows affect only their own session", () => {
  it("a corrupt due approval neither stops startup nor the expiry sweep; it is logged once and the turn asks again", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-corrupt-"));
    const env = {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_MAX_RETRIES: "0",
      DATA_DIR: join(dir, "data"),
      SKILLS_DIR: join(dir, "s"),
      AGENTS_DIR: join(dir, "a"),
    };
    const config = loadConfig(env);
    app = await createApp(config, captureLog().log);
    // A write through http_request needs the owner's approval.
    fake.script(reply(toolUse("http_request", { method: "POST", url: "https://example.test/x", body: "hi" }, "toolu_post")));
    await app.gateway.submit({ sessionKey: "console:t", messageId: "1", userId: "console:alice", text: "post it" });
    await app.gateway.submit({ sessionKey: "console:other", messageId: "1", userId: "console:bob", text: "hello" });
    fake.script(text("hello bob"));
    await app.gateway.idle();
    const [approval] = await app.store.approvals.pending("console:t");
    await app.close();
    app = undefined;

    const db = new Database(join(dir, "data", "switchboard.db"));
    db.prepare(`UPDATE approvals SET input = '{"url": "https://exa', expires_at = 0 WHERE id = ?`).run(approval!.id);
    db.close();

    const { lines, log } = captureLog();
    app = await createApp(config, log); // expires due approvals at once: used to exit 1 here
    expect(await app.gateway.expireApprovals(Date.now() + 86_400_000)).toBe(0);
    expect(await app.gateway.expireApprovals(Date.now() + 86_400_000)).toBe(0);
    const reports = lines.filter((l) => String(l.msg).includes(`stored approval ${approval!.id} could not be read`));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ level: 50, session: "console:t", kind: "approval" });
    expect((await app.store.operations.quarantined()).map((q) => [q.kind, q.rowId])).toEqual([["approval", approval!.id]]);
    // The other session never noticed; the damaged one asks for a fresh approval of the same call.
    expect(await app.store.tasks.active("console:other")).toBeNull();
    await app.gateway.submit({ sessionKey: "console:t", messageId: "2", userId: "console:alice", text: "still there?" });
    await app.gateway.idle();
    const [fresh] = await app.store.approvals.pending("console:t");
    expect(fresh?.toolUseId).toBe("toolu_post");
    expect(fresh?.id).not.toBe(approval!.id);
  });

  it("/reset recovers a session whose frames cannot be read", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    expect(await h.say("plan a trip")).toEqual(["skill:interview: Where to?"]);
    const db = new Database(h.dbFile);
    db.prepare(`UPDATE frames SET data = '{"frameId": 1' WHERE session_key = 'console:t'`).run();
    db.close();
    h.runtime.stacks.invalidate("console:t");

    expect(await h.say("Rome")).toEqual(["switchboard: Sorry, the saved state of this chat is damaged, so I could not continue it. Send /reset to start over."]);
    expect(await h.say("/reset")).toEqual(["switchboard: Started a fresh conversation: earlier messages are forgotten."]);
    h.fake.script(text("Fresh start."));
    expect(await h.say("hello")).toEqual(["main: Fresh start."]);
    expect((await h.store.operations.quarantined()).filter((q) => q.kind === "frame")).toHaveLength(2);
    expect((await h.store.tasks.ofSession("console:t"))[0]?.status).toBe("cancelled");
  });

  it("/cancel also recovers it", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    await h.say("plan a trip");
    const db = new Database(h.dbFile);
    db.prepare(`UPDATE frames SET data = 'not json' WHERE session_key = 'console:t'`).run();
    db.close();
    h.runtime.stacks.invalidate("console:t");
    expect(await h.say("/cancel")).toEqual(["switchboard: Cancelled."]);
    h.fake.script(text("Hi again."));
    expect(await h.say("hi")).toEqual(["main: Hi again."]);
  });

  it("a task whose structured output cannot be read keeps working", async () => {
    h = await startHarness();
    h.fake.script(text("one"));
    await h.say("first");
    const db = new Database(h.dbFile);
    db.prepare(`UPDATE tasks SET structured_output = '{broken'`).run();
    db.close();
    h.fake.script(text("two"));
    expect(await h.say("second")).toEqual(["main: two"]);
    expect((await h.store.tasks.ofSession("console:t"))[0]?.structuredOutput).toBeNull();
    expect((await h.store.operations.quarantined()).map((q) => q.kind)).toEqual(["task"]);
  });
});

describe("approvals are bound to the call, and inherited", () => {
  it("an approval given for one input does not cover the same tool_use id with another input", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    h.fake.script(reply(toolUse("transfer", { amount: 1 }, "toolu_same")));
    const [prompt] = (await h.send("pay 1", { session: "a" })).filter((m) => m.approvalId);
    h.fake.script(text("paid 1"));
    await h.gateway.decide(prompt!.approvalId!, "alice", "approve");
    await h.gateway.idle();
    expect(t.runs).toEqual(["transfer 1"]);

    h.fake.script(reply(toolUse("transfer", { amount: 1000 }, "toolu_same")));
    const shown = await h.send("pay 1000", { session: "b" });
    expect(t.runs).toEqual(["transfer 1"]);
    expect(shown.at(-1)?.text).toMatch(/^🔐 main wants to run transfer\n• amount: 1000\n/);
    expect(await h.store.approvals.pending("console:b")).toHaveLength(1);
  });

  it("a guarded agent cannot shed its guard by handing the call to a skill", async () => {
    const t = bankTools();
    h = await startHarness({
      tools: t.list,
      files: { ...agentFile("banker", "Bank.", "requires_approval: [balance]\n"), ...skillFile("helper", "Help.", "allowed-tools: balance\n") },
    });
    h.fake.script(
      reply(toolUse("use_agent", { name: "banker", message: "check" })),
      reply(toolUse("use_skill", { name: "helper", message: "read it" })),
      reply(toolUse("balance", {}, "toolu_bal")),
    );
    const shown = await h.send("check my balance");
    expect(t.runs).toEqual([]);
    expect(shown.at(-1)?.text).toMatch(/^🔐 skill:helper wants to run balance/);
  });

  it("nor by calling another agent in batch mode", async () => {
    const t = bankTools();
    h = await startHarness({
      tools: t.list,
      files: { ...agentFile("banker", "Bank.", "requires_approval: [balance]\n"), ...agentFile("reader", "Read.", "mode: batch\n") },
    });
    h.fake.script(
      reply(toolUse("use_agent", { name: "banker", message: "check" })),
      reply(toolUse("call_agent", { name: "reader", task: "read the balance" })),
      reply(toolUse("balance", {}, "toolu_bal")),
      text("I could not read it."),
    );
    await h.send("check my balance");
    expect(t.runs).toEqual([]);
  });
});

describe("user ids stored before they carried their source", () => {
  it("are qualified by the session they belong to when the database is upgraded", async () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-migrate-"));
    const file = join(dir, "db.sqlite");
    const db = new Database(file);
    migrate(db, 5);
    const now = Date.now();
    const task = db.prepare(`INSERT INTO tasks (id, session_key, owner_id, status, created_at, updated_at) VALUES (?, ?, ?, 'completed', ?, ?)`);
    task.run("t1", "telegram:4242", "4242", now, now);
    task.run("t2", "slack:T1:C1:thread:1.2", "U1", now, now);
    task.run("t3", "http:3b1f", "alice", now, now);
    task.run("t4", "console:local", "me", now, now);
    db.prepare(`INSERT INTO sessions (key, main_agent_session_id, created_at, updated_at) VALUES ('http:3b1f', 'as1', ?, ?)`).run(now, now);
    db.prepare(
      `INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, created_at, updated_at) VALUES ('r1', 'slack:T1:D9', 'e', 'message', 'U7', 'hi', 'done', ?, ?)`,
    ).run(now, now);
    db.prepare(
      `INSERT INTO approvals (id, session_key, frame_id, tool_use_id, tool_name, input, agent, owner_id, status, requested_at, expires_at, decided_by)
       VALUES ('ap1', 'telegram:4242', 'f', 'toolu_1', 'transfer', '{"amount":1}', 'main', '4242', 'expired', ?, ?, 'timeout')`,
    ).run(now, now);
    db.close();

    const store = new SqliteStore(file);
    try {
      const owners: Array<string | undefined> = [];
      for (const id of ["t1", "t2", "t3", "t4"]) owners.push((await store.tasks.get(id))?.ownerId);
      expect(owners).toEqual(["telegram:4242", "slack:T1:U1", "http:alice", "console:me"]);
      expect((await store.requests.get("r1"))?.userId).toBe("slack:T1:U7");
      expect(await store.approvals.get("ap1")).toMatchObject({ ownerId: "telegram:4242", decidedBy: "timeout" });
      expect((await store.approvals.forCall({ id: "toolu_1", name: "transfer", input: { amount: 1 } }, { sessionKey: "telegram:4242", taskId: null }))?.id).toBe("ap1");
      expect((await store.sessions.find("http:3b1f"))?.ownerId).toBe("http:alice");
    } finally {
      await store.close();
    }
  });
});
