import { randomUUID } from "node:crypto";
import { DEFAULT_FILE_LIMITS } from "../../src/files/limits.js";
import { sendFileTool } from "../../src/runtime/tools/send-file.js";
import type { WorkspaceResolver } from "../../src/runtime/tools/workspace/workspace.js";
import { Quotas, type QuotaDeps, type QuotaSettings } from "../../src/runtime/quota.js";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LiveCatalog } from "../../src/catalog/live.js";
import { WorkerSchemaChecker, type SchemaChecker } from "../../src/catalog/schema-checker.js";
import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { Gateway } from "../../src/gateway/gateway.js";
import { Leases } from "../../src/gateway/leases.js";
import type { OutboundMessage } from "../../src/gateway/types.js";
import { AnthropicModel, UnconfiguredModel } from "../../src/llm/anthropic.js";
import type { Model } from "../../src/llm/model.js";
import { createLogger, silentLogger } from "../../src/log.js";
import { budgetOf } from "../../src/runtime/budget.js";
import { CallLimiter } from "../../src/runtime/call-limiter.js";
import { systemTimers, type Clock, type Ids, type Timers } from "../../src/runtime/deps.js";
import { Orchestrator, type RuntimeDeps } from "../../src/runtime/orchestrator.js";
import { AgentStackManager } from "../../src/runtime/stack-manager.js";
import { MemoryWorker } from "../../src/gateway/memory-worker.js";
import { extractMemories, retryable } from "../../src/runtime/memory/extract.js";
import { memoryTools } from "../../src/runtime/memory/tools.js";
import { scheduleTools } from "../../src/runtime/tools/schedules.js";
import { Scheduler } from "../../src/gateway/scheduler.js";
import type { RunAdmission } from "../../src/schedules/admission.js";
import type { Logger } from "pino";
import { ToolRegistry } from "../../src/runtime/tools/registry.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";
import type { McpManager } from "../../src/mcp/manager.js";
import type { PriceTable } from "../../src/llm/prices.js";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic/server.js";
import type { Transcriber } from "../../src/llm/transcription.js";

/** Readable, predictable ids; `salt` keeps runtimes that share one database apart. */
export function counterIds(salt = ""): Ids {
  const counts = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counts.get(prefix) ?? 0) + 1;
      counts.set(prefix, n);
      return salt ? `${prefix}_${salt}_${n}` : `${prefix}_${n}`;
    },
  };
}

