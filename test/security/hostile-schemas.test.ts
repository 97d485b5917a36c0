// JSON Schemas from the model as an attacker: output_schema on use_skill and call_agent, and the report_back values
// checked against them. Each case froze the whole gateway before (a backtracking pattern, nested anyOf over shared
// definitions, uniqueItems over thousands of objects): every chat waited seconds, doubling with each character or
// level. Driven through the real runtime, the real SDK and the strict fake Messages API, while another chat's message
// is answered at the same time; the event loop's longest stall is measured with monitorEventLoopDelay.
import { afterEach, describe, expect, it } from "vitest";
import { WorkerSchemaChecker } from "../../src/catalog/schema-checker.js";
import { systemTimers } from "../../src/runtime/deps.js";
import { lastUserText, reply, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { longestStall } from "../helpers/event-loop.js";
import { agentFile, schemaWorker, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { resultTexts } from "../helpers/requests.js";

/**
 * The longest the event loop may stall while a hostile schema is handled. The attacks below held it for seconds
 * (and, a few characters or levels more, for minutes); what remains is ordinary work (SQLite commits, the SDK, GC),
 * with headroom for a machine shared with other test runs.
 */
const STALL_BOUND_MS = 400;

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

/** A schema of `depth` levels of anyOf over two references to the level below: 2^depth paths, 3·depth lines. */
function sharedAnyOf(depth: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { n0: { type: "string", minLength: 5 } };
  for (let i = 1; i <= depth; i++) defs[`n${i}`] = { anyOf: [{ $ref: `#/definitions/n${i - 1}` }, { $ref: `#/definitions/n${i - 1}` }] };
  return { type: "object", definitions: defs, properties: { x: { $ref: `#/definitions/n${depth}` } }, required: ["x"] };
}

interface Case {
  name: string;
  tool: "use_skill" | "call_agent";
  schema: Record<string, unknown>;
  /** What the child reports, in order (the first is the hostile one). */
  reports: Array<Record<string, unknown>>;
  /** What the child is told about its first report (null: it is accepted). */
  childSees: string | null;
  /** The tool result main gets. */
  mainSees: string | RegExp;
}

// Sized to hold the event loop for seconds before (each character or level more doubles that), not for hours.
const a24 = `${"a".repeat(24)}!`;
const a22 = `${"a".repeat(22)}!`;
const CASES: Case[] = [
  {
    name: "a backtracking pattern, checked against a value the model chose",
    tool: "use_skill",
    schema: { type: "object", properties: { code: { type: "string", pattern: "^(a+)+$" } }, required: ["code"] },
    reports: [{ code: a24 }, { code: "aaa" }],
    childSees: 'report_back arguments do not match the schema:\n- /code: must match pattern "^(a+)+$"\nFix them and call report_back again (2 attempts left).',
    mainSees: '{"code":"aaa"}',
  },
  {
    name: "a backtracking patternProperties key, checked against a property name",
    tool: "use_skill",
    schema: { type: "object", patternProperties: { "^(a|a)*$": { type: "string" } }, additionalProperties: false },
    reports: [{ [a22]: "x" }, { aaa: "x" }],
    childSees: `report_back arguments do not match the schema:\n- (root): must NOT have additional properties (${a22})\nFix them and call report_back again (2 attempts left).`,
    mainSees: '{"aaa":"x"}',
  },
  {
    name: "a backtracking propertyNames pattern in a 2020-12 schema, through call_agent",
    tool: "call_agent",
    schema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", propertyNames: { pattern: "^(\\w+\\s?)*$" } },
    reports: [{ [`${"word ".repeat(7)}!`]: 1 }, { ok: 1 }],
    childSees: expect.stringContaining("(root): must match pattern") as unknown as string,
    mainSees: '{"ok":1}',
  },
  {
    name: "nested anyOf over shared definitions (2^19 paths in 60 lines)",
    tool: "use_skill",
    schema: sharedAnyOf(19),
    reports: [{ x: "ab" }],
    childSees: null,
    mainSees:
      /^use_skill refused: output_schema has \d+ subschemas once every \$ref is followed; the limit is 1000\. Share less through \$ref, or describe fewer alternatives\. No skill was started\.$/,
  },
  {
    name: "uniqueItems over 3000 objects",
    tool: "call_agent",
    schema: { type: "object", properties: { rows: { type: "array", uniqueItems: true } }, required: ["rows"] },
    reports: [{ rows: Array.from({ length: 3000 }, (_, n) => ({ n })) }],
    childSees: null,
    mainSees: /^\{"rows":\[\{"n":0\},/,
  },
];

describe("a hostile output_schema never stalls the event loop", () => {
  it.each(CASES)("$name", { timeout: 120_000 }, async (c) => {
    h = await startHarness({ files: { ...skillFile("coder", "Write the code."), ...agentFile("worker", "Do the work.") } });
    const reports = [...c.reports];
    const childSaw: string[] = [];
    let mainSaw: string | null = null;
    h.fake.fallback((req: MessagesRequest) => {
      if (lastUserText(req) === "are you there?" || lastUserText(req) === "good morning") return text("yes");
      if (req.tools?.some((t) => t.name === "report_back")) {
        const seen = resultTexts(req);
        if (seen.length > 0) childSaw.push(seen[0]!.content);
        return reply(toolUse("report_back", reports.shift() ?? {}));
      }
      const results = resultTexts(req);
      if (results.length === 0) {
        const input =
          c.tool === "use_skill" ? { name: "coder", message: "make a code", output_schema: c.schema } : { agent: "worker", message: "do it", output_schema: c.schema };
        return reply(toolUse(c.tool, input));
      }
      mainSaw = results[0]!.content;
      return text("done");
    });
    // What a running gateway has done before any attack: its schema worker is up (app.ts starts it for the shipped
    // contact-extractor's schema) and a chat has been answered. Only the attack is measured.
    await schemaWorker().compile({ type: "object" });
    await h.send("good morning", { session: "warm" });
    const { result, stallMs } = await longestStall(() => Promise.all([h.send("make a code"), h.send("are you there?", { session: "b" })]));
    const shown = (session: string) => [...new Set(result.flat())].filter((m) => m.sessionKey === session).map((m) => `${m.agent}: ${m.text}`);
    expect(shown("console:t")).toEqual(["main: done"]);
    expect(shown("console:b")).toEqual(["main: yes"]);
    expect(stallMs).toBeLessThan(STALL_BOUND_MS);
    if (c.childSees === null) expect(childSaw).toEqual([]);
    else expect(childSaw[0]).toEqual(c.childSees);
    if (typeof c.mainSees === "string") expect(mainSaw).toBe(c.mainSees);
    else expect(mainSaw).toMatch(c.mainSees);
    expect(h.fake.rejected()).toEqual([]);
  });
});

describe("the schema worker", () => {
  it("answers a request that runs past its time limit with an error and serves the next one with a new worker", { timeout: 60_000 }, async () => {
    const checker = new WorkerSchemaChecker({ timers: systemTimers, timeLimitMs: 5 });
    try {
      // 900 properties: a legitimate but large schema that Ajv needs far more than 5 ms to compile.
      const big = { type: "object", properties: Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`p${i}`, { type: "string" }])) };
      expect(await checker.compile(big)).toEqual({
        ok: false,
        error: "output_schema took longer than 0.005 s to compile, so it was refused; make it smaller or simpler",
      });
      // A request that fits in the limit still has to wait for a worker to start; the start has its own limit.
      const small = await checker.check({ type: "object", properties: { n: { type: "integer" } } }, { n: "one" });
      expect(small.ok ? [] : small.violations).toEqual(expect.arrayContaining([expect.stringMatching(/^\/n: must be integer$|took longer than 0\.005 s/)]));
    } finally {
      await checker.close();
    }
  });

  it("refuses patterns RE2 cannot run in linear time, naming where they are", async () => {
    const checker = new WorkerSchemaChecker({ timers: systemTimers });
    try {
      const at = (pattern: string) => checker.compile({ type: "object", properties: { pw: { type: "string", pattern } } });
      expect(await at("^(?=.*[A-Z]).{8,}$")).toEqual({
        ok: false,
        error:
          'output_schema: /properties/pw/pattern: pattern "^(?=.*[A-Z]).{8,}$" cannot be used: it uses a lookaround, which patterns here cannot use: they run on RE2, which guarantees linear time (no lookarounds, no backreferences)',
      });
      expect(await at("(a)\\1")).toMatchObject({ ok: false, error: expect.stringContaining("uses the backreference \\1") });
      expect(await at("(?<q>['\"]).*\\k<q>")).toMatchObject({ ok: false, error: expect.stringContaining("uses the backreference \\k<q>") });
      expect(await at("[")).toMatchObject({ ok: false, error: expect.stringContaining('pattern "[" is not a valid regular expression') });
      expect(await at(".{1000}.{1000}.{1000}")).toMatchObject({ ok: false, error: expect.stringContaining("too large once compiled") });
      expect(await at("^[\\p{L} .'-]{1,64}$")).toEqual({ ok: true });
    } finally {
      await checker.close();
    }
  });

  it("keeps each schema's own patterns apart on one long-lived worker (meta-schemas' included)", async () => {
    const checker = new WorkerSchemaChecker({ timers: systemTimers });
    try {
      const withPattern = (pattern: string, $schema?: string) => ({ ...($schema ? { $schema } : {}), type: "object", properties: { v: { type: "string", pattern } } });
      for (const $schema of [undefined, "https://json-schema.org/draft/2020-12/schema"]) {
        expect(await checker.check(withPattern("^a+$", $schema), { v: "aaa" })).toEqual({ ok: true });
        expect(await checker.check(withPattern("^b+$", $schema), { v: "aaa" })).toEqual({ ok: false, violations: ['/v: must match pattern "^b+$"'] });
        expect(await checker.check(withPattern("^b+$", $schema), { v: "bb" })).toEqual({ ok: true });
      }
    } finally {
      await checker.close();
    }
  });

  it("refuses recursion, references out of the schema and sizes past the limits before anything is compiled", async () => {
    const checker = new WorkerSchemaChecker({ timers: systemTimers });
    try {
      const refused = async (schema: unknown) => {
        const result = await checker.compile(schema);
        return result.ok ? "ok" : result.error;
      };
      expect(await refused({ type: "object", properties: { child: { $ref: "#" } } })).toBe(
        'output_schema refers to itself: $ref "#" at /properties/child/$ref leads back to where it is used; a result must have a fixed shape, so spell out the levels you need',
      );
      expect(await refused({ type: "object", properties: { a: { $ref: "https://example.com/s.json" } } })).toMatch(
        /^output_schema has \$ref "https:\/\/example.com\/s.json" at \/properties\/a\/\$ref; only references inside the schema/,
      );
      expect(await refused({ type: "object", properties: { a: { $ref: "#/$defs/missing" } } })).toBe(
        'output_schema has $ref "#/$defs/missing" at /properties/a/$ref, which points at nothing in the schema',
      );
      let deep: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < 40; i++) deep = { type: "object", properties: { d: deep } };
      expect(await refused(deep)).toMatch(/^output_schema is nested more than 32 levels deep at \/properties\/d\//);
      expect(await refused({ type: "object", description: "x".repeat(40_000) })).toBe(
        "output_schema is larger than 32 KiB as JSON; the limit keeps checking it cheap, so make it smaller",
      );
      const huge = await checker.check({ type: "object" }, { text: "x".repeat(70_000) });
      expect(huge).toEqual({ ok: false, violations: ["the result is larger than 64 KiB as JSON; the limit keeps checking it cheap, so make it smaller"] });
    } finally {
      await checker.close();
    }
  });
});
