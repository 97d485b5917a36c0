// Structured results: output_schema on use_skill/use_agent and in definitions, report_back validated with
// Ajv, retries bounded, results stored — all through the real SDK and the strict fake Messages API.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { lastUserText, reply, startFakeAnthropic, systemText, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { toolResults } from "../helpers/requests.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const CONTACT = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1 },
    email: { type: "string", format: "email" },
    phone: { type: "string" },
  },
  required: ["name", "email"],
  additionalProperties: false,
};

const FILES = { ...agentFile("extractor", "Extract contact details."), ...skillFile("interview", "Ask.") };

function spawnWith(schema: unknown, id = "toolu_parent") {
  return reply(toolUse("use_agent", { name: "extractor", message: "Ana Lima, ana@example.com", output_schema: schema }, id));
}

describe("report_back", () => {
  it("offers report_back with the schema as its input_schema and returns the JSON to the parent", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      spawnWith(CONTACT),
      (req) => {
        const names = req.tools!.map((t) => t.name);
        expect(names).toContain("report_back");
        expect(names).not.toContain("complete");
        expect(req.tools!.find((t) => t.name === "report_back")!.input_schema).toEqual(CONTACT);
        expect(systemText(req)).toContain("call report_back with the result as its arguments");
        return reply(toolUse("report_back", { name: "Ana Lima", email: "ana@example.com" }));
      },
      (req) => {
        expect(toolResults(req)).toEqual([{ id: "toolu_parent", content: '{"name":"Ana Lima","email":"ana@example.com"}', error: false }]);
        return text("Saved Ana.");
      },
    );
    expect(await h.say("save this contact")).toEqual(["main: Saved Ana."]);
    const complete = (await h.store.steps.log("console:t")).find((e) => e.type === "agent_session_complete")!;
    expect(complete.payload).toMatchObject({ structured_output: { name: "Ana Lima", email: "ana@example.com" }, is_error: false });
    expect((await h.store.tasks.get(complete.taskId!))?.structuredOutput).toEqual({ name: "Ana Lima", email: "ana@example.com" });
  });

  it("lists every violation so the child can correct itself on the next call", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      spawnWith(CONTACT),
      reply(toolUse("report_back", { name: "", email: "not-an-email", fax: "1" }, "toolu_bad")),
      (req) => {
        expect(toolResults(req)).toEqual([
          {
            id: "toolu_bad",
            error: true,
            content:
              'report_back arguments do not match the schema:\n- (root): must NOT have additional properties (fax)\n- /name: must NOT have fewer than 1 characters\n- /email: must match format "email"\nFix them and call report_back again (2 attempts left).',
          },
        ]);
        return reply(toolUse("report_back", { name: "Ana", email: "ana@example.com" }));
      },
      (req) => {
        expect(toolResults(req)[0]).toMatchObject({ content: '{"name":"Ana","email":"ana@example.com"}', error: false });
        return text("ok");
      },
    );
    await h.send("go");
    expect(h.fake.pending()).toBe(0);
  });

  it("after 3 invalid reports the child fails and the parent gets the last violations", async () => {
    h = await startHarness({ files: FILES });
    const bad = () => reply(toolUse("report_back", { name: "Ana" }));
    h.fake.script(spawnWith(CONTACT), bad(), bad(), bad(), (req) => {
      expect(toolResults(req)).toEqual([
        {
          id: "toolu_parent",
          error: true,
          content: "agent:extractor failed: no valid report_back after 3 attempts; the last one had these violations:\n- (root): must have required property 'email'",
        },
      ]);
      return text("The extractor could not produce a valid contact.");
    });
    expect(await h.say("go")).toEqual(["main: The extractor could not produce a valid contact."]);
    const complete = (await h.store.steps.log("console:t")).find((e) => e.type === "agent_session_complete")!;
    expect(complete.payload).toMatchObject({ is_error: true });
  });

  it("refuses an invalid schema or a non-object schema to the parent at once, spawning nothing", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(
      spawnWith({ type: "object", properties: { age: { type: "integer", minimum: "lots" } } }, "toolu_1"),
      (req) => {
        expect(toolResults(req)).toEqual([
          {
            id: "toolu_1",
            error: true,
            content: "use_agent refused: output_schema is not a valid JSON Schema: schema is invalid: data/properties/age/minimum must be number. No agent was started.",
          },
        ]);
        return spawnWith({ type: "array", items: { type: "string" } }, "toolu_2");
      },
      (req) => {
        expect(toolResults(req)[0]!.content).toBe(
          'use_agent refused: output_schema must describe an object (top-level "type": "object"), got "array"; tool arguments are always objects, so wrap the value in a property. No agent was started.',
        );
        return text("I could not start the extractor.");
      },
    );
    await h.send("go");
    expect((await h.store.steps.log("console:t")).some((e) => e.type === "agent_session")).toBe(false);
  });

  it("validates nested 2020-12 schemas with $defs/$ref and draft-07 schemas with definitions", async () => {
    h = await startHarness({ files: FILES });
    const s2020 = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { person: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
      properties: { people: { type: "array", items: { $ref: "#/$defs/person" }, minItems: 1 } },
      required: ["people"],
    };
    const draft07 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      definitions: { when: { type: "string", format: "date" } },
      properties: { due: { $ref: "#/definitions/when" } },
      required: ["due"],
    };
    h.fake.script(
      spawnWith(s2020),
      (req) => {
        // The dialect marker is not sent to the API as part of the tool schema.
        expect(req.tools!.find((t) => t.name === "report_back")!.input_schema).not.toHaveProperty("$schema");
        return reply(toolUse("report_back", { people: [{ name: "Ana" }, { nom: "Bo" }] }));
      },
      (req) => {
        expect(toolResults(req)[0]!.content).toContain("- /people/1: must have required property 'name'");
        return reply(toolUse("report_back", { people: [{ name: "Ana" }, { name: "Bo" }] }));
      },
      spawnWith(draft07, "toolu_07"),
      reply(toolUse("report_back", { due: "tomorrow" })),
      (req) => {
        expect(toolResults(req)[0]!.content).toContain('- /due: must match format "date"');
        return reply(toolUse("report_back", { due: "2026-12-01" }));
      },
      (req) => {
        expect(toolResults(req)).toEqual([{ id: "toolu_07", content: '{"due":"2026-12-01"}', error: false }]);
        return text("done");
      },
    );
    await h.send("go");
    expect(h.fake.pending()).toBe(0);
  });

  it("with report_back beside other tool uses, earlier ones run, later ones are closed, and the log stays valid", async () => {
    let runs = 0;
    const note: Tool = {
      spec: { name: "note", description: "Takes a note.", input_schema: { type: "object" } },
      idempotent: true,
      run: async () => {
        runs++;
        return { content: "noted" };
      },
    };
    h = await startHarness({ files: FILES, tools: [note] });
    h.fake.script(
      spawnWith(CONTACT),
      reply(toolUse("note", {}, "toolu_n1"), toolUse("report_back", { name: "Ana", email: "ana@example.com" }, "toolu_rb"), toolUse("note", {}, "toolu_n2")),
      text("done"),
    );
    await h.send("go");
    expect(runs).toBe(1);
    const childResults = (await h.store.steps.log("console:t"))
      .filter((e) => e.type === "tool_result" && e.agentSessionId !== null && e.frameId !== null)
      .map((e) => e.payload as { tool_use_id: string; content: string; is_error: boolean })
      .filter((p) => p.tool_use_id !== "toolu_parent");
    expect(childResults).toEqual([
      { tool_use_id: "toolu_n1", content: "noted", is_error: false },
      { tool_use_id: "toolu_rb", content: "reported", is_error: false },
      { tool_use_id: "toolu_n2", content: "not run: agent:extractor finished in the same message", is_error: true },
    ]);
  });

  it("an interactive child with a schema can talk to the user before reporting back", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(spawnWith(CONTACT), text("What is Ana's email?"));
    expect(await h.say("go")).toEqual(["agent:extractor: What is Ana's email?"]);
    h.fake.script(reply(toolUse("report_back", { name: "Ana", email: "ana@example.com" })), text("Saved."));
    expect(await h.say("ana@example.com")).toEqual(["main: Saved."]);
  });

  it("a definition's default output_schema applies when the caller gives none", async () => {
    h = await startHarness({
      files: agentFile("dated", "Give a date.", "output_schema:\n  type: object\n  properties:\n    date: { type: string, format: date }\n  required: [date]\n"),
    });
    h.fake.script(
      reply(toolUse("use_agent", { name: "dated", message: "when?" })),
      (req) => {
        expect(req.tools!.map((t) => t.name)).toContain("report_back");
        return reply(toolUse("report_back", { date: "2026-11-21" }));
      },
      text("It is 2026-11-21."),
    );
    expect(await h.say("go")).toEqual(["main: It is 2026-11-21."]);
  });

  it("a batch child with a schema that answers in plain text is told to report_back", async () => {
    h = await startHarness({ files: agentFile("extractor", "Extract.", "mode: batch\n") });
    h.fake.script(
      spawnWith(CONTACT),
      text("Ana, ana@example.com"),
      (req) => {
        expect(lastUserText(req)).toContain("call report_back");
        return reply(toolUse("report_back", { name: "Ana", email: "ana@example.com" }));
      },
      (req) => {
        expect(toolResults(req)[0]).toMatchObject({ content: '{"name":"Ana","email":"ana@example.com"}', error: false });
        return text("ok");
      },
    );
    await h.send("go");
    expect(h.fake.pending()).toBe(0);
  });

  it("the shipped contact-extractor agent returns {name, email, phone?}", async () => {
    h = await startHarness();
    const { cpSync } = await import("node:fs");
    cpSync(new URL("../../agents/contact-extractor.md", import.meta.url).pathname, join(h.root, "agents/contact-extractor.md"));
    h.catalog.reload();
    h.fake.script(
      reply(toolUse("use_agent", { name: "contact-extractor", message: "Best, Ana Lima — ana@example.com, +351 912 345 678" }, "toolu_c")),
      (req) => {
        expect(systemText(req)).toContain("You extract contact details");
        return reply(toolUse("report_back", { name: "Ana Lima", email: "ana@example.com", phone: "+351 912 345 678" }));
      },
      (req) => {
        expect(JSON.parse(toolResults(req)[0]!.content)).toEqual({ name: "Ana Lima", email: "ana@example.com", phone: "+351 912 345 678" });
        return text("Contact saved.");
      },
    );
    expect(await h.say("save Ana's signature")).toEqual(["main: Contact saved."]);
  });
});

describe("report_back across a restart", () => {
  let fake: FakeAnthropic;
  let dir: string;
  afterEach(async () => {
    await fake?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a schema'd child waiting for the user reports back after a restart", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-rb-"));
    const dbFile = join(dir, "db.sqlite");
    const first = await startHarness({ files: FILES, fake, dbFile });
    fake.script(spawnWith(CONTACT), text("Ana's email?"));
    await first.send("go");
    await first.close();

    h = await startHarness({ files: FILES, fake, dbFile });
    fake.script(
      (req) => {
        expect(req.tools!.find((t) => t.name === "report_back")!.input_schema).toEqual(CONTACT);
        return reply(toolUse("report_back", { name: "Ana", email: "bad" }));
      },
      (req) => {
        expect(toolResults(req)[0]!.content).toContain("(2 attempts left)");
        return reply(toolUse("report_back", { name: "Ana", email: "ana@example.com" }));
      },
      (req) => {
        expect(toolResults(req)).toEqual([{ id: "toolu_parent", content: '{"name":"Ana","email":"ana@example.com"}', error: false }]);
        return text("Saved after restart.");
      },
    );
    expect(await h.say("ana@example.com")).toEqual(["main: Saved after restart."]);
  });
});
