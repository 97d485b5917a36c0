// Long conversations: compaction against a small context window, fallbacks, stack awareness, isolation,
// budgets and /context — all through the real SDK and the strict fake (which enforces the window).
import { afterEach, describe, expect, it } from "vitest";
import { COMPACTION_PROMPT, SUMMARY_PREFIX } from "../../src/runtime/compaction.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { lastUserText, reply, startFakeAnthropic, systemText, text, toolUse, type FakeAnthropic, type MessagesRequest } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness, type HarnessOptions } from "../helpers/harness.js";

let h: Harness;
let fake: FakeAnthropic;
afterEach(async () => {
  await h?.close();
  await fake?.close();
  h = undefined!;
});

const isSummary = (req: MessagesRequest) => systemText(req) === COMPACTION_PROMPT;
/** The newest text block the user sent (after compaction the first blocks are the summary and kept messages). */
function newestText(req: MessagesRequest): string {
  const last = req.messages[req.messages.length - 1]!;
  const blocks = (last.content as Array<{ type: string; text?: string }>).filter((b) => b.type === "text");
  return blocks.at(-1)?.text ?? "";
}
const said = (i: number) => `Turn ${i}: ${"please keep track of this detail and ".repeat(6)}ok?`;

async function boot(limit: number, options: HarnessOptions = {}) {
  fake = await startFakeAnthropic({ contextLimit: limit });
  h = await startHarness({ fake, ...options });
  return h;
}

