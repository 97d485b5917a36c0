// One test per row of the Interactive Agents Behaviors table, driven through the gateway, the real
// Anthropic SDK and the strict fake Messages API.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lastUserText, reply, systemText, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import type { RequestRecord } from "../../src/store/store.js";
import { commitStep } from "../helpers/steps.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const FILES = {
  ...skillFile("interview", "Ask the user questions, then complete with a summary."),
  ...agentFile("researcher", "Research the question and complete with facts."),
};

function toolResultsIn(req: MessagesRequest): Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> {
  const last = req.messages[req.messages.length - 1]!;
  return Array.isArray(last.content) ? last.content.filter((b: { type: string }) => b.type === "tool_result") : [];
}

const lookup = {
  spec: { name: "lookup", description: "Looks things up.", input_schema: { type: "object" as const } },
  idempotent: true,
  run: async () => ({ content: "nothing found" }),
};

function toolNames(req: MessagesRequest): string[] {
  return (req.tools ?? []).map((t) => t.name);
}

describe("Behaviors", () => {
  it("skill completes on its first turn: push and immediate pop, the result reaches main", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "plan a trip" }, "toolu_a")),
      reply(toolUse("complete", { result: "goal: Lisbon in May" })),
      text("Done: Lisbon in May."),
    );
    expect(await h.say("help me plan a trip")).toEqual(["main: Done: Lisbon in May."]);
    const [, childCall, mainAgain] = h.fake.accepted();
    expect(systemText(childCall!)).toContain('You are the skill "interview"');
    expect(lastUserText(childCall!)).toBe("plan a trip");
    expect(toolResultsIn(mainAgain!)).toEqual([{ type: "tool_result", tool_use_id: "toolu_a", content: "goal: Lisbon in May" }]);
    expect(await h.runtime.stacks.hasActive("console:t")).toBe(false);
  });

  it("skill needs interaction: the user talks to the skill at depth 2", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })), text("Where to?"));
    const first = await h.send("plan a trip");
    expect(first.map((m) => [m.agent, m.depth, m.text])).toEqual([["skill:interview", 2, "Where to?"]]);
    expect((await h.store.tasks.active("console:t"))?.status).toBe("waiting_user");

    h.fake.script(text("When?"));
    expect(await h.say("Lisbon")).toEqual(["skill:interview: When?"]);
    const toSkill = h.fake.accepted().at(-1)!;
    expect(systemText(toSkill)).toContain('skill "interview"');
    expect(lastUserText(toSkill)).toBe("Lisbon");
  });

  it("nested: a skill calls an agent, and the user talks to the inner agent at depth 3", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })),
      reply(toolUse("use_agent", { name: "researcher", message: "best month for Lisbon?" })),
      text("Do you prefer heat or mild weather?"),
    );
    const shown = await h.send("plan a trip");
    expect(shown.map((m) => [m.agent, m.depth])).toEqual([["agent:researcher", 3]]);
    h.fake.script(text("Then May or October."));
    expect(await h.say("mild")).toEqual(["agent:researcher: Then May or October."]);
    expect(systemText(h.fake.accepted().at(-1)!)).toContain('agent "researcher"');
  });

  it("inner agent completes: the result cascades to the skill, which continues", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })),
      reply(toolUse("use_agent", { name: "researcher", message: "best month?" }, "toolu_r")),
      reply(toolUse("complete", { result: "May" })),
      text("Research says May. How many people?"),
    );
    expect(await h.say("plan a trip")).toEqual(["skill:interview: Research says May. How many people?"]);
    const skillResumed = h.fake.accepted().at(-1)!;
    expect(systemText(skillResumed)).toContain('skill "interview"');
    expect(toolResultsIn(skillResumed)).toEqual([{ type: "tool_result", tool_use_id: "toolu_r", content: "May" }]);
  });

  it("max iterations: the child is popped and the parent gets an error tool_result naming it and the limit", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.", "max_iterations: 2\n"), tools: [lookup] });
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "x" }, "toolu_s")),
      reply(toolUse("lookup", {})),
      reply(toolUse("lookup", {})),
      text("The interview could not finish."),
    );
    expect(await h.say("go")).toEqual(["main: The interview could not finish."]);
    const [result] = toolResultsIn(h.fake.accepted().at(-1)!);
    expect(result).toMatchObject({ tool_use_id: "toolu_s", is_error: true });
    expect(String(result!.content)).toContain("skill:interview");
    expect(String(result!.content)).toContain("limit of 2 iterations");
  });

  it("main agent resumes after a child: more model calls, then the final text", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "x" })),
      reply(toolUse("complete", { result: "facts" })),
      reply(toolUse("use_agent", { name: "researcher", message: "check facts" })),
      reply(toolUse("complete", { result: "checked" })),
      text("All set."),
    );
    expect(await h.say("go")).toEqual(["main: All set."]);
    expect(h.fake.accepted()).toHaveLength(5);
    expect(await h.store.tasks.active("console:t")).toBeNull();
  });

  it("stack empty + message: the main agent answers and the task completes", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(text("Hello!"));
    expect(await h.say("hi")).toEqual(["main: Hello!"]);
    const req = h.fake.accepted()[0]!;
    expect(systemText(req)).toContain("- interview: The interview skill for tests.");
    expect(systemText(req)).toContain("- researcher: The researcher agent for tests.");
    expect(toolNames(req)).toEqual(["use_skill", "use_agent", "call_agent"]);
    const tasks = (await h.store.steps.log("console:t")).map((e) => e.taskId);
    expect((await h.store.tasks.get(tasks[0]!))?.status).toBe("completed");
    // Pushed and popped in one step: nothing may stay behind to be resurrected after a restart.
    expect(await h.store.steps.frames("console:t")).toEqual([]);
  });

  it("stack active + message: the message goes to the top frame, not main", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q1?"));
    await h.send("go");
    h.fake.script(text("Q2?"));
    await h.send("answer one");
    const last = h.fake.accepted().at(-1)!;
    expect(systemText(last)).toContain('skill "interview"');
    expect(toolNames(last)).toEqual(["use_agent", "call_agent", "read_skill_file", "complete"]);
  });

  it("a model error in a child's turn cascades to the parent as an error tool_result", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "x" }, "toolu_e")),
      { error: { status: 500, type: "api_error", message: "upstream exploded" } },
      text("The interview failed; let's try again later."),
    );
    expect(await h.say("go")).toEqual(["main: The interview failed; let's try again later."]);
    const [result] = toolResultsIn(h.fake.accepted().at(-1)!);
    expect(result).toMatchObject({ tool_use_id: "toolu_e", is_error: true });
    expect(String(result!.content)).toContain("upstream exploded");
  });
});

