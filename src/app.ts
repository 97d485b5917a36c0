import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { LiveCatalog } from "./catalog/live.js";
import { LOCK_FILE } from "./catalog/lock.js";
import { WorkerSchemaChecker } from "./catalog/schema-checker.js";
import { apiKeysOf, type Config } from "./config.js";
import { Gateway } from "./gateway/gateway.js";
import { Leases } from "./gateway/leases.js";
import { UnconfiguredModel } from "./llm/anthropic.js";
import { createApiModel } from "./llm/resilient.js";
import type { Model } from "./llm/model.js";
import { PriceTable } from "./llm/prices.js";
import { callEstimate } from "./llm/estimate.js";
import { createEgress } from "./net/egress.js";
import { budgetOf } from "./runtime/budget.js";
import { CallLimiter } from "./runtime/call-limiter.js";
import { backgroundTimers, randomIds, systemClock, systemTimers, type Ids } from "./runtime/deps.js";
import { Orchestrator, type RuntimeDeps } from "./runtime/orchestrator.js";
import { Quotas } from "./runtime/quota.js";
import { repeat } from "./runtime/repeat.js";
import { AgentStackManager } from "./runtime/stack-manager.js";
import { createHttpRequestTool } from "./runtime/tools/http-request.js";
import { ToolRegistry } from "./runtime/tools/registry.js";
import { sendFileTool } from "./runtime/tools/send-file.js";
import { WEB_SEARCH, webSearchTool } from "./runtime/tools/web-search.js";
import { WEB_FETCH, webFetchTool } from "./runtime/tools/web-fetch.js";
import { MemoryWorker } from "./gateway/memory-worker.js";
import { extractMemories, retryable } from "./runtime/memory/extract.js";
import { memoryTools } from "./runtime/memory/tools.js";
import { SCHEDULE_TOOLS, scheduleTools } from "./runtime/tools/schedules.js";
import { Scheduler } from "./gateway/scheduler.js";
import { allowlistAdmission } from "./schedules/admission.js";
import { scheduleMetrics } from "./telemetry/schedules.js";
import { retentionMetrics } from "./telemetry/files.js";
import { FileRetention } from "./files/retention.js";
import { resolveModel } from "./runtime/tools/spawn.js";
import { withHolderCache } from "./store/holder-cache.js";
import { DatabaseInUseError } from "./store/sqlite/process-lock.js";
import { SqliteStore } from "./store/sqlite/sqlite-store.js";
import type { QuarantineRecord, Store } from "./store/store.js";
import { Metrics } from "./telemetry/metrics.js";
import { sessionHasher } from "./telemetry/genai.js";
import { startTracing } from "./telemetry/sdk.js";
import { Telemetry } from "./telemetry/telemetry.js";
import { mcpMetrics } from "./telemetry/mcp.js";
import { resilienceMetrics } from "./telemetry/resilience.js";
import { McpConfigError, type McpConfig } from "./mcp/config.js";
import { loadMcpConfig } from "./mcp/load.js";
import { McpManager, type McpDeps } from "./mcp/manager.js";
import { mcpSandbox } from "./mcp/sandboxed.js";
import { MCP_PREFIX } from "./catalog/tool-patterns.js";
import { HttpTranscriber, NoTranscriber, type Transcriber } from "./llm/transcription.js";
import { WORKSPACE_TOOLS } from "./runtime/tools/workspace/index.js";
import type { LocalWorkspaces } from "./workspace/local.js";
import { startWorkspace, WORKSPACE_OFF, type WorkspaceStart, type WorkspaceStartDeps } from "./workspace/start.js";

/** A problem that stops the gateway from starting, with a message for the admin. */
export class StartupError extends Error {
  override name = "StartupError";
}

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

/**
 * The tools this gateway offers: the stack's own plus those switched on in the config, and how to switch on the
 * others. createApp registers them; `npm run skills` checks whitelists against the same list.
 */
