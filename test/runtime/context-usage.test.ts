// How full a frame's window is: the API's usage when it is above the local estimate, a request the API refuses as
// too long, what the summary request may hold, and the recent-artifacts hint across compactions — through the real
// SDK and the strict fake Messages API (which counts the window with the same chars/4 estimate as Switchboard, so
// only a scripted usage or error can be above it, as the real API's count is for other scripts or dense JSON).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { estimateRequest } from "../../src/llm/tokens.js";
import type { ChatMessage, ToolSpec } from "../../src/llm/types.js";
import { COMPACTION_PROMPT, SUMMARY_PREFIX } from "../../src/runtime/compaction.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, startFakeAnthropic, systemText, text, toolUse, type FakeAnthropic, type FakeStep, type MessagesRequest } from "../fakes/anthropic/server.js";
import { startHarness, type Harness, type HarnessOptions } from "../helpers/harness.js";

let h: Harness;
let fake: FakeAnthropic;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = undefined!;
  dir = undefined;
});

const isSummary = (req: MessagesRequest) => systemText(req) === COMPACTION_PROMPT;
const summaryInput = (req: MessagesRequest) => (req.messages[0]!.content as Array<{ text: string }>)[0]!.text;
const compactions = async () => (await h.store.steps.log("console:t")).filter((e) => e.type === "compaction").map((e) => e.payload as Record<string, unknown>);

async function boot(limit: number, options: HarnessOptions = {}) {
  fake = await startFakeAnthropic({ contextLimit: limit });
  h = await startHarness({ fake, ...options });
}

/** A reply whose usage says the request was far bigger than its characters suggest. */
const withUsage = (reply: string, usage: { input_tokens: number; output_tokens?: number; cache_read_input_tokens?: number }): FakeStep => ({
  ...text(reply),
  usage: { output_tokens: 5, ...usage },
});

describe("the API's usage above the local estimate", () => {
  it("compacts on the API's figure, cache reads included, though the estimate is far below the threshold", async () => {
    await boot(100_000);
    fake.script(withUsage("first", { input_tokens: 40, cache_read_input_tokens: 72_000 }));
    await h.send("one");
    fake.script((req) => {
      expect(isSummary(req)).toBe(true);
      return text("The user said one; the assistant answered first.");
    }, text("second"));
    expect((await h.say("two")).at(-1)).toBe("main: second");
    const [entry] = await compactions();
    expect(entry).toMatchObject({ fallback: false, limit: 100_000 });
    expect(entry!.tokens_before).toBeGreaterThanOrEqual(72_045);
    expect(entry!.tokens_after).toBeLessThan(1000);
  });

  it("adds what joined the history since the last reply to the API's figure", async () => {
    await boot(100_000);
    // 65 000 by the API is under the 70 000 threshold, and so is the next message alone (about 6 000 by the estimate);
    // together they are over it.
    fake.script(withUsage("first", { input_tokens: 65_000 }));
    await h.send("one");
    fake.script((req) => {
      expect(isSummary(req)).toBe(true);
      return text("The user is sending long notes; keep acknowledging them.");
    }, text("noted"));
    await h.send(`notes: ${"a long paragraph of notes ".repeat(960)}`);
    const [entry] = await compactions();
    expect(entry!.tokens_before).toBeGreaterThanOrEqual(70_000);
    expect(entry!.tokens_before).toBeLessThan(72_000);
  });

  it("a request the API finds too long is compacted with the API's count and sent once more", async () => {
    await boot(100_000);
    fake.script(text("a"), text("b"));
    await h.send("one");
    await h.send("two");
    fake.script(
      { error: { status: 400, type: "invalid_request_error", message: "prompt is too long: 150000 tokens > 100000 maximum" } },
      (req) => {
        expect(isSummary(req)).toBe(true);
        return text("The user counted one, two; the assistant answered a, b.");
      },
      (req) => {
        expect(JSON.stringify(req.messages)).toContain(SUMMARY_PREFIX);
        return text("c");
      },
    );
    expect(await h.say("three")).toEqual(["switchboard: (Our conversation got long, so I summarised the earlier part to keep going.)", "main: c"]);
    expect((await compactions())[0]!.tokens_before).toBeGreaterThanOrEqual(150_000);
  });

  it("with nothing to compact the refusal is reported, after one call", async () => {
    await boot(100_000);
    fake.script({ error: { status: 400, type: "invalid_request_error", message: "prompt is too long: 150000 tokens > 100000 maximum" } });
    const [line] = await h.say("a first message the API counts as huge");
    expect(line).toMatch(/^switchboard: Sorry, I could not finish that: .*prompt is too long/);
    expect(fake.calls).toHaveLength(1);
  });
});

