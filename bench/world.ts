import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Catalog } from "../src/catalog/definition.js";
import { loadCatalog } from "../src/catalog/loader.js";
import { Gateway } from "../src/gateway/gateway.js";
import { Leases } from "../src/gateway/leases.js";
import type { Model } from "../src/llm/model.js";
import type { AssistantBlock, ModelRequest, ModelResponse } from "../src/llm/types.js";
import { CallLimiter } from "../src/runtime/call-limiter.js";
import { randomIds, systemTimers } from "../src/runtime/deps.js";
import { Orchestrator, type RuntimeDeps } from "../src/runtime/orchestrator.js";
import { AgentStackManager } from "../src/runtime/stack-manager.js";
import { ToolRegistry } from "../src/runtime/tools/registry.js";
import { withHolderCache } from "../src/store/holder-cache.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Store } from "../src/store/store.js";
import { Metrics } from "../src/telemetry/metrics.js";
import { Telemetry } from "../src/telemetry/telemetry.js";
import type { Tracer } from "@opentelemetry/api";
import { writeFileSync, mkdirSync } from "node:fs";
import { InlineSchemaChecker } from "../src/catalog/schema-checker.js";

/** A zero-latency model (or a fixed latency with timers) that answers by a script function. */
export class ScriptModel implements Model {
  readonly configured = true;
  readonly setupHint = "";
  readonly defaultModel = "claude-bench";
  calls = 0;
  private ids = 0;
  constructor(
    private readonly answer: (request: ModelRequest, use: (name: string, input: Record<string, unknown>) => AssistantBlock) => AssistantBlock[],
    private readonly latencyMs = 0,
  ) {}
  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.calls++;
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    const content = this.answer(request, (name, input) => ({ type: "tool_use", id: `toolu_b${++this.ids}`, name, input }));
    return { content, stopReason: "end_turn", usage: { inputTokens: 100, outputTokens: 10 }, requestId: null };
  }
  contextLimit(): Promise<number | null> {
    return Promise.resolve(200_000);
  }
}

export function benchCatalog(root: string): Catalog {
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write("skills/interview/SKILL.md", "---\nname: interview\ndescription: Asks questions.\n---\nAsk one question, then complete.\n");
  for (const name of ["a", "b", "c", "d", "e"]) write(`agents/${name}.md`, `---\nname: ${name}\ndescription: Agent ${name}.\n---\nYou are ${name}.\n`);
  return loadCatalog(join(root, "skills"), join(root, "agents"), { env: {} });
}

/**
 * The real gateway and runtime on a SQLite file with the production settings; logs at info to /dev/null; the
 * Prometheus metrics on, as in the product, and tracing only when a tracer is given (OTEL_EXPORTER_OTLP_ENDPOINT).
 */
export function benchWorld(model: Model, dir?: string, database?: Store, tracer: Tracer | null = null, tools = new ToolRegistry()) {
  const root = dir ?? mkdtempSync(join(tmpdir(), "switchboard-bench-"));
  const dbFile = join(root, "bench.db");
  // As the gateway opens it: the process lock held (so its leases live in memory).
  const store = withHolderCache(database ?? new SqliteStore(dbFile, Date.now, { exclusive: true }));
  const log = pino({ level: "info" }, pino.destination({ dest: "/dev/null", sync: true }));
  const catalog = benchCatalog(root);
  const leases = new Leases(store, { replica: "bench", ttlMs: 15_000, timers: systemTimers });
  const stacks = new AgentStackManager(store);
  const telemetry = new Telemetry({ metrics: new Metrics(() => store.operations.operationalCounts()), tracer, captureContent: false });
  const runtime: RuntimeDeps = {
    store,
    stacks,
    model,
    tools,
    catalog: () => catalog,
    settings: {
      defaultModel: "claude-bench",
      maxIterations: 25,
      callDepthMax: 5,
      callTimeoutMs: 30_000,
      compactionThreshold: 0.7,
      compactionKeepTokens: 20_000,
      contextTokens: {},
      approvalTimeoutMs: 86_400_000,
    },
    ids: randomIds,
    log,
    limiter: new CallLimiter(10, 20),
    timers: systemTimers,
    // In-thread: the benchmarks measure the engine, and none of them uses an output_schema.
    schemas: new InlineSchemaChecker(),
    observer: telemetry,
  };
  const orchestrator = new Orchestrator(runtime);
  const gateway = new Gateway({ store, leases, model, orchestrator, runtime, ids: randomIds, log, observer: telemetry });
  let delivered = 0;
  gateway.register({ prefix: "bench", deliver: async () => void delivered++ });
  return {
    root,
    store,
    gateway,
    stacks,
    delivered: () => delivered,
    dbBytes: () => ["", "-wal"].reduce((n, s) => n + (fileSize(dbFile + s) ?? 0), 0),
    close: () => store.close(),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

let counter = 0;
/** Sends one message and resolves when its reply was delivered; returns the latency in ms. */
export async function send(world: ReturnType<typeof benchWorld>, session: string, text: string): Promise<number> {
  const start = performance.now();
  const result = await world.gateway.submit({ sessionKey: `bench:${session}`, messageId: `m${++counter}`, userId: "u", text });
  if (result.status !== "accepted") throw new Error(`not accepted: ${JSON.stringify(result)}`);
  await world.gateway.whenDone(result.requestId);
  return performance.now() - start;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}