describe("Errors", () => {
  it("max iterations at depth 1: the user gets a clear message and the task fails", async () => {
    h = await startHarness({ maxIterations: 1, tools: [lookup] });
    h.fake.script(reply(toolUse("lookup", {})));
    const [shown] = await h.send("go");
    expect(shown).toMatchObject({ agent: "switchboard", kind: "error" });
    expect(shown!.text).toContain("main stopped after reaching its limit of 1 iterations");
    expect(await h.runtime.stacks.hasActive("console:t")).toBe(false);
  });

  it("a model error at depth 1 tells the user what failed", async () => {
    h = await startHarness();
    h.fake.script({ error: { status: 529, type: "overloaded_error", message: "Overloaded" } });
    const [shown] = await h.send("hi");
    expect(shown!.text).toMatch(/Sorry, I could not finish that: Anthropic API error 529: Overloaded/);
    // The next message starts a fresh task and works; the failed turn's history is still valid.
    h.fake.script(text("Back again."));
    expect(await h.say("hello?")).toEqual(["main: Back again."]);
    expect(h.fake.rejected()).toEqual([]);
  });

  it("overload answers are retried by the SDK before anything fails", async () => {
    h = await startHarness({ maxRetries: 2 });
    const overloaded = { error: { status: 529, type: "overloaded_error", message: "Overloaded", retryAfterMs: 0 } };
    h.fake.script(overloaded, overloaded, text("Third time lucky."));
    expect(await h.say("hi")).toEqual(["main: Third time lucky."]);
    expect(h.fake.calls.map((c) => c.status)).toEqual([529, 529, 200]);
  });

  it("a tool execution error becomes an error tool_result and the model decides what to do", async () => {
    h = await startHarness({ tools: [{ ...lookup, run: () => Promise.reject(new Error("database is down")) }] });
    h.fake.script(reply(toolUse("lookup", {}, "toolu_l")), text("Lookup is down, sorry."));
    expect(await h.say("look it up")).toEqual(["main: Lookup is down, sorry."]);
    expect(toolResultsIn(h.fake.accepted().at(-1)!)).toEqual([
      { type: "tool_result", tool_use_id: "toolu_l", content: "lookup failed: database is down", is_error: true },
    ]);
  });

  it("a resumed request whose stack is already empty is closed without a model call", async () => {
    // Left by an earlier process: the request was running when it stopped, its stack already empty.
    const dir = mkdtempSync(join(tmpdir(), "switchboard-resumed-"));
    const dbFile = join(dir, "db.sqlite");
    const earlier = new SqliteStore(dbFile);
    const { request } = (await earlier.requests.insert({ id: "r1", sessionKey: "console:t", externalId: "x", kind: "message", userId: "alice", text: "hi" })) as {
      request: RequestRecord;
    };
    await commitStep(earlier, { sessionKey: "console:t", request: { id: request.id, status: "running" } });
    await earlier.close();
    try {
      h = await startHarness({ dbFile });
      await h.gateway.recover();
      await h.gateway.idle();
      expect((await h.store.requests.get("r1"))?.status).toBe("done");
      expect(h.fake.calls).toHaveLength(0);
    } finally {
      await h?.close();
      h = undefined!;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