export function createTools(
  config: Config,
  store?: Store,
  ids: Ids = randomIds,
  mcp?: McpManager,
  onScheduled?: () => void,
  workspace: Pick<WorkspaceStart, "tools" | "off"> & Partial<Pick<WorkspaceStart, "workspaces">> = { tools: [], off: {} },
  traceparent?: (sessionKey: string) => string | undefined,
): { registry: ToolRegistry; off: Record<string, string> } {
  const egress = () => createEgress({ allow: config.HTTP_REQUEST_ALLOW, maxBytes: config.HTTP_REQUEST_MAX_BYTES, timeoutMs: config.HTTP_REQUEST_TIMEOUT_MS });
  const storeOf = () => {
    if (!store) throw new Error("the memory, scheduling and send_file tools need the gateway's store");
    return store;
  };
  return {
    registry: new ToolRegistry(
      [
        ...(config.HTTP_REQUEST_TOOL ? [createHttpRequestTool(egress())] : []),
        ...(config.MEMORY ? memoryTools(storeOf, ids) : []),
        ...(config.SCHEDULES
          ? scheduleTools({
              store: storeOf,
              ids,
              now: Date.now,
              maxPerUser: config.SCHEDULE_MAX_PER_USER,
              defaultZone: config.DEFAULT_TIMEZONE,
              onScheduled,
              traceparent,
            })
          : []),
        ...(config.WEB_FETCH
          ? [
              webFetchTool({
                egress: createEgress({ allow: config.HTTP_REQUEST_ALLOW, maxBytes: config.WEB_FETCH_MAX_BYTES, timeoutMs: config.HTTP_REQUEST_TIMEOUT_MS }),
                model: resolveModel(config.WEB_FETCH_MODEL, config.ANTHROPIC_MODEL),
              }),
            ]
          : []),
        ...(config.WEB_SEARCH ? [webSearchTool({ maxUses: config.WEB_SEARCH_MAX_USES })] : []),
        ...workspace.tools,
        sendFileTool({ store: storeOf, workspaceFor: workspace.workspaces?.resolver ?? null }),
      ],
      mcp && mcp.servers().length > 0 ? mcp : null,
    ),
    off: {
      ...(config.HTTP_REQUEST_TOOL ? {} : { http_request: "HTTP_REQUEST_TOOL=on turns it on" }),
      ...(config.MEMORY ? {} : { remember: "MEMORY=on turns it on", recall: "MEMORY=on turns it on", forget: "MEMORY=on turns it on" }),
      ...(config.SCHEDULES ? {} : Object.fromEntries(SCHEDULE_TOOLS.map((name) => [name, "SCHEDULES=on turns it on"]))),
      ...(config.WEB_FETCH ? {} : { [WEB_FETCH]: "WEB_FETCH=on turns it on" }),
      ...(config.WEB_SEARCH ? {} : { [WEB_SEARCH]: "WEB_SEARCH=on turns it on" }),
      ...(config.WORKSPACE ? workspace.off : Object.fromEntries(WORKSPACE_TOOLS.map((tool) => [tool, WORKSPACE_OFF]))),
    },
  };
}

/**
 * The database: PostgreSQL when DATABASE_URL is set (migrated under an advisory lock, so replicas starting together
 * migrate once), else SQLite in DATA_DIR, held with an OS lock so that a second process on it refuses to start.
 */