describe("compaction", () => {
  it("keeps a 300-turn chat under a small window: compacts several times, never a 400, the summary reaches the model", async () => {
    await boot(3000);
    let summaries = 0;
    fake.fallback((req) => {
      if (isSummary(req)) return text(`Handoff ${++summaries}: the user is listing details; next step is to keep acknowledging.`);
      return text(`Noted ${newestText(req).slice(0, 8)}`);
    });
    const notices: string[] = [];
    for (let i = 1; i <= 300; i++) {
      const shown = await h.send(said(i));
      notices.push(...shown.filter((m) => m.kind === "notice").map((m) => m.text));
      expect(shown.at(-1)?.text).toBe(`Noted Turn ${i}:`.slice(0, 14));
    }
    expect(fake.rejected()).toEqual([]);
    const compactions = (await h.store.steps.log("console:t")).filter((e) => e.type === "compaction");
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    for (const c of compactions) {
      const p = c.payload as { tokens_before: number; tokens_after: number; limit: number; fallback: boolean };
      expect(p.limit).toBe(3000); // looked up from the Models API
      expect(p.tokens_after).toBeLessThan(p.tokens_before);
      expect(p.fallback).toBe(false);
    }
    // The newest summary is in what the model sees, and the user was told each time.
    const last = fake
      .accepted()
      .filter((r) => !isSummary(r))
      .at(-1)!;
    expect(JSON.stringify(last.messages)).toContain(`${SUMMARY_PREFIX}\\nHandoff ${summaries}:`);
    expect(notices).toEqual(compactions.map(() => "(Our conversation got long, so I summarised the earlier part to keep going.)"));
  });

  it.each(["There is no earlier conversation to summarise.", "Nothing to summarize yet: the conversation has no prior context."])(
    "treats a summary that says nothing (%s) like a failed one: the fallback is used",
    async (empty) => {
      await boot(1500);
      fake.fallback((req) => (isSummary(req) ? text(empty) : text("ok")));
      for (let i = 1; i <= 30; i++) await h.send(said(i));
      const compaction = (await h.store.steps.log("console:t")).find((e) => e.type === "compaction")!;
      expect(compaction.payload).toMatchObject({ fallback: true });
      expect((compaction.payload as { summary: string }).summary).not.toContain(empty);
    },
  );

  it("uses a fallback summary built from the history when the summary call fails", async () => {
    await boot(1500);
    fake.fallback((req) => (isSummary(req) ? { error: { status: 500, type: "api_error", message: "boom" } } : text("ok")));
    for (let i = 1; i <= 30; i++) await h.send(said(i));
    const compaction = (await h.store.steps.log("console:t")).find((e) => e.type === "compaction")!;
    expect(compaction.payload).toMatchObject({ fallback: true });
    expect((compaction.payload as { summary: string }).summary).toMatch(/^\(Automatic summary: the model's summary was not available.\)\nLast user request: Turn \d+/);
    expect(fake.rejected()).toEqual([]);
  });

  it("when the summary request itself is too long, drops the oldest lines and retries", async () => {
    await boot(1500);
    const summaryRequests: number[] = [];
    fake.fallback((req) => {
      if (!isSummary(req)) return text("ok");
      summaryRequests.push(JSON.stringify(req.messages).length);
      if (summaryRequests.length === 1) return { error: { status: 400, type: "invalid_request_error", message: "prompt is too long: 9999 tokens > 1500 maximum" } };
      return text("A good summary of the conversation so far.");
    });
    for (let i = 1; i <= 30 && summaryRequests.length < 2; i++) await h.send(said(i));
    expect(summaryRequests.length).toBe(2);
    expect(summaryRequests[1]!).toBeLessThan(summaryRequests[0]!);
    expect((await h.store.steps.log("console:t")).find((e) => e.type === "compaction")!.payload).toMatchObject({ fallback: false });
  });

  it("compacting a parent while its child runs keeps the pending tool_use, and the child's result lands", async () => {
    await boot(4000, { files: skillFile("interview", "Ask one question, then complete."), compactionThreshold: 0.5 });
    const task = `ask where; context: ${"the user gave many details. ".repeat(250)}`; // makes the parent cross its threshold
    fake.fallback((req) => {
      if (isSummary(req)) return text("The user shared many details about a trip.");
      if (systemText(req).includes('skill "interview"')) {
        return newestText(req) === "Lisbon" ? reply(toolUse("complete", { result: "Lisbon" })) : text("Where to?");
      }
      const body = JSON.stringify(req.messages);
      if (body.includes('"tool_use_id":"toolu_wait"')) return text("Lisbon it is.");
      return newestText(req) === "plan it" ? reply(toolUse("use_skill", { name: "interview", message: task }, "toolu_wait")) : text("noted");
    });
    await h.send(said(1));
    expect((await h.send("plan it")).at(-1)?.text).toBe("Where to?");
    const main = (await h.store.steps.frames("console:t"))[0]!.agentSessionId;
    const parentCompaction = (await h.store.steps.log("console:t")).filter((e) => e.type === "compaction" && e.agentSessionId === main).at(-1)!;
    const history = (parentCompaction.payload as { history: Array<{ role: string; content: Array<{ type: string; id?: string }> }> }).history;
    expect(history.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "tool_use", id: "toolu_wait" }] });

    expect((await h.say("Lisbon")).filter((t) => !t.startsWith("switchboard: (Our conversation got long"))).toEqual(["main: Lisbon it is."]);
    const final = fake
      .accepted()
      .filter((r) => !isSummary(r))
      .at(-1)!;
    expect(JSON.stringify(final.messages)).toContain(SUMMARY_PREFIX);
    expect(JSON.stringify(final.messages)).toContain('"tool_use_id":"toolu_wait","content":"Lisbon"');
    expect(fake.rejected()).toEqual([]);
  });
});

