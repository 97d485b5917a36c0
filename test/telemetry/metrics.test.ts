// GET /metrics after a scripted conversation: the counters hold exactly what happened (messages in and out, model
// calls, tokens and their cost at the price table, tool calls by outcome), the histograms counted every turn, and
// the gauges read the store (a pending approval shows). Served by the HTTP provider as main.ts wires it.
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { PriceTable } from "../../src/llm/prices.js";
import { Metrics } from "../../src/telemetry/metrics.js";
import { metricsHandler } from "../../src/telemetry/metrics-server.js";
import { resilienceMetrics } from "../../src/telemetry/resilience.js";
import { Telemetry } from "../../src/telemetry/telemetry.js";
import { HttpProvider } from "../../providers/http/server.js";
import { overloaded, reply, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { resilientModel } from "../helpers/resilient-model.js";
import { transferTool } from "../helpers/tools.js";

let h: Harness | undefined;
let api: HttpProvider | undefined;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = api = undefined;
});

const PRICES = new PriceTable({ "claude-test": { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } });
const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheWrite,
});

async function start(token?: string) {
  let metrics: Metrics | undefined;
  const telemetry = new Telemetry({ metrics: (metrics = new Metrics(() => h!.store.operations.operationalCounts())), tracer: null, captureContent: false });
  h = await startHarness({ files: skillFile("interview", "Ask."), telemetry, prices: PRICES, tools: [transferTool([])] });
  api = new HttpProvider(h.gateway, {
    host: "127.0.0.1",
    port: 0,
    auth: { tokens: { "tok-api": "alice" } },
    log: silentLogger(),
    metrics: metricsHandler(metrics, token, silentLogger()),
  });
  await api.start();
  return { h, url: `http://127.0.0.1:${api.port()}/metrics` };
}

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(body: string, series: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics after a scripted conversation", () => {
  it("counts messages, model calls, tokens, cost and tool calls exactly; gauges show a pending approval", async () => {
    const { h, url } = await start();
    h.fake.script(
      { ...reply(toolUse("use_skill", { name: "interview", message: "go" })), usage: usage(100, 20, 50, 10) },
      { ...text("Q1?"), usage: usage(80, 8) },
      { ...reply(toolUse("complete", { result: "done" })), usage: usage(90, 12) },
      { ...text("All done."), usage: usage(120, 5) },
      { ...reply(toolUse("transfer", { amount: 5 })), usage: usage(60, 6) },
    );
    await h.say("interview me");
    await h.say("my answer");
    await h.say("send 5 EUR"); // waits for approval
    const body = await (await fetch(url)).text();

    expect(sample(body, 'switchboard_inbound_messages_total{provider="console"}')).toBe(3);
    // Q1?, All done., and the approval question (a notice).
    expect(sample(body, 'switchboard_outbound_messages_total{provider="console",kind="message"}')).toBe(2);
    expect(sample(body, 'switchboard_outbound_messages_total{provider="console",kind="notice"}')).toBe(1);
    expect(sample(body, 'switchboard_model_calls_total{model="claude-test",outcome="ok"}')).toBe(5);
    expect(sample(body, 'switchboard_tokens_total{model="claude-test",type="input"}')).toBe(100 + 80 + 90 + 120 + 60);
    expect(sample(body, 'switchboard_tokens_total{model="claude-test",type="output"}')).toBe(20 + 8 + 12 + 5 + 6);
    expect(sample(body, 'switchboard_tokens_total{model="claude-test",type="cache_read"}')).toBe(50);
    expect(sample(body, 'switchboard_tokens_total{model="claude-test",type="cache_write"}')).toBe(10);
    const cost = (450 * 3 + 51 * 15 + 50 * 0.3 + 10 * 3.75) / 1e6;
    expect(sample(body, 'switchboard_cost_usd_total{model="claude-test"}')).toBeCloseTo(cost, 12);
    expect(sample(body, 'switchboard_tool_calls_total{tool="use_skill",outcome="handoff"}')).toBe(1);
    expect(sample(body, 'switchboard_tool_calls_total{tool="complete",outcome="ok"}')).toBe(1);
    expect(sample(body, 'switchboard_turn_duration_seconds_count{provider="console",kind="message"}')).toBe(3);
    expect(sample(body, 'switchboard_model_call_duration_seconds_count{model="claude-test"}')).toBe(5);
    expect(sample(body, 'switchboard_gateway_overhead_seconds_count{provider="console"}')).toBe(3);
    // The overhead is the turn minus the model: never more than the turns took.
    expect(sample(body, 'switchboard_gateway_overhead_seconds_sum{provider="console"}')!).toBeLessThanOrEqual(
      sample(body, 'switchboard_turn_duration_seconds_sum{provider="console",kind="message"}')!,
    );
    expect(sample(body, "switchboard_pending_approvals")).toBe(1);
    expect(sample(body, "switchboard_active_stacks")).toBe(1);
    expect(sample(body, "switchboard_queued_messages")).toBe(0);
    expect(sample(body, "switchboard_outbox_backlog")).toBe(0);
    expect(sample(body, "switchboard_undeliverable_messages")).toBe(0);
    expect(body).toMatch(/^process_resident_memory_bytes \d+/m);

    // The store and the metrics agree on what it cost (nano-USD sums are exact).
    expect((await h.store.sessions.usage("console:t")).costUsd).toBeCloseTo(cost, 12);
  });

  it("a failing model call counts as an error; the store going away makes the scrape a 503, not a crash", async () => {
    const { h, url } = await start();
    h.fake.script({ error: { status: 400, type: "invalid_request_error", message: "bad", noRetry: true } });
    await h.say("hi");
    const body = await (await fetch(url)).text();
    expect(sample(body, 'switchboard_model_calls_total{model="claude-test",outcome="error"}')).toBe(1);
    expect(sample(body, 'switchboard_outbound_messages_total{provider="console",kind="error"}')).toBe(1);
    h.crash();
    const res = await fetch(url);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("database");
  });

  it("METRICS_TOKEN guards it; API tokens are not metrics tokens; other methods are refused", async () => {
    const { url } = await start("s3cret");
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: "Bearer tok-api" } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: "Bearer s3cret" } })).status).toBe(200);
    expect((await fetch(url, { method: "POST", headers: { authorization: "Bearer s3cret" } })).status).toBe(405);
  });

  it("a tool name the model invents becomes the label unknown (one series, not one per invention)", async () => {
    const { h, url } = await start();
    h.fake.script({ ...reply(toolUse('x\u0000"evil', {})), allowUnoffered: true }, { ...reply(toolUse("y_other", {})), allowUnoffered: true }, text("ok"));
    await h.say("go");
    const body = await (await fetch(url)).text();
    expect(sample(body, 'switchboard_tool_calls_total{tool="unknown",outcome="error"}')).toBe(2);
    expect(body).not.toContain("evil");
  });
});

