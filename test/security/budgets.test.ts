// SESSION_TOKEN_BUDGET and SESSION_COST_BUDGET_USD hold inside a request: checked before every model call, children's,
// batch runs' and call_agent callees' included, with a clear end for the task when crossed mid-request and the stack
// left consistent. Through the gateway, the real runtime and SDK, and the strict fake Messages API.
import { afterEach, describe, expect, it } from "vitest";
import { PriceTable } from "../../src/llm/prices.js";
import { COMPACTION_PROMPT } from "../../src/runtime/compaction.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, systemText, text, toolUse, type FakeBlock, type FakeReply } from "../fakes/anthropic/server.js";
import { agentFile, agentFiles, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { bankTools } from "../helpers/tools.js";
import { expectSettled } from "../helpers/consistent.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const KEY = "console:t";
/** A scripted reply that used `tokens` tokens (input and output alike). */
const costing = (tokens: number, ...blocks: FakeBlock[]): FakeReply => ({ ...reply(...blocks), usage: { input_tokens: tokens / 2, output_tokens: tokens / 2 } });
const STOPPED = /^switchboard: I had to stop before finishing\. This conversation has used ([\d,]+) tokens, over its budget of 1,000\. Send \/reset/;

/** What must hold whatever stopped the task: nothing left running, every agent session closed once, every call answered. */
async function consistent(): Promise<void> {
  await expectSettled(h.store, KEY);
  expect(h.fake.rejected()).toEqual([]);
}

describe("a session's token budget inside one request", () => {
  it("stops a call_agent fan-out at the first call over SESSION_TOKEN_BUDGET, ends the task and says why", async () => {
    h = await startHarness({ files: agentFiles("alpha", "beta", "gamma"), sessionTokenBudget: 1000 });
    h.fake.script(
      costing(400, ...["alpha", "beta", "gamma"].map((agent) => toolUse("call_agent", { agent, message: `research ${agent}` }))),
      costing(400, { type: "text", text: "alpha's findings" }),
      costing(400, { type: "text", text: "beta's findings" }),
      // gamma and main's answer would come next: never asked for.
      text("gamma's findings"),
      text("Here is everything."),
    );
    const shown = await h.say("research all three");
    expect(shown).toEqual([expect.stringMatching(STOPPED)]);
    expect(shown[0]).toContain("used 1,200 tokens");
    expect(h.fake.accepted()).toHaveLength(3);
    expect(h.fake.pending()).toBe(2);
    expect((await h.store.tasks.ofSession(KEY)).map((t) => t.status)).toEqual(["failed"]);
    expect((await h.store.requests.ofSession(KEY)).map((r) => [r.status, r.inputTokens + r.outputTokens])).toEqual([["failed", 1200]]);
    await consistent();

    // Spent: the next message is refused before any task starts, and /reset gives a fresh budget.
    h.fake.reset();
    expect(await h.say("and now?")).toEqual([expect.stringMatching(/^switchboard: This conversation has used 1,200 tokens, over its budget of 1,000\./)]);
    expect(h.fake.calls).toHaveLength(0);
    await h.send("/reset");
    h.fake.script(text("Fresh start."));
    expect(await h.say("hello again")).toEqual(["main: Fresh start."]);
  });

  it("stops inside a batch callee of an interactive skill and unwinds the whole stack", async () => {
    const bank = bankTools();
    h = await startHarness({ files: { ...skillFile("interview", "Ask."), ...agentFile("scout", "Scout.") }, tools: bank.list, sessionTokenBudget: 1000 });
    h.fake.script(
      costing(300, toolUse("use_skill", { name: "interview", message: "plan" })),
      costing(300, toolUse("call_agent", { agent: "scout", message: "check the balance twice" })),
      costing(500, toolUse("balance", {})),
      // The scout's second call, the skill's and main's: never asked for.
      text("100 EUR, twice"),
      text("skill done"),
      text("main done"),
    );
    const shown = await h.say("plan a trip");
    expect(shown).toEqual([expect.stringMatching(STOPPED)]);
    expect(shown[0]).toContain("used 1,100 tokens");
    expect(h.fake.accepted()).toHaveLength(3);
    // The tool call the model had already made still ran; no model call came after it.
    expect(bank.runs).toEqual(["balance"]);
    const closed = (await h.store.steps.log(KEY))
      .filter((e) => e.type === "agent_session_complete")
      .map((e) => e.payload as { agent_name: string; is_error: boolean; result: string });
    expect(closed.map((c) => [c.agent_name, c.is_error])).toEqual([
      ["agent:scout", true],
      ["skill:interview", true],
    ]);
    expect(closed[1]!.result).toBe("stopped: this conversation's budget is spent");
    await consistent();
    expect(await h.say("/status")).toEqual(["switchboard: Idle: no task is running. Send a message to start one."]);
  });

  it("refuses compaction's summary call too, once the budget is spent", async () => {
    const page: Tool = {
      spec: { name: "fetch_page", description: "Reads a page.", input_schema: { type: "object" } },
      idempotent: true,
      run: async () => ({ content: "lorem ipsum ".repeat(800) }),
    };
    h = await startHarness({ tools: [page], sessionTokenBudget: 1000, contextTokens: { "*": 2000 } });
    h.fake.script(costing(100, { type: "text", text: "Hi." }));
    await h.send("hi");
    h.fake.script(costing(950, toolUse("fetch_page", {})), text("a summary"), text("never"));
    const shown = await h.say("read the page");
    expect(shown.at(-1)).toMatch(/^switchboard: I had to stop before finishing\. This conversation has used 1,050 tokens/);
    // The page's result put main over its compaction threshold: no summary was asked for, nor anything after.
    expect(h.fake.accepted()).toHaveLength(2);
    expect(h.fake.accepted().some((r) => systemText(r) === COMPACTION_PROMPT)).toBe(false);
    await consistent();
  });
});

describe("a spent session's memory extraction", () => {
  it("asks the model nothing, like its agents", async () => {
    h = await startHarness({ memory: true, sessionTokenBudget: 1000 });
    h.fake.script(costing(1000, { type: "text", text: "Nice to meet you, Ana." }));
    expect(await h.say("Hi, I'm Ana and I live in Lisbon.", { user: "console:ana" })).toEqual(["main: Nice to meet you, Ana."]);
    expect(h.fake.calls).toHaveLength(1);
    expect(await h.store.memories.pendingJobs()).toEqual([]);
    expect(await h.store.memories.list("console:ana")).toEqual([]);
  });
});

describe("a session's cost budget inside one request", () => {
  it("stops a batch child once SESSION_COST_BUDGET_USD is spent, counting the calls not yet committed", async () => {
    // $1 per million input and output tokens: 500 tokens cost $0.0005.
    const prices = new PriceTable({ "claude-test": { input: 1, output: 1, cacheWrite: 1, cacheRead: 1 } });
    h = await startHarness({ files: agentFile("digest", "Digest.", "mode: batch\n"), sessionCostBudgetUsd: 0.0009, prices });
    h.fake.script(costing(500, toolUse("use_agent", { name: "digest", message: "digest the news" })), costing(500, { type: "text", text: "digest" }), text("never"));
    const shown = await h.say("digest the news");
    expect(shown).toEqual([expect.stringMatching(/^switchboard: I had to stop before finishing\. This conversation has cost \$0\.0010, over its budget of \$0\.0009\./)]);
    expect(h.fake.accepted()).toHaveLength(2);
    await consistent();
  });
});