describe("the summary request", () => {
  it("caps each tool output at 1 500 characters and each message or call at 4 000", async () => {
    const result = `${"R".repeat(1500)}${"S".repeat(8500)}`;
    const lookup: Tool = {
      spec: { name: "lookup", description: "Looks up.", input_schema: { type: "object" } },
      idempotent: true,
      run: async () => ({ content: result }),
    };
    await boot(100_000, { tools: [lookup] });
    const message = `${"m".repeat(4000)}${"n".repeat(5000)}`;
    const query = "q".repeat(9000);
    fake.script(reply(toolUse("lookup", { query })), withUsage("found it", { input_tokens: 75_000 }));
    await h.send(message);
    let input = "";
    fake.script((req) => {
      input = summaryInput(req);
      return text("The user asked for a lookup; it was done.");
    }, text("ok"));
    await h.send("next");
    expect(input).toContain(`User: ${"m".repeat(4000)} […5000 more characters]`);
    expect(input).toContain(`Assistant called lookup with {"query":"${"q".repeat(3990)} […5012 more characters]`);
    expect(input).toContain(`Result: ${"R".repeat(1500)} […8500 more characters]`);
    expect(input).not.toContain("RS");
  });

  it("stays within 90% of the window: the oldest lines are left out before anything is sent", async () => {
    await boot(4000, { compactionThreshold: 0.95 });
    let input = "";
    fake.fallback((req) => {
      if (!isSummary(req)) return text("ok");
      input ||= summaryInput(req);
      return text("The user is numbering their messages; keep acknowledging.");
    });
    const size = (req: MessagesRequest) => estimateRequest({ system: systemText(req), messages: req.messages as ChatMessage[], tools: (req.tools ?? []) as ToolSpec[] });
    let turn = 0;
    while (turn === 0 || size(fake.accepted().at(-1)!) < 3300) await h.send(`Turn ${++turn}: ${"x".repeat(780)}`);
    // A long message pushes the history past the threshold: its transcript would not fit in the summary request whole.
    await h.send(`Turn ${++turn}: ${"y".repeat(8000)}`);
    expect(fake.rejected()).toEqual([]);
    const request = fake.accepted().find(isSummary)!;
    expect(size(request)).toBeLessThanOrEqual(0.9 * 4000);
    expect(input).not.toContain("User: Turn 1:");
    expect(input).toContain(`User: Turn ${turn}: ${"y".repeat(4000 - `Turn ${turn}: `.length)} […${8000 - 4000 + `Turn ${turn}: `.length} more characters]`);
  });
});

describe("the recent-artifacts hint", () => {
  const publish: Tool = {
    spec: { name: "publish", description: "Publishes.", input_schema: { type: "object" } },
    idempotent: true,
    run: async () => ({ content: "published at https://files.example.com/report-7.pdf as reports/q7.pdf" }),
  };
  const hint = "Recent artifacts from tools (most recent last): https://files.example.com/report-7.pdf, reports/q7.pdf";
  const said = (i: number) => `Turn ${i}: ${"please keep track of this detail and ".repeat(6)}ok?`;

  it("survives compaction (kept with the frame, and in the fallback summary) and a restart", async () => {
    fake = await startFakeAnthropic({ contextLimit: 1500 });
    dir = mkdtempSync(join(tmpdir(), "switchboard-hint-"));
    const options = { fake, dbFile: join(dir, "db.sqlite"), tools: [publish] };
    h = await startHarness(options);
    fake.script(reply(toolUse("publish", {})), text("published"));
    await h.send("publish the report");
    fake.fallback((req) => (isSummary(req) ? { error: { status: 500, type: "api_error", message: "boom" } } : text("ok")));
    for (let i = 1; i <= 100 && (await compactions()).length < 2; i++) await h.send(said(i));
    const [first, second] = await compactions();
    for (const entry of [first!, second!]) {
      expect(entry.summary).toContain("Recent artifacts from tools (most recent last):\n- https://files.example.com/report-7.pdf\n- reports/q7.pdf");
    }
    // The publish call is long summarised away, twice; the hint still names what it produced.
    const last = fake
      .accepted()
      .filter((r) => !isSummary(r))
      .at(-1)!;
    expect(JSON.stringify(last.messages)).not.toContain('"name":"publish"');
    expect(systemText(last)).toContain(hint);

    await h.close();
    h = await startHarness(options);
    fake.fallback(null);
    fake.script((req) => {
      expect(systemText(req)).toContain(hint);
      return text("Sending report-7 again.");
    });
    expect(await h.say("send it again")).toEqual(["main: Sending report-7 again."]);
  });
});