it("counts fallbacks by reason, shows each model's breaker, and counts messages flood control dropped", async () => {
  const metrics = new Metrics(() => h!.store.operations.operationalCounts());
  const telemetry = new Telemetry({ metrics, tracer: null, captureContent: false });
  const model = resilientModel({ fallbacks: ["claude-haiku-5-5"], failures: 1, observer: resilienceMetrics(metrics) });
  h = await startHarness({ telemetry, model, userMessagesPerMinute: 1 });
  h.fake.script(overloaded(), text("from haiku"));
  const say = (messageId: string) => h!.gateway.submit({ sessionKey: "console:m", messageId, userId: "console:ann", text: "hi" });
  expect((await say("m1")).status).toBe("accepted");
  await h.gateway.idle();
  expect((await say("m2")).status).toBe("limited");
  const body = await metrics.registry.metrics();
  expect(sample(body, 'switchboard_model_fallbacks_total{from="claude-test",to="claude-haiku-5-5",reason="overloaded"}')).toBe(1);
  expect(sample(body, 'switchboard_model_breaker_state{model="claude-test"}')).toBe(2); // open: resting
  expect(sample(body, 'switchboard_flood_dropped_total{provider="console"}')).toBe(1);
  // The answer's tokens are the fallback's, at its price.
  expect(sample(body, 'switchboard_tokens_total{model="claude-haiku-5-5",type="output"}')).toBeGreaterThan(0);
  expect(sample(body, 'switchboard_tokens_total{model="claude-test",type="output"}')).toBeUndefined();
});

it("counts quota refusals by limit and place, wired as app.ts wires them", async () => {
  const metrics = new Metrics(() => h!.store.operations.operationalCounts());
  const telemetry = new Telemetry({ metrics, tracer: null, captureContent: false });
  const now = Date.UTC(2026, 10, 27, 12);
  h = await startHarness({ telemetry, quotas: { settings: { userDailyMessages: 1 }, now: () => now, refused: (limit, place) => telemetry.quotaRefused(limit, place) } });
  h.fake.fallback(() => text("ok"));
  for (const words of ["one", "two", "three"]) await h.say(words, { user: "console:ann" });
  const body = await metrics.registry.metrics();
  expect(sample(body, 'switchboard_quota_refusals_total{limit="USER_DAILY_MESSAGES",place="door"}')).toBe(2);
  expect(h.fake.accepted()).toHaveLength(1);
});