describe("delegate isolation", () => {
  it("a child sees only its task, and with carryover a summary of its own previous run", async () => {
    await boot(100_000, { files: { ...skillFile("plain", "P."), ...skillFile("memo", "M.", "carryover: true\n") } });
    fake.script(text("noted the SECRET-PARENT-TEXT"));
    await h.send("remember SECRET-PARENT-TEXT");
    fake.script(
      reply(toolUse("use_skill", { name: "plain", message: "do it" })),
      (req) => {
        expect(JSON.stringify(req)).not.toContain("SECRET-PARENT-TEXT");
        expect(req.messages).toEqual([{ role: "user", content: [{ type: "text", text: "do it" }] }]);
        return reply(toolUse("complete", { result: "plain done" }));
      },
      text("ok"),
      reply(toolUse("use_skill", { name: "memo", message: "first" })),
      reply(toolUse("complete", { result: "memo found 3 flights" })),
      text("ok"),
      reply(toolUse("use_skill", { name: "memo", message: "second" })),
      (req) => {
        expect(lastUserText(req)).toBe("A summary of your previous run in this conversation:\nmemo found 3 flights\n\nYour new task:\nsecond");
        expect(JSON.stringify(req)).not.toContain("SECRET-PARENT-TEXT");
        return reply(toolUse("complete", { result: "done" }));
      },
      text("ok"),
    );
    await h.send("one");
    await h.send("two");
    await h.send("three");
    expect(fake.pending()).toBe(0);
  });

  it("tells the main agent the recent artifacts tools produced, most recent last", async () => {
    const publish: Tool = {
      spec: { name: "publish", description: "Publishes.", input_schema: { type: "object" } },
      idempotent: true,
      run: async (input) => ({ content: `published ${String(input.n)} at https://files.example.com/report-${String(input.n)}.pdf as reports/q${String(input.n)}.pdf` }),
    };
    await boot(100_000, { tools: [publish] });
    fake.script(reply(toolUse("publish", { n: 1 })), text("done"), reply(toolUse("publish", { n: 2 })), text("done"), (req) => {
      expect(systemText(req)).toContain(
        "Recent artifacts from tools (most recent last): https://files.example.com/report-1.pdf, reports/q1.pdf, https://files.example.com/report-2.pdf, reports/q2.pdf",
      );
      return text("Sending report-2 again.");
    });
    await h.send("publish one");
    await h.send("publish two");
    expect(await h.say("send it again")).toEqual(["main: Sending report-2 again."]);
  });

  it("marks the stable prefix (tools and system prompt) for prompt caching", async () => {
    await boot(100_000, { files: skillFile("plain", "P.") });
    fake.script(text("hi"));
    await h.send("hello");
    const req = fake.accepted()[0]! as MessagesRequest & { system: Array<{ cache_control?: unknown }>; tools: Array<{ cache_control?: unknown }> };
    expect(req.system[0]).toMatchObject({ cache_control: { type: "ephemeral" } });
    expect(req.tools.at(-1)).toMatchObject({ cache_control: { type: "ephemeral" } });
  });
});

describe("cost and context", () => {
  it("records input, output and cache tokens per request, and totals per session", async () => {
    await boot(100_000);
    fake.script({
      content: [{ type: "text", text: "a" }],
      usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 900, cache_creation_input_tokens: 50 },
    });
    fake.script({ content: [{ type: "text", text: "b" }], usage: { input_tokens: 20, output_tokens: 5, cache_read_input_tokens: 1000, cache_creation_input_tokens: 0 } });
    await h.send("one");
    await h.send("two");
    expect((await h.store.requests.ofSession("console:t")).map((r) => [r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWriteTokens])).toEqual([
      [100, 10, 900, 50],
      [20, 5, 1000, 0],
    ]);
    expect(await h.store.sessions.usage("console:t")).toEqual({
      inputTokens: 120,
      outputTokens: 15,
      cacheReadTokens: 1900,
      cacheWriteTokens: 50,
      sinceReset: 2085,
      costUsd: 0,
      costSinceResetUsd: 0,
    });
    const firstTask = (await h.store.requests.ofSession("console:t"))[0]!.taskId!;
    // claude-test has no price: its tokens cost nothing (test/telemetry/cost.test.ts prices them).
    expect(await h.store.tasks.usage(firstTask)).toEqual({ inputTokens: 100, outputTokens: 10, cacheReadTokens: 900, cacheWriteTokens: 50, costUsd: 0 });
    const [line] = await h.say("/context");
    expect(line).toMatch(
      /^switchboard: Context \(main\): [\d,]+ of 100,000 tokens \(\d+%\); compacts at 70%\.\nCompactions in this conversation: 0\.\nTokens used: 120 input, 15 output, 1,900 cache read, 50 cache write\.\nSince the last \/reset: 2,085 tokens\.\nCost: \$0\.0000 in all; \$0\.0000 since the last \/reset\.$/,
    );
  });

  it("stops calling the model once a session passes SESSION_TOKEN_BUDGET, until /reset", async () => {
    await boot(100_000, { sessionTokenBudget: 500 });
    fake.script({ content: [{ type: "text", text: "first" }], usage: { input_tokens: 450, output_tokens: 100 } });
    await h.send("one");
    expect(await h.say("two")).toEqual([
      "switchboard: This conversation has used 550 tokens, over its budget of 500. Send /reset to start a fresh one, or ask the admin to raise SESSION_TOKEN_BUDGET.",
    ]);
    expect(fake.calls).toHaveLength(1);
    await h.send("/reset");
    fake.script(text("fresh"));
    expect(await h.say("three")).toEqual(["main: fresh"]);
  });
});
