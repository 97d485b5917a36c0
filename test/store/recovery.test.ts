// Restart recovery in-process: a second runtime opens the same SQLite file the first one left.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { lastUserText, reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { skillFile, startHarness, type Harness, type HarnessOptions } from "../helpers/harness.js";

let fake: FakeAnthropic;
let dir: string;
let open: Harness[] = [];
beforeEach(async () => {
  fake = await startFakeAnthropic();
  dir = mkdtempSync(join(tmpdir(), "switchboard-recovery-"));
  open = [];
});
afterEach(async () => {
  await fake.close();
  for (const h of open) await h.close();
  rmSync(dir, { recursive: true, force: true });
});

async function boot(options: HarnessOptions = {}): Promise<Harness> {
  const h = await startHarness({ files: skillFile("interview", "Ask."), ...options, fake, dbFile: join(dir, "switchboard.db") });
  open.push(h);
  return h;
}

describe("restart recovery", () => {
  it("continues with the same top frame and its full history; completed frames are not resurrected", async () => {
    const first = await boot();
    fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" }, "toolu_main")), text("Where to?"));
    expect(await first.say("plan a trip")).toEqual(["skill:interview: Where to?"]);
    await first.close();

    const second = await boot();
    fake.script(
      (req) => {
        expect(req.messages.map((m) => [m.role, JSON.stringify(m.content)])).toEqual([
          ["user", JSON.stringify([{ type: "text", text: "plan a trip" }])],
          ["assistant", JSON.stringify([{ type: "text", text: "Where to?" }])],
          ["user", JSON.stringify([{ type: "text", text: "Lisbon" }])],
        ]);
        return reply(toolUse("complete", { result: "Lisbon" }));
      },
      (req) => {
        expect(JSON.stringify(req.messages.at(-1))).toContain('"tool_use_id":"toolu_main"');
        return text("Lisbon it is.");
      },
    );
    expect(await second.say("Lisbon")).toEqual(["main: Lisbon it is."]);
    expect(fake.pending()).toBe(0);
    await second.close();

    const third = await boot();
    expect(await third.runtime.stacks.hasActive("console:t")).toBe(false);
    expect(await third.store.steps.frames("console:t")).toEqual([]);
  });

  it("a request cut off mid-turn runs again from its last commit, without repeating what was committed", async () => {
    const first = await boot();
    const hung = deferred<void>();
    fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), () => {
      hung.resolve();
      return { hang: true };
    });
    await first.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "plan a trip" });
    await hung.promise;
    first.crash();

    const second = await boot();
    fake.script((req) => {
      expect(lastUserText(req)).toBe("plan");
      expect(req.messages).toHaveLength(1);
      return text("Where to?");
    });
    await second.gateway.recover();
    await second.gateway.idle();
    expect(second.seen.map((m) => `${m.agent}: ${m.text}`)).toEqual(["skill:interview: Where to?"]);
    const log = await second.store.steps.log("console:t");
    expect(log.filter((e) => e.type === "agent_session")).toHaveLength(1);
    expect(log.filter((e) => e.type === "message" && (e.payload as { role: string }).role === "user")).toHaveLength(2);
  });

  it("a tool with side effects interrupted by a restart gets an error result instead of running twice", async () => {
    const started = deferred<void>();
    let runs = 0;
    const sendEmail: Tool = {
      spec: { name: "send_email", description: "Sends an email.", input_schema: { type: "object" } },
      idempotent: false,
      run: () => {
        runs++;
        started.resolve();
        return new Promise(() => {}); // the process dies while this runs
      },
    };
    const first = await boot({ tools: [sendEmail] });
    fake.script(reply(toolUse("send_email", {}, "toolu_mail")));
    await first.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "email Bob" });
    await started.promise;
    first.crash();

    const second = await boot({ tools: [sendEmail] });
    fake.script((req) => {
      expect(JSON.stringify(req.messages.at(-1))).toContain("interrupted by a restart; it may or may not have run");
      return text("The email may not have been sent; please check your outbox.");
    });
    await second.gateway.recover();
    await second.gateway.idle();
    expect(runs).toBe(1);
    expect(second.seen.map((m) => m.text)).toEqual(["The email may not have been sent; please check your outbox."]);
  });

  it("a batch call cut off by a restart is closed in the log, its last tool use answered", async () => {
    const started = deferred<void>();
    const sendEmail: Tool = {
      spec: { name: "send_email", description: "Sends an email.", input_schema: { type: "object" } },
      idempotent: false,
      run: () => {
        started.resolve();
        return new Promise(() => {});
      },
    };
    const files = { ...skillFile("interview", "Ask."), "agents/mailer.md": "---\nname: mailer\ndescription: Mails.\n---\nMail.\n" };
    const first = await boot({ tools: [sendEmail], files });
    fake.script(reply(toolUse("call_agent", { agent: "mailer", message: "mail Bob" }, "toolu_call")), reply(toolUse("send_email", {}, "toolu_mail")));
    await first.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "mail Bob" });
    await started.promise;
    first.crash();

    const second = await boot({ tools: [sendEmail], files });
    fake.script((req) => {
      expect(JSON.stringify(req.messages.at(-1))).toContain("call_agent was interrupted by a restart");
      return text("The mail may not have gone out.");
    });
    await second.gateway.recover();
    await second.gateway.idle();
    // Found by the simulation: the mailer's session stayed open with send_email unanswered.
    const log = await second.store.steps.log("console:t");
    expect(await second.store.steps.openAgentSessions("console:t")).toEqual([]);
    const answered = log.filter((e) => e.type === "tool_result").map((e) => (e.payload as { tool_use_id: string }).tool_use_id);
    expect(answered).toContain("toolu_mail");
  });

  it("an idempotent tool interrupted by a restart simply runs again", async () => {
    // Nothing was committed before the tool ran (no side effects to guard), so the whole request
    // runs again: the model is asked again and its tool runs a second time.
    const started = deferred<void>();
    let runs = 0;
    const lookup: Tool = {
      spec: { name: "lookup", description: "Looks up.", input_schema: { type: "object" } },
      idempotent: true,
      run: () => {
        runs++;
        if (runs === 1) {
          started.resolve();
          return new Promise(() => {});
        }
        return Promise.resolve({ content: "42" });
      },
    };
    const first = await boot({ tools: [lookup] });
    fake.script(reply(toolUse("lookup", {})));
    await first.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "look up" });
    await started.promise;
    first.crash();

    const second = await boot({ tools: [lookup] });
    fake.script((req) => {
      expect(req.messages).toEqual([{ role: "user", content: [{ type: "text", text: "look up" }] }]);
      return reply(toolUse("lookup", {}));
    }, text("It is 42."));
    await second.gateway.recover();
    await second.gateway.idle();
    expect(runs).toBe(2);
    expect(second.seen.map((m) => m.text)).toEqual(["It is 42."]);
  });

  it("a reply committed but not delivered before a restart is delivered once after it", async () => {
    const first = await boot();
    first.gateway.register({ prefix: "console", deliver: () => Promise.reject(new Error("network down")) });
    fake.script(text("Hello!"));
    await first.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "hi" });
    await first.gateway.idle();
    await first.close();

    const second = await boot();
    await second.gateway.idle();
    expect(second.seen.map((m) => m.text)).toEqual(["Hello!"]);
    await second.close();
    const third = await boot();
    await third.gateway.idle();
    expect(third.seen).toEqual([]);
  });

  it("a corrupt stored frame fails that chat with a clear message and a log line; other chats carry on", async () => {
    const first = await boot();
    fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q?"));
    await first.send("go", { session: "broken" });
    await first.close();
    const db = new Database(join(dir, "switchboard.db"));
    db.prepare("UPDATE frames SET data = '{\"frameId\": 3}' WHERE session_key = 'console:broken'").run();
    db.close();

    const second = await boot();
    const [shown] = await second.send("answer", { session: "broken" });
    expect(shown).toMatchObject({ kind: "error" });
    expect(shown!.text).toContain("saved state of this chat is damaged");
    expect(shown!.text).toContain("/reset");
    fake.script(text("Fine here."));
    expect(await second.say("hello", { session: "healthy" })).toEqual(["main: Fine here."]);
  });
});
