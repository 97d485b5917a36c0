import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { OperationalCounts } from "../store/store.js";
import { CounterTally } from "./tally.js";

// Seconds: a zero-latency turn is ~1 ms, a model call 1-60 s, a long agent task minutes.
const TURN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const OVERHEAD_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/**
 * The Prometheus metrics of one gateway process (GET /metrics), in a registry of its own: counters the gateway
 * bumps as things happen, gauges read from the store at scrape time, and the Node process defaults.
 */
export class Metrics {
  readonly registry = new Registry();
  // Bumped on every message: added up in the process and handed to prom-client at scrape time (tally.ts).
  readonly inbound: CounterTally<"provider">;
  readonly outbound: CounterTally<"provider" | "kind">;
  readonly deliveryFailures: Counter<"provider" | "outcome">;
  readonly modelCalls: CounterTally<"model" | "outcome">;
  readonly tokens: CounterTally<"model" | "type">;
  readonly cost: CounterTally<"model">;
  readonly toolCalls: CounterTally<"tool" | "outcome">;
  readonly turnDuration: Histogram<"provider" | "kind">;
  readonly modelCallDuration: Histogram<"model">;
  readonly overhead: Histogram<"provider">;
  readonly mcpCalls: Counter<"server" | "outcome">;
  readonly mcpCallDuration: Histogram<"server">;
  readonly mcpServerUp: Gauge<"server">;
  readonly mcpTools: Gauge<"server">;
  readonly fallbacks: Counter<"from" | "to" | "reason">;
  readonly breakerState: Gauge<"model">;
  readonly apiKeyEvents: Counter<"event">;
  readonly floodDropped: Counter<"provider">;
  readonly quotaRefusals: Counter<"limit" | "place">;

  constructor(counts: () => Promise<OperationalCounts>) {
    const registers = [this.registry];
    this.inbound = new CounterTally({
      name: "switchboard_inbound_messages_total",
      help: "Messages and commands received from a platform and stored.",
      labelNames: ["provider"],
      registers,
    });
    this.outbound = new CounterTally({
      name: "switchboard_outbound_messages_total",
      help: "Replies handed to their platform.",
      labelNames: ["provider", "kind"],
      registers,
    });
    this.deliveryFailures = new Counter({
      name: "switchboard_delivery_failures_total",
      help: "Replies the platform refused for good (undeliverable) or for now (retry).",
      labelNames: ["provider", "outcome"],
      registers,
    });
    this.modelCalls = new CounterTally({
      name: "switchboard_model_calls_total",
      help: "Model calls by outcome (ok, error, cancelled).",
      labelNames: ["model", "outcome"],
      registers,
    });
    this.tokens = new CounterTally({
      name: "switchboard_tokens_total",
      help: "Tokens by type (input, output, cache_read, cache_write).",
      labelNames: ["model", "type"],
      registers,
    });
    this.cost = new CounterTally({
      name: "switchboard_cost_usd_total",
      help: "What the model calls cost, in USD, at the price table (MODEL_PRICES).",
      labelNames: ["model"],
      registers,
    });
    this.toolCalls = new CounterTally({
      name: "switchboard_tool_calls_total",
      help: "Tool calls by outcome (ok, error, handoff).",
      labelNames: ["tool", "outcome"],
      registers,
    });
    this.turnDuration = new Histogram({
      name: "switchboard_turn_duration_seconds",
      help: "Time to run one request (a turn or a command) and deliver what it produced.",
      labelNames: ["provider", "kind"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.modelCallDuration = new Histogram({
      name: "switchboard_model_call_duration_seconds",
      help: "Time of one model call.",
      labelNames: ["model"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.overhead = new Histogram({
      name: "switchboard_gateway_overhead_seconds",
      help: "Time of one request spent outside the model: the gateway's own cost (store, tools, delivery).",
      labelNames: ["provider"],
      buckets: OVERHEAD_BUCKETS,
      registers,
    });
    this.mcpCalls = new Counter({
      name: "switchboard_mcp_calls_total",
      help: "MCP tool calls per server, by outcome (ok, error, timeout, cancelled, unavailable).",
      labelNames: ["server", "outcome"],
      registers,
    });
    this.mcpCallDuration = new Histogram({
      name: "switchboard_mcp_call_duration_seconds",
      help: "Time of one MCP tool call, per server.",
      labelNames: ["server"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.mcpServerUp = new Gauge({
      name: "switchboard_mcp_server_up",
      help: "1 while this process is connected to the MCP server, else 0.",
      labelNames: ["server"],
      registers,
    });
    this.mcpTools = new Gauge({ name: "switchboard_mcp_tools", help: "Tools the MCP server offers now.", labelNames: ["server"], registers });
    this.fallbacks = new Counter({
      name: "switchboard_model_fallbacks_total",
      help: "Model calls that went on from one model to the next of their chain, by why (overloaded, rate_limited, server, timeout, connection, resting).",
      labelNames: ["from", "to", "reason"],
      registers,
    });
    this.breakerState = new Gauge({
      name: "switchboard_model_breaker_state",
      help: "Each model's circuit breaker: 0 closed, 1 half open (trying again), 2 open (resting).",
      labelNames: ["model"],
      registers,
    });
    this.apiKeyEvents = new Counter({
      name: "switchboard_api_key_events_total",
      help: "API keys that answered 429 (rested; the next key took over) or 401 (taken out of use).",
      labelNames: ["event"],
      registers,
    });
    this.floodDropped = new Counter({
      name: "switchboard_flood_dropped_total",
      help: "Messages refused at the door because their sender went over USER_MESSAGES_PER_MINUTE (nothing stored).",
      labelNames: ["provider"],
      registers,
    });
    this.quotaRefusals = new Counter({
      name: "switchboard_quota_refusals_total",
      help: "Messages (place door) and model calls (place call) refused over a daily quota (USER_DAILY_MESSAGES, USER_DAILY_USD, CHAT_DAILY_USD).",
      labelNames: ["limit", "place"],
      registers,
    });
    // Read once per scrape, in one query, for all five gauges.
    let pending: Promise<OperationalCounts> | null = null;
    const read = () => (pending ??= counts().finally(() => setImmediate(() => (pending = null))));
    const gauge = (name: string, help: string, pick: (c: OperationalCounts) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(pick(await read()));
        },
      });
    gauge("switchboard_active_stacks", "Sessions with agents on their stack (a task under way).", (c) => c.activeStacks);
    gauge("switchboard_queued_messages", "Requests stored and waiting to run.", (c) => c.queuedMessages);
    gauge("switchboard_pending_approvals", "Tool calls waiting for their owner's approval.", (c) => c.pendingApprovals);
    gauge("switchboard_undeliverable_messages", "Replies the platform refused for good (kept, never sent again).", (c) => c.undeliverable);
    gauge("switchboard_outbox_backlog", "Replies committed but not yet delivered.", (c) => c.outboxBacklog);
    collectDefaultMetrics({ register: this.registry });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
