// Cost in USD, as a user and an API client see it: /context, the POST /v1/messages answer, GET /v1/tasks/{id},
// GET /v1/sessions/{id}; SESSION_COST_BUDGET_USD stops the model once a conversation has spent its budget; the
// price table's parsing (MODEL_PRICES) names what is wrong.
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { parsePrices, PriceTable } from "../../src/llm/prices.js";
import { silentLogger } from "../../src/log.js";
import { randomIds } from "../../src/runtime/deps.js";
import { HttpProvider } from "../../providers/http/server.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";

let h: Harness | undefined;
let api: HttpProvider | undefined;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = api = undefined;
});

const PRICES = new PriceTable({ "claude-test": { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } });
const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
const usd = (input: number, output: number) => (input * 3 + output * 15) / 1e6;

describe("cost per request, task and session", () => {
  it("/context shows the session's cost, since the last /reset and for the current task", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask."), prices: PRICES });
    h.fake.script(
      { ...reply(toolUse("use_skill", { name: "interview", message: "go" })), usage: usage(100_000, 2_000) },
      { ...text("Q1?"), usage: usage(50_000, 1_000) },
    );
    await h.say("interview me");
    const [context] = await h.say("/context");
    const total = usd(150_000, 3_000);
    expect(context).toContain(`Cost: $${total.toFixed(4)} in all; $${total.toFixed(4)} since the last /reset; $${total.toFixed(4)} for the current task.`);
    await h.say("/reset");
    const [after] = await h.say("/context");
    expect(after).toContain(`Cost: $${total.toFixed(4)} in all; $0.0000 since the last /reset.`);
  });

  it("the HTTP API reports it per request, task and session", async () => {
    h = await startHarness({ prices: PRICES, ids: randomIds });
    api = new HttpProvider(h.gateway, { host: "127.0.0.1", port: 0, auth: { tokens: { tok: "alice" } }, log: silentLogger() });
    await api.start();
    const base = `http://127.0.0.1:${api.port()}`;
    const post = async (content: string, session?: string) =>
      (await (
        await fetch(`${base}/v1/messages`, {
          method: "POST",
          headers: { authorization: "Bearer tok", "content-type": "application/json" },
          body: JSON.stringify({ ...(session ? { session_id: session } : {}), items: [{ content_type: "text", content }] }),
        })
      ).json()) as {
        session_id: string;
        task_id: string;
        usage: { costUsd: number; inputTokens: number };
      };
    h.fake.script({ ...text("one"), usage: usage(1_000, 100) }, { ...text("two"), usage: usage(2_000, 200) });
    const first = await post("hi");
    expect(first.usage).toEqual({ inputTokens: 1_000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: usd(1_000, 100) });
    const second = await post("again", first.session_id);
    const get = async (path: string) => (await (await fetch(`${base}${path}`, { headers: { authorization: "Bearer tok" } })).json()) as { usage: Record<string, number> };
    expect((await get(`/v1/tasks/${second.task_id}`)).usage.costUsd).toBeCloseTo(usd(2_000, 200), 12);
    const session = await get(`/v1/sessions/${first.session_id}`);
    expect(session.usage.costUsd).toBeCloseTo(usd(3_000, 300), 12);
    expect(session.usage.costSinceResetUsd).toBeCloseTo(usd(3_000, 300), 12);
  });

  it("SESSION_COST_BUDGET_USD: once spent, the model is not called and the user is told how to go on", async () => {
    h = await startHarness({ prices: PRICES, sessionCostBudgetUsd: 0.01 });
    h.fake.script({ ...text("expensive"), usage: usage(3_000, 200) }, { ...text("after reset"), usage: usage(10, 1) });
    expect(await h.say("hi")).toEqual(["main: expensive"]); // $0.012: over the $0.01 budget after this answer
    const calls = h.fake.calls.length;
    expect(await h.say("more")).toEqual([
      "switchboard: This conversation has cost $0.0120, over its budget of $0.0100. Send /reset to start a fresh one, or ask the admin to raise SESSION_COST_BUDGET_USD.",
    ]);
    expect(h.fake.calls.length).toBe(calls);
    await h.say("/reset");
    expect(await h.say("hi again")).toEqual(["main: after reset"]);
  });

  it("prices: defaults for known models, a dated id takes its family's, an unknown model costs nothing", () => {
    const table = new PriceTable();
    expect(table.costNanoUsd("claude-haiku-4-5-20251001", { inputTokens: 1_000_000, outputTokens: 0 })).toBe(1e9);
    expect(table.costNanoUsd("claude-sonnet-5-5", { inputTokens: 0, outputTokens: 1_000_000, cacheReadTokens: 1_000_000 })).toBe(10.1e9);
    expect(table.known("my-own-model")).toBe(false);
    expect(table.costNanoUsd("my-own-model", { inputTokens: 5, outputTokens: 5 })).toBe(0);
  });

  it("MODEL_PRICES overrides and adds; cache prices default to Anthropic's multipliers; mistakes are named", () => {
    expect(parsePrices("claude-sonnet-5-5=2/10/2.5/0.1, my-model=1/2")).toEqual({
      prices: { "claude-sonnet-5-5": { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1 }, "my-model": { input: 1, output: 2, cacheWrite: 1.25, cacheRead: 0.1 } },
    });
    const config = loadConfig({ MODEL_PRICES: "my-model=1/2" });
    expect(new PriceTable(config.MODEL_PRICES).costNanoUsd("my-model", { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(3e9);
    for (const bad of ["my-model=1", "my-model=1/2/3", "=1/2", "my-model=a/b", "my-model=-1/2", "my-model=1//2/3"]) {
      expect(() => loadConfig({ MODEL_PRICES: bad }), bad).toThrow(/MODEL_PRICES: .* is not model=input\/output/);
    }
    expect(() => loadConfig({ SESSION_COST_BUDGET_USD: "five" })).toThrow(/SESSION_COST_BUDGET_USD: must be an amount in USD/);
    expect(() => loadConfig({ SESSION_COST_BUDGET_USD: "-1" })).toThrow(/SESSION_COST_BUDGET_USD/);
  });
});
