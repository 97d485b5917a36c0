import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Catalog } from "../../src/catalog/definition.js";
import { loadCatalog } from "../../src/catalog/loader.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Leases } from "../../src/gateway/leases.js";
import type { OutboundMessage } from "../../src/gateway/types.js";
import { silentLogger } from "../../src/log.js";
import { CallLimiter } from "../../src/runtime/call-limiter.js";
import type { Ids } from "../../src/runtime/deps.js";
import { Orchestrator, type RuntimeDeps } from "../../src/runtime/orchestrator.js";
import { AgentStackManager } from "../../src/runtime/stack-manager.js";
import { ToolRegistry } from "../../src/runtime/tools/registry.js";
import { buildChildFrame } from "../../src/runtime/tools/spawn.js";
import { fail, type Tool } from "../../src/runtime/tools/tool.js";
import type { Prng } from "./prng.js";
import { currentRequest, type SimModel } from "./sim-model.js";
import { SimStore, type CrashPoint, type SimMove, type SimStep, type StorePlants } from "./sim-store.js";
import { SIM_GRACE_MS } from "./sim-schedules.js";
import { Scheduler } from "../../src/gateway/scheduler.js";
import type { VirtualTime } from "./virtual-time.js";
import { InlineSchemaChecker } from "../../src/catalog/schema-checker.js";

/** Writes the definitions every simulated world uses. */
/**
 * One schema checker for every world of the process: a checker compiles Ajv's meta-schemas when it is made (a tenth
 * of a seed's time), and what it compiles does not depend on the scenario.
 */
const SCHEMAS = new InlineSchemaChecker();

export function writeSimCatalog(root: string): Catalog {
  const file = (path: string, text: string) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  file("skills/interview/SKILL.md", "---\nname: interview\ndescription: Asks questions.\nmax_iterations: 4\n---\nAsk.\n");
  file("skills/summary/SKILL.md", "---\nname: summary\ndescription: Summarises.\nmode: batch\n---\nSummarise.\n");
  file("agents/researcher.md", "---\nname: researcher\ndescription: Researches.\n---\nResearch.\n");
  file(
    "agents/extractor.md",
    "---\nname: extractor\ndescription: Extracts contacts.\nmode: batch\noutput_schema:\n  type: object\n  properties:\n    name: { type: string, minLength: 1 }\n    email: { type: string, format: email }\n  required: [name, email]\n---\nExtract.\n",
  );
  file("agents/helper.md", "---\nname: helper\ndescription: Helps.\ntools: note, ledger\n---\nHelp.\n");
  // Unavailable: the key it needs is never set in the simulation, so calling it is refused with the reason.
  file("agents/weather.md", "---\nname: weather\ndescription: Forecasts.\nenv: [SIM_WEATHER_API_KEY]\n---\nForecast.\n");
  return loadCatalog(join(root, "skills"), join(root, "agents"), { env: {} });
}

/** What survives a crash: the platform's record of what it showed, and side effects in the outside world. */
export interface Outside {
  delivered: OutboundMessage[];
  ledger: number;
  /** How often each side-effecting tool use really ran (must never exceed 1). */
  runs: Map<string, number>;
}

export interface WorldPlants extends StorePlants {
  /** A tool that hands over without the depth and cycle rules. */
  ruleFreeSpawn?: boolean;
  maxIterations?: number;
  /** MID_TURN=steer that also offers messages already read (a steer that forgets what it took). */
  steerTwice?: boolean;
}

/** One process lifetime: a runtime and gateway on the scenario's SQLite file, dying at an optional crash point. */
export class World {
  readonly store: SimStore;
  readonly gateway: Gateway;
  readonly stacks: AgentStackManager;
  /** Its call limiter: idle once every call_agent callee has stopped, abandoned ones included. */
  readonly limiter: CallLimiter;
  readonly scheduler: Scheduler;

