// The counters bumped on every message are added up in the process and handed to prom-client at scrape time
// (src/telemetry/tally.ts). What /metrics shows must not change: the same series, in the same order, with the same
// values, byte for byte, as prom-client's own counters fed the same increments; and, through the real gateway and
// the strict fake Messages API, the exact counts after N messages.
import { Counter, Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { PriceTable } from "../../src/llm/prices.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { Metrics } from "../../src/telemetry/metrics.js";
import { Telemetry } from "../../src/telemetry/telemetry.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { Prng } from "../sim/prng.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PRICES = new PriceTable({ "claude-test": { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } });
const lookup: Tool = {
  spec: { name: "lookup", description: "Looks things up.", input_schema: { type: "object" } },
  idempotent: true,
  run: async () => ({ content: "nothing found" }),
};

const MOVED = [
  ["switchboard_inbound_messages_total", ["provider"]],
  ["switchboard_outbound_messages_total", ["provider", "kind"]],
  ["switchboard_model_calls_total", ["model", "outcome"]],
  ["switchboard_tokens_total", ["model", "type"]],
  ["switchboard_cost_usd_total", ["model"]],
  ["switchboard_tool_calls_total", ["tool", "outcome"]],
] as const;
type Field = "inbound" | "outbound" | "modelCalls" | "tokens" | "cost" | "toolCalls";
const FIELDS: Field[] = ["inbound", "outbound", "modelCalls", "tokens", "cost", "toolCalls"];

describe("a tallied counter, scraped", () => {
  it("is byte for byte what prom-client's own counter shows after the same increments", async () => {
    const seed = Number(process.env.TALLY_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const random = new Prng(seed);
    const metrics = new Metrics(async () => ({ activeStacks: 0, queuedMessages: 0, pendingApprovals: 0, undeliverable: 0, outboxBacklog: 0 }));
    // The reference: plain prom-client counters with the same names, help and labels.
    const reference = new Registry();
    const plain = MOVED.map(([name, labelNames]) => {
      const help = (metrics.registry.getSingleMetric(name) as unknown as { help: string }).help;
      return new Counter({ name, help, labelNames: [...labelNames], registers: [reference] });
    });
    const values: Record<string, readonly string[]> = {
      provider: ["telegram", "slack", "console", "http"],
      kind: ["message", "notice", "error"],
      model: ["claude-sonnet-5-5", "claude-haiku-5-5"],
      outcome: ["ok", "error", "cancelled", "handoff"],
      type: ["input", "output", "cache_read", "cache_write"],
      tool: ["use_skill", "complete", "Read", "unknown", 'odd "name"\n'],
    };
    for (let i = 0; i < 2_000; i++) {
      const which = random.int(MOVED.length);
      const [, labelNames] = MOVED[which]!;
      const labels = labelNames.map((l) => random.pick(values[l]!));
      // Whole counts, zeros, and the cost's fractions of a dollar (float sums must come out the same).
      const amount = which === 4 ? random.int(5_000_000) / 1e9 : random.chance(0.2) ? 0 : 1 + random.int(3_000);
      (metrics[FIELDS[which]!].add as (value: number, a: string, b?: string) => void)(amount, labels[0]!, labels[1]);
      plain[which]!.inc(Object.fromEntries(labelNames.map((l, k) => [l, labels[k]!])), amount);
    }
    for (const [name] of MOVED) {
      expect(await metrics.registry.getSingleMetricAsString(name), `${name}, seed ${seed}`).toBe(await reference.getSingleMetricAsString(name));
    }
    // A second scrape shows the same (the tally hands prom-client its totals each time, not what came since).
    for (const [name] of MOVED) {
      expect(await metrics.registry.getSingleMetricAsString(name), `${name}, seed ${seed}`).toBe(await reference.getSingleMetricAsString(name));
    }
  });

  it("refuses a negative or non-finite amount, as prom-client does", () => {
    const metrics = new Metrics(async () => ({ activeStacks: 0, queuedMessages: 0, pendingApprovals: 0, undeliverable: 0, outboxBacklog: 0 }));
    expect(() => metrics.tokens.add(-1, "claude-test", "input")).toThrow(/finite numbers ≥ 0/);
    expect(() => metrics.cost.add(Number.POSITIVE_INFINITY, "claude-test")).toThrow(/finite numbers ≥ 0/);
  });
});

describe("GET /metrics after N messages", () => {
  it("counts each message, reply, model call, token, cent and tool call exactly", async () => {
    const metrics = new Metrics(() => h!.store.operations.operationalCounts());
    const telemetry = new Telemetry({ metrics, tracer: null, captureContent: false });
    h = await startHarness({ telemetry, prices: PRICES, tools: [lookup] });
    const usage = { input_tokens: 120, output_tokens: 7, cache_read_input_tokens: 30, cache_creation_input_tokens: 3 };
    const N = 12;
    for (let i = 0; i < N; i++) {
      // Every third message makes a tool call first.
      if (i % 3 === 0) h.fake.script({ ...reply(toolUse("lookup", {})), usage }, { ...text(`answer ${i}`), usage });
      else h.fake.script({ ...text(`answer ${i}`), usage });
      await h.say(`message ${i}`, { session: `s${i % 4}` });
    }
    const calls = N + N / 3;
    const body = await metrics.registry.metrics();
    const sample = (series: string) => {
      const line = body.split("\n").find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    expect(sample('switchboard_inbound_messages_total{provider="console"}')).toBe(N);
    expect(sample('switchboard_outbound_messages_total{provider="console",kind="message"}')).toBe(N);
    expect(sample('switchboard_model_calls_total{model="claude-test",outcome="ok"}')).toBe(calls);
    expect(sample('switchboard_tokens_total{model="claude-test",type="input"}')).toBe(120 * calls);
    expect(sample('switchboard_tokens_total{model="claude-test",type="output"}')).toBe(7 * calls);
    expect(sample('switchboard_tokens_total{model="claude-test",type="cache_read"}')).toBe(30 * calls);
    expect(sample('switchboard_tokens_total{model="claude-test",type="cache_write"}')).toBe(3 * calls);
    expect(sample('switchboard_tool_calls_total{tool="lookup",outcome="ok"}')).toBe(N / 3);
    // The cost, summed call by call as prom-client summed it: the same float, not merely a close one.
    const perCall = 485_250 / 1e9; // 120 × $3 + 7 × $15 + 30 × $0.30 + 3 × $3.75 per million tokens, in nano-USD
    let cost = 0;
    for (let i = 0; i < calls; i++) cost += perCall;
    expect(sample('switchboard_cost_usd_total{model="claude-test"}')).toBe(cost);
    // Series no message made do not appear.
    expect(body).not.toContain('outcome="cancelled"');
    expect(body).not.toContain('kind="error"');
  });
});
