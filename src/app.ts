import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { LiveCatalog } from "./catalog/live.js";
import { LOCK_FILE } from "./catalog/lock.js";
import { WorkerSchemaChecker } from "./catalog/schema-checker.js";
import type { Config } from "./config.js";
import { Gateway } from "./gateway/gateway.js";
import { Leases } from "./gateway/leases.js";
import type { Scheduler } from "./gateway/scheduler.js";
import type { Model } from "./llm/model.js";
import { randomIds, systemClock, systemTimers, type Ids } from "./runtime/deps.js";
import { Orchestrator } from "./runtime/orchestrator.js";
import { withHolderCache } from "./store/holder-cache.js";
import type { Store } from "./store/store.js";
import { Metrics } from "./telemetry/metrics.js";
import { sessionHasher } from "./telemetry/genai.js";
import { startTracing } from "./telemetry/sdk.js";
import { Telemetry } from "./telemetry/telemetry.js";
import { mcpMetrics } from "./telemetry/mcp.js";
import type { McpConfig } from "./mcp/config.js";
import type { McpManager } from "./mcp/manager.js";
import { MCP_PREFIX } from "./catalog/tool-patterns.js";
import type { LocalWorkspaces } from "./workspace/local.js";
import { startWorkspace, type WorkspaceStartDeps } from "./workspace/start.js";
import { createScheduler, memoryWorker, startLoops } from "./app/background.js";
import { createMcp, readMcpConfig } from "./app/mcp.js";
import { createModel, transcriberFor } from "./app/model.js";
import { createRuntime } from "./app/runtime.js";
import { openStore } from "./app/store.js";
import { createTools } from "./app/tools.js";

// What the entry points, the command-line tools and the benchmarks take from the composition root; its parts are in
// src/app/, one per thing it assembles.
export { createTools } from "./app/tools.js";
export { createMcp } from "./app/mcp.js";
export { openStore } from "./app/store.js";
export { pollInterval } from "./app/background.js";
export { StartupError, startOrExit } from "./app/startup.js";

export interface App {
  store: Store;
  /** This process's name among the replicas (in the lease table and the logs). */
  replica: string;
  catalog: LiveCatalog;
  model: Model;
  gateway: Gateway;
  /** Prometheus metrics of this process (GET /metrics). */
  metrics: Metrics;
  /** This process's connections to the MCP servers of mcp.json (each replica has its own). */
  mcp: McpManager;
  /** Scheduled jobs' runs (SCHEDULES); null when off. */
  scheduler: Scheduler | null;
  /** The sessions' workspaces (WORKSPACE=on): `placeFile` puts a received file in one. */
  workspaces: LocalWorkspaces | null;
  close(): Promise<void>;
}

export interface AppOptions {
  /** mcp.json as read by the entry point (which gave its secrets to the logger); read here when absent. */
  mcp?: McpConfig;
  /** How the workspace starts (tests inject a sandbox probe that fails). */
  workspace?: Pick<WorkspaceStartDeps, "sandbox" | "path">;
}