  constructor(opts: {
    dbFile: string;
    catalog: Catalog;
    model: SimModel;
    time: VirtualTime;
    ids: Ids;
    prng: Prng;
    outside: Outside;
    crashAt: CrashPoint | null;
    plants: WorldPlants;
    callDepthMax: number;
    /** The call limiter's bounds: calls in flight per target, and how many more may wait. */
    callLimit: { max: number; queue: number };
    /** This process's name among the replicas: a restarted process is a new holder of its leases. */
    replica: string;
    midTurn: "queue" | "steer";
    onCommit: (world: World, step: SimStep) => Promise<void>;
    /** A scheduled job moved on (sim-schedules.ts checks what its moves and runs add up to). */
    onMove?: (move: SimMove) => void;
  }) {
    this.store = new SimStore(
      opts.dbFile,
      () => opts.time.now(),
      opts.crashAt,
      opts.plants,
      (step) => opts.onCommit(this, step),
      opts.onMove,
    );
    const leases = new Leases(this.store, { replica: opts.replica, ttlMs: 15_000, timers: opts.time });
    this.stacks = new AgentStackManager(this.store);
    const tools = new ToolRegistry(simTools(opts.prng, opts.outside, opts.plants.ruleFreeSpawn === true));
    const runtime: RuntimeDeps = {
      store: this.store,
      stacks: this.stacks,
      model: opts.model,
      tools,
      catalog: () => opts.catalog,
      settings: {
        defaultModel: "claude-sim",
        maxIterations: opts.plants.maxIterations ?? 4,
        callDepthMax: opts.plants.ruleFreeSpawn ? 50 : opts.callDepthMax,
        callTimeoutMs: 10_000,
        // A small window, so long scenarios compact (and the checkers see compacted histories rebuilt).
        compactionThreshold: 0.7,
        compactionKeepTokens: 300,
        contextTokens: { "*": 2_500 },
        approvalTimeoutMs: 60_000,
      },
      ids: opts.ids,
      log: silentLogger(),
      limiter: (this.limiter = new CallLimiter(opts.callLimit.max, opts.callLimit.queue)),
      timers: opts.time,
      // In-thread, so a report_back is checked within the step the simulation schedules (a worker would not be).
      schemas: SCHEMAS,
    };
    const orchestrator = new Orchestrator(runtime);
    // Tag every model call with its request, so the no-hang bound is per request.
    const handle = orchestrator.handleMessage.bind(orchestrator);
    orchestrator.handleMessage = (request, writer, signal) => currentRequest.run(request.id, () => handle(request, writer, signal));
    this.gateway = new Gateway({
      store: this.store,
      leases,
      model: opts.model,
      orchestrator,
      runtime,
      ids: opts.ids,
      log: silentLogger(),
      retryBaseMs: 1,
      midTurn: opts.midTurn,
    });
    // The real scheduler on the virtual clock; not started until the scenario starts it (after recovery, as app.ts).
    this.scheduler = new Scheduler({
      store: this.store,
      submit: (m) => this.gateway.submit(m),
      ids: opts.ids,
      now: () => opts.time.now(),
      timers: opts.time,
      log: silentLogger(),
      graceMs: SIM_GRACE_MS,
    });
    if (opts.midTurn === "steer") runtime.steering = (key, running) => this.gateway.steerable(key, running);
    if (opts.midTurn === "steer" && opts.plants.steerTwice) {
      runtime.steering = async (key, running) =>
        (await this.store.requests.ofSession(key)).filter((r) => r.kind === "message" && r.id !== running).map((r) => ({ id: `${r.id}-again`, text: r.text }));
    }
    this.gateway.register({
      prefix: "sim",
      deliver: async (message, receipt) => {
        if (receipt.sentChunks.has(0)) return;
        opts.outside.delivered.push(message);
        await receipt.chunkSent(0, message.id);
      },
    });
  }
}

function simTools(prng: Prng, outside: Outside, ruleFree: boolean): Tool[] {
  const tools: Tool[] = [
    { spec: { name: "note", description: "Notes.", input_schema: { type: "object" } }, idempotent: true, run: async () => ({ content: "noted" }) },
    {
      spec: { name: "ledger", description: "Records a side effect.", input_schema: { type: "object" } },
      idempotent: false,
      run: async (_input, ctx) => {
        outside.ledger++;
        outside.runs.set(ctx.toolUseId, (outside.runs.get(ctx.toolUseId) ?? 0) + 1);
        return { content: "recorded" };
      },
    },
    {
      // A side effect that needs the owner's approval first.
      spec: { name: "transfer", description: "Moves money.", input_schema: { type: "object" } },
      idempotent: false,
      requiresApproval: true,
      run: async (_input, ctx) => {
        outside.runs.set(ctx.toolUseId, (outside.runs.get(ctx.toolUseId) ?? 0) + 1);
        return { content: "sent" };
      },
    },
    {
      spec: { name: "flaky", description: "Sometimes fails.", input_schema: { type: "object" } },
      idempotent: true,
      run: async () => {
        if (prng.chance(0.5)) throw new Error("flaky failure");
        return { content: "ok" };
      },
    },
  ];
  if (ruleFree) {
    // The planted bug for the depth/cycle checker: a hand-over that skips checkCallRules.
    tools.push({
      spec: { name: "spawn_any", description: "Hands over to any agent.", input_schema: { type: "object" } },
      idempotent: true,
      async run(input, ctx) {
        const def = ctx.catalog.agents.get(String(input.name));
        if (!def) return fail("no such agent");
        return ctx.activateChild(buildChildFrame(def, ctx.frame, "go", ctx, ["spawn_any", "complete"], null, "interactive"));
      },
    });
  }
  return tools;
}
