// The engine's harder cases: deep nesting, several tool uses in one message, tools that swallow
// errors, tool rules per frame type, batch mode. All through the real SDK and the strict fake.
import { afterEach, describe, expect, it } from "vitest";
import { AgentStack, type StackFrame } from "../../src/runtime/frame.js";
import { Journal } from "../../src/runtime/journal.js";
import { returnToParent } from "../../src/runtime/transitions.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { lastUserText, reply, systemText, text, toolUse } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { toolResults } from "../helpers/requests.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

describe("nesting", () => {
  it("three levels with interaction at each level, each result landing in its caller", async () => {
    h = await startHarness({
      files: {
        ...skillFile("planner", "Plan."),
        ...agentFile("scout", "Scout."),
        ...agentFile("checker", "Check."),
      },
    });
    h.fake.script(reply(toolUse("use_skill", { name: "planner", message: "plan" }, "toolu_1")), text("Planner: what city?"));
    expect(await h.say("start")).toEqual(["skill:planner: Planner: what city?"]);

    h.fake.script(reply(toolUse("use_agent", { name: "scout", message: "scout Porto" }, "toolu_2")), text("Scout: budget?"));
    expect(await h.say("Porto")).toEqual(["agent:scout: Scout: budget?"]);

    h.fake.script(reply(toolUse("use_agent", { name: "checker", message: "check 500 EUR" }, "toolu_3")), text("Checker: nights?"));
    expect(await h.say("500 EUR")).toEqual(["agent:checker: Checker: nights?"]);
    expect((await h.runtime.stacks.getOrLoad("console:t")).depth).toBe(4);

    h.fake.script(reply(toolUse("complete", { result: "3 nights fit" })), text("Scout: OK, 3 nights fit. Beach or city?"));
    expect(await h.say("3")).toEqual(["agent:scout: Scout: OK, 3 nights fit. Beach or city?"]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([{ id: "toolu_3", content: "3 nights fit", error: false }]);

    h.fake.script(reply(toolUse("complete", { result: "Porto, city, 3 nights" })), text("Planner: shall I book?"));
    expect(await h.say("city")).toEqual(["skill:planner: Planner: shall I book?"]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([{ id: "toolu_2", content: "Porto, city, 3 nights", error: false }]);

    h.fake.script(reply(toolUse("complete", { result: "booked plan" })), text("Main: your plan is ready."));
    expect(await h.say("yes")).toEqual(["main: Main: your plan is ready."]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([{ id: "toolu_1", content: "booked plan", error: false }]);
    expect(await h.runtime.stacks.hasActive("console:t")).toBe(false);
  });
});

describe("tool uses", () => {
  it("with 3 tool uses where #2 spawns a child, #3 runs after the child completes and the model sees all three", async () => {
    const ran: string[] = [];
    const note: Tool = {
      spec: { name: "note", description: "Takes a note.", input_schema: { type: "object" } },
      idempotent: true,
      run: async (input) => {
        ran.push(String(input.n));
        return { content: `noted ${String(input.n)}` };
      },
    };
    h = await startHarness({ files: skillFile("interview", "Ask."), tools: [note] });
    h.fake.script(
      reply(toolUse("note", { n: 1 }, "toolu_n1"), toolUse("use_skill", { name: "interview", message: "ask" }, "toolu_s"), toolUse("note", { n: 3 }, "toolu_n3")),
      text("Question?"),
    );
    await h.send("go");
    expect(ran).toEqual(["1"]);
    h.fake.script(reply(toolUse("complete", { result: "answers" })), text("All three done."));
    expect(await h.say("answer")).toEqual(["main: All three done."]);
    expect(ran).toEqual(["1", "3"]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([
      { id: "toolu_n1", content: "noted 1", error: false },
      { id: "toolu_s", content: "answers", error: false },
      { id: "toolu_n3", content: "noted 3", error: false },
    ]);
    // The model was not called between the child's completion and tool #3.
    expect(h.fake.accepted()).toHaveLength(4);
  });

  it("a child activation passes through a tool that catches everything", async () => {
    const sneaky: Tool = {
      spec: { name: "delegate", description: "Delegates to the interview skill.", input_schema: { type: "object" } },
      idempotent: true,
      async run(_input, ctx) {
        try {
          const def = ctx.catalog.skills.get("interview")!;
          const { buildChildFrame } = await import("../../src/runtime/tools/spawn.js");
          ctx.activateChild(buildChildFrame(def, ctx.frame, "ask away", ctx, ["complete"]));
        } catch {
          // A generic handler that would swallow a plain exception.
        }
        return { content: "swallowed" };
      },
    };
    h = await startHarness({ files: skillFile("interview", "Ask."), tools: [sneaky] });
    h.fake.script(reply(toolUse("delegate", {})), text("Interview question?"));
    expect(await h.say("go")).toEqual(["skill:interview: Interview question?"]);
    expect((await h.runtime.stacks.getOrLoad("console:t")).depth).toBe(2);
  });

  it("complete is offered to every child and never to main; a main that names it anyway gets an error result", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    h.fake.script((req) => {
      expect(req.tools!.map((t) => t.name)).toEqual(["use_skill"]);
      return text("hi");
    });
    await h.send("hello");
    expect(h.fake.pending()).toBe(0);
    // A model that calls complete at main anyway is told it is not available; nothing is popped.
    h.fake.script({ ...reply(toolUse("complete", { result: "x" }, "toolu_c")), allowUnoffered: true }, text("Sorry."));
    expect(await h.say("again")).toEqual(["main: Sorry."]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([{ id: "toolu_c", content: 'tool "complete" is not available to main; available: use_skill', error: true }]);
  });

  it("skills cannot call use_skill and an agent cannot invoke itself; both get tool errors they can act on", async () => {
    h = await startHarness({ files: { ...skillFile("interview", "Ask."), ...agentFile("researcher", "Research.") } });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), (req) => {
      expect(req.tools!.map((t) => t.name)).toEqual(["use_agent", "call_agent", "read_skill_file", "complete"]);
      return text("skill ok");
    });
    expect(await h.say("go")).toEqual(["skill:interview: skill ok"]);
    h.fake.script({ ...reply(toolUse("use_skill", { name: "interview", message: "again" }, "toolu_us")), allowUnoffered: true }, text("ok"));
    expect(await h.say("nest yourself")).toEqual(["skill:interview: ok"]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([
      { id: "toolu_us", content: 'tool "use_skill" is not available to skill:interview; available: use_agent, call_agent, read_skill_file, complete', error: true },
    ]);
    h.fake.script(
      reply(toolUse("use_agent", { name: "researcher", message: "r" })),
      reply(toolUse("use_agent", { name: "researcher", message: "again" }, "toolu_self")),
      text("I cannot call myself."),
    );
    expect(await h.say("research please")).toEqual(["agent:researcher: I cannot call myself."]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([{ id: "toolu_self", content: "cycle detected: researcher → researcher", error: true }]);
  });

  it("an unknown skill name returns an error listing the available ones", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    h.fake.script(reply(toolUse("use_skill", { name: "nope", message: "x" }, "toolu_x")), text("No such skill."));
    await h.send("go");
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([{ id: "toolu_x", content: 'there is no skill named "nope"; available: interview', error: true }]);
  });
});

describe("batch mode", () => {
  it("a mode: batch skill runs to completion without taking over and its final text is the tool_result", async () => {
    h = await startHarness({ files: skillFile("summarise", "Summarise the text.", "mode: batch\n") });
    h.fake.script(
      reply(toolUse("use_skill", { name: "summarise", message: "long text" }, "toolu_b")),
      (req) => {
        expect(systemText(req)).toContain("you cannot talk with the user");
        expect(lastUserText(req)).toBe("long text");
        return text("short text");
      },
      text("Here is the summary: short text"),
    );
    expect(await h.say("summarise this")).toEqual(["main: Here is the summary: short text"]);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([{ id: "toolu_b", content: "short text", error: false }]);
    const types = (await h.store.steps.log("console:t")).map((e) => e.type);
    expect(types).toContain("agent_session");
    expect(types).toContain("agent_session_complete");
  });
});

describe("programming bugs", () => {
  it("a child without parent_tool_use_id fails loudly when it returns", () => {
    const frame = (name: string, parent: string | null): StackFrame => ({
      frameId: name,
      agentName: name,
      agentType: name === "main" ? "main" : "skill",
      definitionName: null,
      systemPrompt: "",
      model: "m",
      environment: {},
      iteration: 0,
      maxIterations: 25,
      effectiveTools: [],
      isSkillAgent: false,
      parentToolUseId: parent,
      agentSessionId: `as_${name}`,
      mode: "interactive",
      callChain: [],
      runningToolUseId: null,
      outputSchema: null,
      reportAttempts: 0,
      contextTokens: 0,
      approvalTools: [],
      history: [],
    });
    const stack = new AgentStack([frame("main", null), frame("skill:x", null)]);
    const writer = { sessionKey: "console:t", fence: { holder: "test", token: 1 }, commit: async () => {} };
    const journal = new Journal(writer, null, null);
    expect(() => returnToParent(stack, journal, "done", false)).toThrow(/has no parent_tool_use_id/);
  });
});
