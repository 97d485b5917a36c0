// Long tool results: cut in the live history with a note saying how much was left out, read back a part at a time
// with read_tool_result (the log keeps them whole), and cut further when compaction must make room around a
// mid-turn tail — through the real SDK and the strict fake Messages API, which enforces the window.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { rebuildHistory } from "../../src/runtime/history.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic, type MessagesRequest } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { toolResults } from "../helpers/requests.js";

let h: Harness;
let fake: FakeAnthropic | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = undefined!;
  fake = undefined;
  dir = undefined;
});

/** Numbered rows, exactly `length` characters, so any part of it shows where it came from. */
function rows(length: number): string {
  let out = "";
  for (let i = 0; out.length < length; i++) out += `row ${String(i).padStart(5, "0")}: ${"data ".repeat(8)}\n`;
  return out.slice(0, length);
}

function toolReturning(name: string, content: () => string): Tool {
  return { spec: { name, description: `The ${name} tool.`, input_schema: { type: "object" } }, idempotent: true, run: async () => ({ content: content() }) };
}

const offered = (req: MessagesRequest) => (req.tools ?? []).map((t) => t.name);
const cutNote = (total: string, shown: string, left: string, id: string, offset: number) =>
  `\n\n[Cut: this result has ${total} characters; the first ${shown} are shown above. The other ${left} were left out: read them with read_tool_result {"tool_use_id": "${id}", "offset": ${offset}}.]`;

