// report_back's edges: two reports in one message, a definition that refuses its caller's schema
// (`output_schema: false`), and a batch callee's structured result kept on the task — through the real SDK and the
// strict fake Messages API.
import { afterEach, describe, expect, it } from "vitest";
import { reply, systemText, text, toolUse } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { toolResults } from "../helpers/requests.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const CONTACT = {
  type: "object",
  properties: { name: { type: "string", minLength: 1 }, email: { type: "string", format: "email" } },
  required: ["name", "email"],
  additionalProperties: false,
};
const ANA = { name: "Ana", email: "ana@example.com" };
const BO = { name: "Bo", email: "bo@example.com" };

const spawn = (schema: unknown = CONTACT) => reply(toolUse("use_agent", { name: "extractor", message: "Ana and Bo", output_schema: schema }, "toolu_parent"));

/** The extractor's own tool results, as the log keeps them. */
async function childResults() {
  return (await h.store.steps.log("console:t"))
    .filter((e) => e.type === "tool_result")
    .map((e) => e.payload as { tool_use_id: string; content: string; is_error: boolean })
    .filter((p) => p.tool_use_id !== "toolu_parent");
}

describe("two report_back calls in one message", () => {
  it("the first valid one wins; the second is answered as not run", async () => {
    h = await startHarness({ files: agentFile("extractor", "Extract.") });
    h.fake.script(spawn(), reply(toolUse("report_back", ANA, "toolu_rb1"), toolUse("report_back", BO, "toolu_rb2")), (req) => {
      expect(toolResults(req)).toEqual([{ id: "toolu_parent", content: JSON.stringify(ANA), error: false }]);
      return text("Saved Ana.");
    });
    expect(await h.say("save the contact")).toEqual(["main: Saved Ana."]);
    expect(await childResults()).toEqual([
      { tool_use_id: "toolu_rb1", content: "reported", is_error: false },
      { tool_use_id: "toolu_rb2", content: "not run: agent:extractor finished in the same message", is_error: true },
    ]);
    const task = (await h.store.requests.ofSession("console:t"))[0]!.taskId!;
    expect((await h.store.tasks.get(task))?.structuredOutput).toEqual(ANA);
  });

  it("an invalid first report gets its violations, and the valid second one wins", async () => {
    h = await startHarness({ files: agentFile("extractor", "Extract.") });
    h.fake.script(spawn(), reply(toolUse("report_back", { name: "Ana" }, "toolu_bad"), toolUse("report_back", BO, "toolu_good")), (req) => {
      expect(toolResults(req)).toEqual([{ id: "toolu_parent", content: JSON.stringify(BO), error: false }]);
      return text("Saved Bo.");
    });
    expect(await h.say("save the contact")).toEqual(["main: Saved Bo."]);
    expect(await childResults()).toEqual([
      {
        tool_use_id: "toolu_bad",
        content: "report_back arguments do not match the schema:\n- (root): must have required property 'email'\nFix them and call report_back again (2 attempts left).",
        is_error: true,
      },
      { tool_use_id: "toolu_good", content: "reported", is_error: false },
    ]);
  });
});

describe("output_schema: false", () => {
  const SUMMARISER = agentFile("summariser", "Summarise in prose.", "output_schema: false\n");

  it("refuses use_agent's output_schema with a clear error, starts nothing, and works without one", async () => {
    h = await startHarness({ files: SUMMARISER });
    h.fake.script(
      (req) => {
        expect(systemText(req)).toContain("- summariser: The summariser agent for tests. (answers in plain text: takes no output_schema)");
        return reply(toolUse("use_agent", { name: "summariser", message: "sum up", output_schema: CONTACT }, "toolu_1"));
      },
      (req) => {
        expect(toolResults(req)).toEqual([
          {
            id: "toolu_1",
            error: true,
            content:
              'use_agent refused: the agent "summariser" does not take an output_schema (its definition sets output_schema: false) and answers in plain text; call it again without output_schema. No agent was started.',
          },
        ]);
        return reply(toolUse("use_agent", { name: "summariser", message: "sum up" }, "toolu_2"));
      },
      (req) => {
        const names = req.tools!.map((t) => t.name);
        expect(names).toContain("complete");
        expect(names).not.toContain("report_back");
        return reply(toolUse("complete", { result: "A short summary." }));
      },
      text("Here it is: a short summary."),
    );
    expect(await h.say("summarise")).toEqual(["main: Here it is: a short summary."]);
    expect((await h.store.steps.log("console:t")).filter((e) => e.type === "agent_session")).toHaveLength(1);
  });

  it("refuses call_agent's and use_skill's output_schema the same way", async () => {
    h = await startHarness({ files: { ...SUMMARISER, ...skillFile("prose", "Write prose.", "output_schema: false\n") } });
    h.fake.script(
      reply(
        toolUse("call_agent", { agent: "summariser", message: "sum up", output_schema: CONTACT }, "toolu_c"),
        toolUse("use_skill", { name: "prose", message: "write", output_schema: CONTACT }, "toolu_s"),
      ),
      (req) => {
        expect(toolResults(req)).toEqual([
          {
            id: "toolu_c",
            error: true,
            content:
              'call_agent refused: the agent "summariser" does not take an output_schema (its definition sets output_schema: false) and answers in plain text; call it again without output_schema. Nothing was called.',
          },
          {
            id: "toolu_s",
            error: true,
            content:
              'use_skill refused: the skill "prose" does not take an output_schema (its definition sets output_schema: false) and answers in plain text; call it again without output_schema. No skill was started.',
          },
        ]);
        return text("Neither takes a schema.");
      },
    );
    expect(await h.say("go")).toEqual(["main: Neither takes a schema."]);
    expect((await h.store.steps.log("console:t")).some((e) => e.type === "agent_session")).toBe(false);
  });

  it("is the only value besides a schema object: output_schema: true is a load error naming the field", async () => {
    h = await startHarness({ files: { ...SUMMARISER, ...agentFile("odd", "Odd.", "output_schema: true\n") } });
    expect([...h.catalog.current.agents.keys()]).toEqual(["summariser"]);
    expect(h.catalog.current.problems.join("\n")).toContain(
      "odd.md:4: output_schema must be a JSON Schema object (type: object, properties: …), or false to refuse the schema a caller passes",
    );
  });
});

describe("a batch callee's structured result", () => {
  it("is kept on the task, as an interactive child's is", async () => {
    h = await startHarness({ files: agentFile("extractor", "Extract.") });
    h.fake.script(reply(toolUse("call_agent", { agent: "extractor", message: "Ana", output_schema: CONTACT })), reply(toolUse("report_back", ANA)), text("Saved Ana."));
    expect(await h.say("save Ana")).toEqual(["main: Saved Ana."]);
    const task = (await h.store.requests.ofSession("console:t"))[0]!.taskId!;
    expect(await h.store.tasks.get(task)).toMatchObject({ status: "completed", structuredOutput: ANA });
  });
});