/** Writes skills/ and agents/ files under a temp dir; keys are paths like "skills/interview/SKILL.md". */
export function writeDefinitions(files: Record<string, string>): { root: string; skills: string; agents: string } {
  const root = mkdtempSync(join(tmpdir(), "switchboard-test-"));
  mkdirSync(join(root, "skills"));
  mkdirSync(join(root, "agents"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return { root, skills: join(root, "skills"), agents: join(root, "agents") };
}

export function skillFile(name: string, body: string, extra = ""): Record<string, string> {
  return { [`skills/${name}/SKILL.md`]: `---\nname: ${name}\ndescription: The ${name} skill for tests.\n${extra}---\n${body}\n` };
}

export function agentFile(name: string, body: string, extra = ""): Record<string, string> {
  return { [`agents/${name}.md`]: `---\nname: ${name}\ndescription: The ${name} agent for tests.\n${extra}---\n${body}\n` };
}

/** One agent per name, each told only who it is: the cast of a test where agents call each other. */
export function agentFiles(...names: string[]): Record<string, string> {
  return Object.assign({}, ...names.map((n) => agentFile(n, `You are ${n}.`)));
}

export interface HarnessOptions {
  files?: Record<string, string>;
  /** Speech to text for voice notes (the fake endpoint); absent: none configured. */
  transcriber?: Transcriber;
  /** MAX_SESSION_FILE_BYTES; absent: no cap. */
  maxSessionFileBytes?: number;
  /** MAX_FILE_BYTES (default: the product's 20 MB). */
  maxFileBytes?: number;
  /** Offer send_file (as app.ts always does), with this workspace for its paths when given. */
  sendFile?: boolean | { workspaceFor: WorkspaceResolver };
  maxIterations?: number;
  tools?: Tool[];
  noApiKey?: boolean;
  /** Reuse a database file (to simulate a restart in-process). */
  dbFile?: string;
  /** Another store than the harness's own SQLite file (a replica on a shared PostgreSQL database); closed with it. */
  store?: Store;
  fake?: FakeAnthropic;
  /** The model the runtime calls, built on the fake's URL (default: one AnthropicModel; resilient-model.ts: fallbacks). */
  model?: (baseURL: string) => Model;
  /** SDK retries; 0 unless a test is about retrying. */
  maxRetries?: number;
  /** Environment the catalog checks `env:` against. Default: none set. */
  env?: Record<string, string>;
  callDepthMax?: number;
  callTimeoutMs?: number;
  compactionThreshold?: number;
  compactionKeepTokens?: number;
  /** TOOL_RESULT_MAX_TOKENS (default: the product's). */
  toolResultMaxTokens?: number;
  contextTokens?: Record<string, number>;
  sessionTokenBudget?: number;
  sessionCostBudgetUsd?: number;
  /** The price table the model prices calls with (default: the product's defaults). */
  prices?: PriceTable;
  /** Traces and metrics, wired like app.ts does (the runtime and gateway observed, memory's model instrumented). */
  telemetry?: Telemetry;
  approvalTimeoutMs?: number;
  /**
   * "Interview skill finished." notices (HANDBACK_NOTICE; on in the product). Off by default here, so tests about the
   * stack's mechanics see only the agents' replies; the tests about the notice turn it on.
   */
  handbackNotice?: boolean;
  /**
   * MEMORY: recall at task start, remember/recall/forget tools, extraction after each task (its model calls go to
   * the same fake, with the model "claude-memory-test"). Off by default here, so scripts see only the agents' calls.
   */
  memory?: boolean;
  /** The daily quotas (default: none), on this harness's store and judged by their own clock. */
  quotas?: Omit<QuotaDeps, "store" | "log" | "settings"> & { settings: Partial<QuotaSettings> };
  /** USER_MESSAGES_PER_MINUTE (default: no limit), judged by `clock`. */
  userMessagesPerMinute?: number;
  /** MID_TURN (default queue). */
  midTurn?: "queue" | "steer";
  /** Id source (default: readable counters). */
  ids?: Ids;
  limiter?: CallLimiter;
  timers?: Timers;
  /** What the runtime judges task expiries and times tasks by (default: the system clock). */
  clock?: Clock;
  /** Where the runtime and gateway log (default: nowhere, or TEST_LOG's level on stderr). */
  log?: Logger;
  /** Where output schemas are compiled and checked (default: one schema worker shared by the file's tests, as in app.ts). */
  schemas?: SchemaChecker;
  /** MCP servers' tools, as app.ts offers them (the test starts and closes the manager). */
  mcp?: McpManager;
  /**
   * SCHEDULES on: the scheduling tools, the chat commands and a scheduler on `timers` and `now` (the test drives
   * both; the scheduler is started by the test with `h.scheduler.start()`).
   */
  schedules?: { now: () => number; timers: Timers; graceMs?: number; maxPerUser?: number; defaultZone?: string; admits?: RunAdmission; log?: Logger };
}

let sharedSchemas: WorkerSchemaChecker | null = null;

/** The test file's schema worker: started once (its start-up costs a few hundred ms), never holding the process open. */
export function schemaWorker(): WorkerSchemaChecker {
  return (sharedSchemas ??= new WorkerSchemaChecker({ timers: systemTimers }));
}

/**
 * The real runtime and gateway wired like main.ts, with the real Anthropic SDK talking to the
 * strict fake over HTTP, a real SQLite store and a sink that records what a console user would see.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const fake = options.fake ?? (await startFakeAnthropic());
  const defs = writeDefinitions(options.files ?? {});
  const idPrefix = randomUUID().slice(0, 8);
  const dbFile = options.dbFile ?? join(defs.root, "data", "switchboard.db");
  // A harness on the database of an earlier one is a restart: the earlier process is gone, and so are its leases
  // (what the OS lock lets a real restart conclude).
  if (options.dbFile && existsSync(dbFile)) expireLeases(dbFile);
  const store: Store = options.store ?? new SqliteStore(dbFile);
  const ids = options.ids ?? counterIds(options.dbFile ? idPrefix : "");
  const sched = options.schedules;
  let scheduler: Scheduler | null = null;
  const tools = new ToolRegistry(
    [
      ...(options.tools ?? []),
      ...(options.sendFile ? [sendFileTool({ store: () => store, workspaceFor: typeof options.sendFile === "object" ? options.sendFile.workspaceFor : null })] : []),
      ...(options.memory ? memoryTools(() => store, ids) : []),
      ...(sched
        ? scheduleTools({
            store: () => store,
            ids,
            now: sched.now,
            maxPerUser: sched.maxPerUser ?? 20,
            defaultZone: sched.defaultZone,
            onScheduled: () => scheduler?.wake(),
            traceparent: (key) => options.telemetry?.traceparent(key),
          })
        : []),
    ],
    options.mcp ?? null,
  );
  const catalog = new LiveCatalog(defs.skills, defs.agents, {
    log: silentLogger(),
    env: options.env ?? {},
    knownTools: tools.names(),
    ...(options.mcp ? { mcpServers: options.mcp.servers() } : {}),
    debounceMs: 50,
    schemas: options.schemas ?? schemaWorker(),
  });
  await catalog.settled();
  const api: Model = options.noApiKey
    ? new UnconfiguredModel()
    : options.model
      ? options.model(fake.url)
      : new AnthropicModel({
          apiKey: "test-key",
          baseURL: fake.url,
          maxRetries: options.maxRetries ?? 0,
          defaultModel: "claude-test",
          ...(options.prices ? { prices: options.prices } : {}),
        });
  const model = api;
  const extractionModel = options.telemetry ? options.telemetry.instrument(api) : api;
  // TEST_LOG=debug shows the runtime's logs while debugging a test.
  const log = options.log ?? (process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLogger());

  // Real timers for the renewal: a test driving its own timers by hand sees only the ones it is about.
  const leases = new Leases(store, { replica: `test-${idPrefix}`, ttlMs: 15_000, timers: systemTimers });
  const runtime: RuntimeDeps = {
    store,
    stacks: new AgentStackManager(store),
    model,
    tools,
    catalog: () => catalog.current,
    settings: {
      defaultModel: "claude-test",
      maxIterations: options.maxIterations ?? 25,
      callDepthMax: options.callDepthMax ?? 5,
      callTimeoutMs: options.callTimeoutMs ?? 30_000,
      compactionThreshold: options.compactionThreshold ?? 0.7,
      compactionKeepTokens: options.compactionKeepTokens ?? 20_000,
      ...(options.toolResultMaxTokens ? { toolResultMaxTokens: options.toolResultMaxTokens } : {}),
      contextTokens: options.contextTokens ?? {},
      approvalTimeoutMs: options.approvalTimeoutMs ?? 24 * 3600 * 1000,
      handbackNotice: options.handbackNotice ?? false,
      memory: options.memory ?? false,
      sessionTokenBudget: options.sessionTokenBudget ?? 0,
      sessionCostBudgetUsd: options.sessionCostBudgetUsd ?? 0,
      files: { maxFileBytes: options.maxFileBytes ?? DEFAULT_FILE_LIMITS.maxFileBytes, maxSessionBytes: options.maxSessionFileBytes ?? 0 },
    },
    limiter: options.limiter ?? new CallLimiter(10, 20),
    timers: options.timers ?? systemTimers,
    schemas: options.schemas ?? schemaWorker(),
    ids,
    log,
    ...(options.telemetry ? { observer: options.telemetry } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.quotas
      ? {
          quotas: new Quotas({
            ...options.quotas,
            store,
            log,
            settings: { userDailyMessages: 0, userDailyUsd: 0, chatDailyUsd: 0, exemptUsers: [], ...options.quotas.settings },
          }),
        }
      : {}),
  };
  const orchestrator = new Orchestrator(runtime);
  runtime.onEvent = (key, event) => gateway.emit(key, event);
  const memory = options.memory
    ? new MemoryWorker({
        store,
        holder: `test-${idPrefix}`,
        extract: (job) =>
          extractMemories(
            {
              store,
              model: extractionModel,
              modelName: "claude-memory-test",
              ids,
              log,
              budget: budgetOf(runtime.settings),
              ...(runtime.quotas ? { quotas: runtime.quotas } : {}),
            },
            job,
          ),
        retryable,
        log,
        timers: options.timers ?? systemTimers,
        now: Date.now,
        retryBaseMs: 1,
        pollMs: 3_600_000,
      })
    : undefined;
  const gateway = new Gateway({
    memory,
    store,
    leases,
    model,
    orchestrator,
    runtime,
    ids,
    log,
    retryBaseMs: 1,
    ...(options.telemetry ? { observer: options.telemetry } : {}),
    midTurn: options.midTurn ?? "queue",
    ...(options.userMessagesPerMinute ? { userMessagesPerMinute: options.userMessagesPerMinute } : {}),
    ...(options.transcriber ? { transcriber: options.transcriber } : {}),
    ...(options.maxSessionFileBytes ? { maxSessionFileBytes: options.maxSessionFileBytes } : {}),
    ...(sched ? { schedules: { defaultZone: sched.defaultZone, graceMs: sched.graceMs ?? 3_600_000 } } : {}),
  });
  scheduler = sched
    ? new Scheduler({
        store,
        submit: (m) => gateway.submit(m),
        ids,
        now: sched.now,
        timers: sched.timers,
        log: sched.log ?? log,
        graceMs: sched.graceMs ?? 3_600_000,
        defaultZone: sched.defaultZone,
        ...(sched.admits ? { admits: sched.admits } : {}),
      })
    : null;
  if (options.midTurn === "steer") runtime.steering = (key, running) => gateway.steerable(key, running);
  const seen: OutboundMessage[] = [];
  const waiters: Array<{ match: (m: OutboundMessage) => boolean; resolve: (m: OutboundMessage) => void }> = [];
  gateway.register({
    prefix: "console",
    deliver: async (m) => {
      seen.push(m);
      for (const w of waiters.filter((w) => w.match(m))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    },
  });
  // Message ids differ between harnesses on one database, as a platform's would after a restart.
  let counter = 0;

  return {
    fake,
    store,
    gateway,
    /** This process's leases: a test writing a session's state by hand while it holds the session writes as it. */
    leases,
    runtime,
    catalog,
    dbFile,
    seen,
    /** The scheduler (with `schedules`), not started. */
    scheduler,
    /** Where the skills/ and agents/ of this harness live (for hot-reload tests). */
    root: defs.root,
    /** Resolves when a matching message is delivered (already delivered ones count). */
    delivered(match: (m: OutboundMessage) => boolean): Promise<OutboundMessage> {
      const found = seen.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    /** Sends a message as a user would and returns what the chat showed in reply. */
    async send(text: string, opts: { session?: string; user?: string; id?: string } = {}): Promise<OutboundMessage[]> {
      const before = seen.length;
      await gateway.submit({
        sessionKey: `console:${opts.session ?? "t"}`,
        messageId: opts.id ?? `${idPrefix}-${++counter}`,
        userId: opts.user ?? "alice",
        text,
      });
      await gateway.idle();
      return seen.slice(before);
    },
    /** Texts shown in reply to one message, as "agent: text". */
    async say(text: string, opts: { session?: string; user?: string; id?: string } = {}): Promise<string[]> {
      return (await this.send(text, opts)).map((m) => `${m.agent}: ${m.text}`);
    },
    /** Simulates a crash: the database handle goes away mid-work; nothing more is committed. */
    crash() {
      // Not awaited, as a crash waits for nothing: SqliteStore.close() drops the handle before it returns.
      void store.close();
    },
    async close(keepFake = false) {
      await catalog.close();
      await scheduler?.stop();
      if (!(store instanceof SqliteStore) || store.isOpen()) await gateway.stop();
      await store.close();
      if (!keepFake && !options.fake) await fake.close();
      rmSync(defs.root, { recursive: true, force: true });
    },
  };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

function expireLeases(dbFile: string): void {
  const db = new Database(dbFile);
  try {
    if (db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'leases'`).get()) db.prepare(`UPDATE leases SET expires_at = 0`).run();
  } finally {
    db.close();
  }
}