describe("a long tool result", () => {
  it("is cut in the live history with a note, and read_tool_result reads the rest a part at a time", async () => {
    const whole = rows(10_000);
    // 1 000 tokens: 4 000 characters, 300 of them kept for the note.
    h = await startHarness({ tools: [toolReturning("export_rows", () => whole)], toolResultMaxTokens: 1000 });
    h.fake.script(
      (req) => {
        expect(offered(req)).not.toContain("read_tool_result");
        return reply(toolUse("export_rows", {}, "toolu_rows"));
      },
      (req) => {
        const [result] = toolResults(req);
        expect(result!.content).toBe(whole.slice(0, 3700) + cutNote("10,000", "3,700", "6,300", "toolu_rows", 3700));
        expect(result!.content.length).toBeLessThanOrEqual(4000);
        expect(offered(req)).toContain("read_tool_result");
        return reply(toolUse("read_tool_result", { tool_use_id: "toolu_rows", offset: 3700 }));
      },
      (req) => {
        expect(toolResults(req)[0]!.content).toBe(
          `${whole.slice(3700, 7400)}\n\n[Characters 3,700 to 7,400 of 10,000. 2,600 more: read_tool_result {"tool_use_id": "toolu_rows", "offset": 7400}.]`,
        );
        return reply(toolUse("read_tool_result", { tool_use_id: "toolu_rows", offset: 7400 }));
      },
      (req) => {
        expect(toolResults(req)[0]!.content).toBe(`${whole.slice(7400)}\n\n[Characters 7,400 to 10,000 of 10,000: the end of the result.]`);
        return text("All 10,000 characters read.");
      },
    );
    expect(await h.say("export everything")).toEqual(["main: All 10,000 characters read."]);
    // The log keeps the whole result beside what the history shows.
    const row = (await h.store.steps.log("console:t")).find((e) => e.type === "tool_result" && (e.payload as { tool_use_id: string }).tool_use_id === "toolu_rows")!;
    expect(row.payload).toMatchObject({ content: whole.slice(0, 3700) + cutNote("10,000", "3,700", "6,300", "toolu_rows", 3700), full_content: whole });
    expect(h.fake.rejected()).toEqual([]);
  });

  it("answers a wrong id or an offset past the end with an error the model can act on", async () => {
    h = await startHarness({ tools: [toolReturning("export_rows", () => rows(6000))], toolResultMaxTokens: 1000 });
    h.fake.script(
      reply(toolUse("export_rows", {}, "toolu_rows")),
      reply(
        toolUse("read_tool_result", { tool_use_id: "toolu_nope" }),
        toolUse("read_tool_result", { tool_use_id: "toolu_rows", offset: 6000 }),
        toolUse("read_tool_result", { offset: -1 }),
      ),
      (req) => {
        expect(toolResults(req).map((r) => [r.content, r.error])).toEqual([
          ['there is no tool result with tool_use_id "toolu_nope" in main\'s history; use the id the cut note gives', true],
          ["offset 6000 is past the end: that result has 6,000 characters", true],
          ['read_tool_result needs a "tool_use_id" (as the cut note gives it) and optionally an "offset", a whole number ≥ 0', true],
        ]);
        return text("Those reads failed.");
      },
    );
    expect(await h.say("go")).toEqual(["main: Those reads failed."]);
  });

  it("a call_agent answer is cut to the bound like any result (the 1 MiB transport cap is not the history's)", async () => {
    const answer = rows(200_000);
    h = await startHarness({ files: agentFile("researcher", "Research.") });
    h.fake.script(
      reply(toolUse("call_agent", { agent: "researcher", message: "everything about Lisbon" }, "toolu_call")),
      text(answer),
      (req) => {
        const [result] = toolResults(req);
        // The default bound: 10 000 tokens, 40 000 characters.
        expect(result!.content).toBe(answer.slice(0, 39_700) + cutNote("200,000", "39,700", "160,300", "toolu_call", 39_700));
        return reply(toolUse("read_tool_result", { tool_use_id: "toolu_call", offset: 39_700 }));
      },
      (req) => {
        expect(toolResults(req)[0]!.content.startsWith(answer.slice(39_700, 79_400))).toBe(true);
        return text("Read two parts.");
      },
    );
    expect(await h.say("research Lisbon")).toEqual(["main: Read two parts."]);
  });

  it("a child's long result is cut where its caller receives it", async () => {
    const result = rows(9000);
    h = await startHarness({ files: skillFile("interview", "Ask."), toolResultMaxTokens: 1000 });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "ask" }, "toolu_skill")), reply(toolUse("complete", { result })), (req) => {
      expect(toolResults(req)[0]!.content).toBe(result.slice(0, 3700) + cutNote("9,000", "3,700", "5,300", "toolu_skill", 3700));
      return text("done");
    });
    expect(await h.say("go")).toEqual(["main: done"]);
    // The child's own log entry keeps the whole result.
    const complete = (await h.store.steps.log("console:t")).find((e) => e.type === "agent_session_complete")!;
    expect((complete.payload as { result: string }).result).toBe(result);
  });

  it("a definition whose whitelist leaves read_tool_result out still gets it (a note never promises a missing tool)", async () => {
    h = await startHarness({
      files: agentFile("exporter", "Export.", "tools: export_rows\nmode: batch\n"),
      tools: [toolReturning("export_rows", () => rows(5000))],
      toolResultMaxTokens: 1000,
    });
    h.fake.script(
      reply(toolUse("use_agent", { name: "exporter", message: "export" })),
      (req) => {
        expect(offered(req)).toEqual(["export_rows", "complete"]);
        return reply(toolUse("export_rows", {}, "toolu_child_rows"));
      },
      (req) => {
        expect(offered(req)).toEqual(["export_rows", "complete", "read_tool_result"]);
        return reply(toolUse("read_tool_result", { tool_use_id: "toolu_child_rows", offset: 3700 }));
      },
      (req) => {
        expect(toolResults(req)[0]).toMatchObject({ error: false, content: expect.stringContaining("the end of the result") });
        return reply(toolUse("complete", { result: "exported" }));
      },
      text("Exported."),
    );
    expect(await h.say("export")).toEqual(["main: Exported."]);
  });

  it("a child cannot read its caller's results: each frame reads only its own", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask."), tools: [toolReturning("export_rows", () => rows(5000))], toolResultMaxTokens: 1000 });
    h.fake.script(reply(toolUse("export_rows", {}, "toolu_main_rows")), text("exported"));
    await h.send("export");
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "ask" })),
      { ...reply(toolUse("read_tool_result", { tool_use_id: "toolu_main_rows" })), allowUnoffered: true },
      (req) => {
        expect(toolResults(req)[0]).toEqual({
          id: expect.any(String),
          content: 'there is no tool result with tool_use_id "toolu_main_rows" in skill:interview\'s history; use the id the cut note gives',
          error: true,
        });
        return text("What now?");
      },
    );
    expect(await h.say("next")).toEqual(["skill:interview: What now?"]);
  });

  it("after a restart the history shows the same cut and the rest can still be read", async () => {
    const whole = rows(8000);
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-results-"));
    const dbFile = join(dir, "db.sqlite");
    const options = { fake, dbFile, tools: [toolReturning("export_rows", () => whole)], toolResultMaxTokens: 1000 };
    const first = await startHarness(options);
    let seen = "";
    fake.script(reply(toolUse("export_rows", {}, "toolu_rows")), (req) => {
      seen = toolResults(req)[0]!.content;
      return text("exported");
    });
    await first.send("export");
    await first.close();

    h = await startHarness(options);
    fake.script(
      (req) => {
        const result = req.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === "tool_result") as { content: string };
        expect(result.content).toBe(seen);
        expect(offered(req)).toContain("read_tool_result");
        return reply(toolUse("read_tool_result", { tool_use_id: "toolu_rows", offset: 3700 }));
      },
      (req) => {
        expect(toolResults(req)[0]!.content.startsWith(whole.slice(3700, 7400))).toBe(true);
        return text("continued");
      },
    );
    expect(await h.say("show me the rest")).toEqual(["main: continued"]);
  });
});