export async function openStore(config: Config, log: Logger): Promise<Store> {
  // Logged once per row: the row is marked, so the next read skips it silently.
  const onQuarantine = (q: QuarantineRecord) =>
    log.error(
      { session: q.sessionKey, kind: q.kind, row: q.rowId },
      `stored ${q.kind} ${q.rowId} could not be read (${q.reason.split(":")[0]}); it was set aside in the quarantine table and only its session is affected. If that chat misbehaves, send /reset there.`,
    );
  if (config.DATABASE_URL) {
    const { PostgresStore } = await import("./store/postgres/postgres-store.js");
    try {
      return await PostgresStore.open(config.DATABASE_URL, { onQuarantine, log });
    } catch (error) {
      throw new StartupError(`Cannot open the PostgreSQL database (DATABASE_URL): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  try {
    return new SqliteStore(join(config.DATA_DIR, "switchboard.db"), Date.now, { onQuarantine, exclusive: true });
  } catch (error) {
    if (error instanceof DatabaseInUseError) {
      throw new StartupError(
        `Another Switchboard is already running on DATA_DIR=${config.DATA_DIR} (its database is locked). Stop it first, give this one its own DATA_DIR, or set DATABASE_URL to run several replicas on one PostgreSQL.`,
      );
    }
    throw new StartupError(`Cannot open the database: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** How often a replica looks for work nobody is doing (a replica that died, a notification it missed). */
export function pollInterval(leaseMs: number): number {
  return Math.max(250, Math.min(5_000, Math.floor(leaseMs / 2)));
}

/** The MCP servers of mcp.json as this process's connections (not started). */
export function createMcp(config: Config, mcpConfig: McpConfig, deps: Omit<McpDeps, "timers" | "now"> & Partial<Pick<McpDeps, "timers" | "now">>): McpManager {
  return new McpManager(
    mcpConfig,
    { connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS, toolTimeoutMs: config.MCP_TOOL_TIMEOUT_MS, maxResultBytes: config.MCP_MAX_RESULT_BYTES },
    { timers: systemTimers, now: Date.now, sandbox: mcpSandbox(config, { timers: systemTimers, clock: systemClock, log: deps.log }), ...deps },
  );
}

/** mcp.json (MCP_CONFIG); a bad one stops the start, naming the server and the field. */
function readMcpConfig(config: Config): McpConfig {
  try {
    return loadMcpConfig(config.MCP_CONFIG);
  } catch (error) {
    if (error instanceof McpConfigError) throw new StartupError(error.message);
    throw error;
  }
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
  const keys = apiKeysOf(config);
  // Several keys in turn, fallback models, a breaker per model: one Model made of models (src/llm/resilient.ts).
  const api: Model =
    keys.length > 0
      ? createApiModel({
          keys,
          baseURL: config.ANTHROPIC_BASE_URL,
          defaultModel: config.ANTHROPIC_MODEL,
          maxTokens: config.ANTHROPIC_MAX_TOKENS,
          retries: config.ANTHROPIC_MAX_RETRIES,
          prices: new PriceTable(config.MODEL_PRICES),
          fallbacks: config.MODEL_FALLBACKS,
          breaker: { failures: config.MODEL_BREAKER_FAILURES, cooldownMs: config.MODEL_BREAKER_COOLDOWN },
          callTimeoutMs: config.MODEL_CALL_TIMEOUT,
          now: Date.now,
          timers: systemTimers,
          log: log.child({ part: "model" }),
          observer: resilienceMetrics(metrics),
        })
      : new UnconfiguredModel(config.ANTHROPIC_MODEL);
  // The agents' and compaction's calls are observed by the runtime (telemetry is its observer, below); memory
  // extraction, which runs outside any request, through this wrapper. Every call is timed, counted, priced, traced.
  const model = api;
  const extractionModel = telemetry.instrument(api);
  if (!model.configured) log.warn("ANTHROPIC_API_KEY is not set: every message will be answered with setup instructions");

  const runtime: RuntimeDeps = {
    store,
    stacks: new AgentStackManager(store),
    model,
    tools,
    catalog: () => catalog.current,
    settings: {
      defaultModel: config.ANTHROPIC_MODEL,
      maxIterations: config.MAX_ITERATIONS,
      callDepthMax: config.AGENT_CALL_DEPTH_MAX,
      callTimeoutMs: config.AGENT_CALL_TIMEOUT_MS,
      compactionThreshold: config.COMPACTION_THRESHOLD,
      compactionKeepTokens: config.COMPACTION_KEEP_TOKENS,
      toolResultMaxTokens: config.TOOL_RESULT_MAX_TOKENS,
      contextTokens: config.MODEL_CONTEXT_TOKENS,
      approvalTimeoutMs: config.APPROVAL_TIMEOUT,
      handbackNotice: config.HANDBACK_NOTICE,
      memory: config.MEMORY,
      sessionTokenBudget: config.SESSION_TOKEN_BUDGET,
      sessionCostBudgetUsd: config.SESSION_COST_BUDGET_USD,
      files: { maxFileBytes: config.MAX_FILE_BYTES, maxSessionBytes: config.MAX_SESSION_FILE_BYTES },
    },
    limiter: new CallLimiter(config.AGENT_CONCURRENT_CALLS_MAX, config.AGENT_CALL_QUEUE_MAX),
    timers: systemTimers,
    schemas,
    ids,
    log,
    observer: telemetry,
    ...(workspace.workspaces ? { placeFile: workspace.workspaces.placeFile.bind(workspace.workspaces) } : {}),
    quotas: new Quotas({
      store,
      settings: {
        userDailyMessages: config.USER_DAILY_MESSAGES,
        userDailyUsd: config.USER_DAILY_USD,
        chatDailyUsd: config.CHAT_DAILY_USD,
        exemptUsers: config.QUOTA_EXEMPT_USERS,
      },
      now: Date.now,
      // A user's day ends at their midnight: the zone they set with /timezone, else DEFAULT_TIMEZONE, else UTC.
      zoneOf: async (userId) => (await store.schedules.timezone(userId)) ?? config.DEFAULT_TIMEZONE ?? null,
      estimate: callEstimate(new PriceTable(config.MODEL_PRICES), config.ANTHROPIC_MAX_TOKENS),
      log: log.child({ part: "quota" }),
      refused: (limit, place) => telemetry.quotaRefused(limit, place),
    }),
  };
  const orchestrator = new Orchestrator(runtime);
  runtime.onEvent = (key, event) => gateway.emit(key, event);
  const memory =
    config.MEMORY && model.configured
      ? new MemoryWorker({
          store,
          holder: replica,
          extract: (job) =>
            extractMemories(
              {
                store,
                model: extractionModel,
                modelName: resolveModel(config.MEMORY_MODEL, config.ANTHROPIC_MODEL),
                ids,
                log,
                budget: budgetOf(runtime.settings),
                ...(runtime.quotas ? { quotas: runtime.quotas } : {}),
              },
              job,
            ),
          retryable,
          log: log.child({ part: "memory" }),
          timers: systemTimers,
          now: Date.now,
        })
      : undefined;
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
  // Scheduled jobs: every replica looks for due runs; a run's request id makes two of them submit it once.
  const scheduler = config.SCHEDULES
    ? new Scheduler({
        store,
        submit: (message) => gateway.submit(message),
        ids,
        now: Date.now,
        timers: backgroundTimers,
        log: log.child({ part: "scheduler" }),
        graceMs: config.SCHEDULE_GRACE,
        defaultZone: config.DEFAULT_TIMEZONE,
        observer: scheduleMetrics(metrics),
        admits: allowlistAdmission({
          telegramUsers: config.TELEGRAM_ALLOWED_USERS,
          slackUsers: config.SLACK_ALLOWED_USERS,
          slackChannels: config.SLACK_ALLOWED_CHANNELS,
        }),
      })
    : null;
  onScheduled = () => scheduler?.wake();
  // Runs missed while the gateway was down run now (or are skipped, per SCHEDULE_GRACE); their replies wait in the
  // outbox until their provider registers.
  scheduler?.start();
  if (config.MID_TURN === "steer") runtime.steering = (key, running) => gateway.steerable(key, running);
  // Approvals nobody answers expire into a denial (APPROVAL_TIMEOUT): checked now and every 30 s, by one replica
  // at a time (whichever holds the sweeper's lease).
  const sweepApprovals = async () => {
    if (await store.leases.acquire("@approval-sweeper", replica, 90_000)) await gateway.expireApprovals(Date.now());
  };
  // FILE_RETENTION_DAYS: file bytes past the retention are deleted now and every hour (src/files/retention.ts).
  const retention = new FileRetention({
    store,
    days: config.FILE_RETENTION_DAYS,
    now: Date.now,
    timers: backgroundTimers,
    log: log.child({ part: "files" }),
    observer: retentionMetrics(metrics),
  });
  retention.start();
  const failedSweep = (error: unknown) => log.error({ err: error }, "could not expire approvals; trying again in 30 s");
  await sweepApprovals().catch(failedSweep);
  const stopSweep = repeat(backgroundTimers, 30_000, () => void sweepApprovals().catch(failedSweep));
  // Work nobody is doing (a replica died, a notification was missed) is taken over.
  const stopPoll = repeat(
    backgroundTimers,
    pollInterval(config.SESSION_LEASE_MS),
    () => void gateway.poll().catch((error: unknown) => log.warn({ err: error }, "could not look for orphaned work")),
  );
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
      stopSweep();
      stopPoll();
      await retention.stop();
      await catalog.close();
      // Turns in flight are cut first (their MCP calls are cancelled with notifications/cancelled), then the servers go.
      await gateway.stop();
      await schemas.close();
      await mcp.close();
      await store.leases.release("@approval-sweeper", replica, (await store.leases.get("@approval-sweeper").catch(() => null))?.token ?? -1).catch(() => {});
      await store.close();
      await tracing?.shutdown().catch((error: unknown) => log.warn({ err: error }, "could not send the last spans"));
    },
  };
}

/** For entry points: a StartupError is printed for the admin and the process exits 1. */
export async function startOrExit(start: () => Promise<App>): Promise<App> {
  try {
    return await start();
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

/** TRANSCRIPTION_URL's endpoint, or none (voice notes are then answered with how to set it up). */
function transcriberFor(config: Config): Transcriber {
  return config.TRANSCRIPTION_URL
    ? new HttpTranscriber({ url: config.TRANSCRIPTION_URL, apiKey: config.TRANSCRIPTION_API_KEY, model: config.TRANSCRIPTION_MODEL })
    : new NoTranscriber();
}