/** The composition root shared by `npm start` and `npm run chat`: config → store → catalog → model → gateway. */
export async function createApp(config: Config, log: Logger, ids: Ids = randomIds, options: AppOptions = {}): Promise<App> {
  const mcpConfig = options.mcp ?? readMcpConfig(config);
  // Every consumer reads through the lease holder's cache (holder-cache.ts).
  const store = withHolderCache(await openStore(config, log));
  const replica = `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  const leases = new Leases(store, { replica, ttlMs: config.SESSION_LEASE_MS, timers: systemTimers });
  const tracing = await startTracing(config, log);
  const metrics = new Metrics(() => store.operations.operationalCounts());
  const mcp = createMcp(config, mcpConfig, { log: log.child({ part: "mcp" }), observer: mcpMetrics(metrics) });
  let onScheduled = (): void => {};
  // The workspace tools (WORKSPACE=on): Bash only where a sandbox runs; the log says what to install otherwise.
  const workspace = await startWorkspace(config, { timers: systemTimers, clock: systemClock, log, store, ...options.workspace });
  // Jobs keep where in the traces they were scheduled (set once the telemetry below exists).
  let traceOf = (_sessionKey: string): string | undefined => undefined;
  const { registry: tools, off: disabledTools } = createTools(
    config,
    store,
    ids,
    mcp,
    () => onScheduled(),
    workspace,
    (key) => traceOf(key),
  );
  // Output schemas (from skill files and from the model) are compiled and checked on a worker thread.
  const schemas = new WorkerSchemaChecker({ timers: systemTimers, log: log.child({ part: "schemas" }) });
  const catalog = new LiveCatalog(config.SKILLS_DIR, config.AGENTS_DIR, {
    log,
    knownTools: tools.names(),
    disabledTools,
    mcpServers: mcp.servers(),
    lock: { mode: config.SKILLS_LOCK, file: LOCK_FILE },
    schemas,
  });
  // Not awaited: the schema worker's start-up (a second or more on a busy machine) need not delay serving. A
  // definition whose schema fails is dropped and logged when the check ends; use_skill checks the schema anyway.
  void catalog.settled();
  log.info({ skills: [...catalog.current.skills.keys()], agents: [...catalog.current.agents.keys()] }, "catalog loaded");

  if (tracing && !config.SESSION_HASH_SECRET) {
    log.warn(
      "SESSION_HASH_SECRET is not set: session hashes in traces are keyed by a random secret of this process, so they differ between replicas and restarts; set the same long random value on every replica",
    );
  }
  const telemetry = new Telemetry({
    metrics,
    tracer: tracing?.tracer ?? null,
    captureContent: config.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    ...(config.SESSION_HASH_SECRET ? { sessionHash: sessionHasher(config.SESSION_HASH_SECRET) } : {}),
    knownTool: (name) => !name.startsWith(MCP_PREFIX) || mcp.offers(name),
    scheduledBy: async (jobId) => (await store.schedules.get(jobId))?.traceparent ?? null,
  });
  traceOf = (key) => telemetry.traceparent(key);
  // Before the first message: each server connects within MCP_CONNECT_TIMEOUT_MS, or joins later; one that fails is
  // logged and retried, and the gateway starts without its tools.
  await mcp.start();
  // The model the agents call: several keys in turn, fallback models, a breaker per model (model.ts).
  const api = createModel(config, log, metrics);
  // The agents' and compaction's calls are observed by the runtime (telemetry is its observer, below); memory
  // extraction, which runs outside any request, through this wrapper. Every call is timed, counted, priced, traced.
  const model = api;
  const extractionModel = telemetry.instrument(api);
  if (!model.configured) log.warn("ANTHROPIC_API_KEY is not set: every message will be answered with setup instructions");

  const runtime = createRuntime(config, { store, model, tools, catalog, schemas, ids, log, telemetry, workspace });
  const orchestrator = new Orchestrator(runtime);
  runtime.onEvent = (key, event) => gateway.emit(key, event);
  const memory = memoryWorker(config, { store, replica, ids, log, model, extractionModel, runtime });
  const gateway = new Gateway({
    store,
    leases,
    model,
    orchestrator,
    runtime,
    ids,
    log,
    observer: telemetry,
    midTurn: config.MID_TURN,
    memory,
    userMessagesPerMinute: config.USER_MESSAGES_PER_MINUTE,
    transcriber: transcriberFor(config),
    maxSessionFileBytes: config.MAX_SESSION_FILE_BYTES,
    ...(config.SCHEDULES ? { schedules: { defaultZone: config.DEFAULT_TIMEZONE, graceMs: config.SCHEDULE_GRACE } } : {}),
  });
  const scheduler = createScheduler(config, { store, gateway, ids, log, metrics });
  onScheduled = () => scheduler?.wake();
  // Runs missed while the gateway was down run now (or are skipped, per SCHEDULE_GRACE); their replies wait in the
  // outbox until their provider registers.
  scheduler?.start();
  if (config.MID_TURN === "steer") runtime.steering = (key, running) => gateway.steerable(key, running);
  // Approvals nobody answers expire into a denial (APPROVAL_TIMEOUT), file bytes past FILE_RETENTION_DAYS are
  // deleted, work nobody is doing is taken over (background.ts).
  const loops = await startLoops(config, { store, gateway, replica, log, metrics });
  log.info({ replica, database: config.DATABASE_URL ? "postgresql" : "sqlite" }, "store ready");
  return {
    store,
    replica,
    catalog,
    model,
    gateway,
    metrics,
    mcp,
    scheduler,
    workspaces: workspace.workspaces,
    async close() {
      await scheduler?.stop();
      await loops.stop();
      await catalog.close();
      // Turns in flight are cut first (their MCP calls are cancelled with notifications/cancelled), then the servers go.
      await gateway.stop();
      await schemas.close();
      await mcp.close();
      await loops.release();
      await store.close();
      await tracing?.shutdown().catch((error: unknown) => log.warn({ err: error }, "could not send the last spans"));
    },
  };
}