describe("compaction around a mid-turn tail", () => {
  const page = (n: number) => `page ${n}: ${"words and more words ".repeat(300)}`; // about 6 000 characters
  const pages = toolReturning("fetch_page", () => page(1));

  it("results that overflow the window in the first turn are cut to fit, and logged so a restart rebuilds them", async () => {
    fake = await startFakeAnthropic({ contextLimit: 4000 });
    h = await startHarness({ fake, tools: [pages] });
    fake.script(reply(toolUse("fetch_page", { n: 1 }, "toolu_p1"), toolUse("fetch_page", { n: 2 }, "toolu_p2"), toolUse("fetch_page", { n: 3 }, "toolu_p3")), (req) => {
      const results = toolResults(req);
      expect(results).toHaveLength(3);
      for (const r of results) expect(r.content).toMatch(/\n\n\[Cut: this result has 6,\d{3} characters; the first [\d,]+ are shown above\. .*read_tool_result/);
      expect(offered(req)).toContain("read_tool_result");
      return text("Read the start of three pages.");
    });
    expect(await h.say("read three pages")).toEqual(["main: Read the start of three pages."]);
    expect(fake.rejected()).toEqual([]);
    const log = await h.store.steps.log("console:t");
    const entry = log.find((e) => e.type === "compaction")!;
    expect(entry.payload).toMatchObject({ summary: null, results_cut: 3 });
    // What the model saw is what a restart rebuilds.
    const main = log.find((e) => e.type === "message")!.agentSessionId!;
    const rebuilt = rebuildHistory(await h.store.steps.history("console:t", main));
    const seen = fake.accepted().at(-1)!.messages;
    expect(JSON.stringify(rebuilt.slice(0, seen.length))).toBe(JSON.stringify(seen));
  });

  it("a later turn is summarised and its results cut, instead of a request the window refuses", async () => {
    fake = await startFakeAnthropic({ contextLimit: 4000 });
    h = await startHarness({ fake, tools: [pages] });
    fake.fallback((req) => (req.messages.length === 1 && /handoff summary/.test(JSON.stringify(req.system)) ? text("The user chatted about pages.") : text("ok")));
    for (let i = 1; i <= 3; i++) await h.send(`message ${i}: ${"a few words ".repeat(40)}`);
    fake.script(reply(toolUse("fetch_page", { n: 1 }), toolUse("fetch_page", { n: 2 }), toolUse("fetch_page", { n: 3 })));
    await h.send("now read three pages");
    expect(fake.rejected()).toEqual([]);
    const last = fake.accepted().at(-1)!;
    expect(JSON.stringify(last.messages)).toContain("[Summary of the earlier conversation]");
    expect(toolResults(last).every((r) => r.content.includes("[Cut: this result has"))).toBe(true);
    const entry = (await h.store.steps.log("console:t")).filter((e) => e.type === "compaction").at(-1)!;
    expect(entry.payload).toMatchObject({ fallback: false, results_cut: 3 });
  });
});
