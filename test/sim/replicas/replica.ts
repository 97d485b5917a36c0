import type { Catalog } from "../../../src/catalog/definition.js";
import { Gateway } from "../../../src/gateway/gateway.js";
import { Leases } from "../../../src/gateway/leases.js";
import { withHolderCache } from "../../../src/store/holder-cache.js";
import { silentLogger } from "../../../src/log.js";
import { CallLimiter } from "../../../src/runtime/call-limiter.js";
import type { Ids } from "../../../src/runtime/deps.js";
import { Orchestrator, type RuntimeDeps } from "../../../src/runtime/orchestrator.js";
import { AgentStackManager } from "../../../src/runtime/stack-manager.js";
import { ToolRegistry } from "../../../src/runtime/tools/registry.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { FencedError, type Lease, type SessionWriter, type StepCommit, type Store } from "../../../src/store/store.js";
import type { ReplicaChecker } from "./checker.js";
import type { SimClock } from "./clock.js";
import { PauseGate, type PausePoint } from "./pause-gate.js";
import { currentTurn, ledgerTool, ScriptedModel, type ModelShared, type Outside } from "./script-model.js";
import { InlineSchemaChecker } from "../../../src/catalog/schema-checker.js";

/** Bugs a replica can be built with, each to show that a checker fires. */
export interface ReplicaPlants {
  /**
   * Its writer commits under whatever lease the session has at that moment (a Lease forged from the lease row,
   * which only a cast can do) instead of the one it was granted: the fence is defeated.
   */
  stealFence?: boolean;
  /** The side-effecting `ledger` tool claims to be idempotent, so no running mark is committed before it runs. */
  idempotentLedger?: boolean;
  /** The replica never takes over orphaned work: its poll does nothing. */
  noTakeover?: boolean;
  /** Its stack cache is never dropped, not even when another replica had the session since. */
  staleCache?: boolean;
}

export interface ReplicaOptions {
  name: string;
  dbFile: string;
  ttlMs: number;
  clock: SimClock;
  catalog: Catalog;
  checker: ReplicaChecker;
  outside: Outside;
  shared: ModelShared;
  trace: (line: string) => void;
  plants?: ReplicaPlants;
}

/**
 * One simulated replica: its own SqliteStore on the shared file (as a replica has its own connection to the
 * shared database), its own Leases on virtual timers, runtime and Gateway, wired like app.ts. Its store is
 * wrapped three times: the pause gate (a paused replica's calls wait), the observer that reports every commit
 * attempt to the checker with the lease row as it was at that moment, and the lease holder's cache in front.
 */
export class Replica {
  readonly raw: SqliteStore;
  readonly store: Store;
  readonly leases: Leases;
  readonly gateway: Gateway;
  readonly gate: PauseGate;
  readonly stacks: AgentStackManager;
  state: "running" | "paused" | "crashed" | "stopped" = "running";
  /** How often it was frozen (pauses that struck, not the ones armed). */
  pauses = 0;

  constructor(readonly options: ReplicaOptions) {
    const { name, clock, trace } = options;
    const where = (point: PausePoint | "now") => (point === "now" ? "" : ` at its ${point === "model" ? "model answer" : "ledger call"}`);
    this.gate = new PauseGate(
      (point) => {
        this.state = "paused";
        this.pauses++;
        clock.freeze(name);
        trace(`${name} paused${where(point)} (its timers frozen)`);
      },
      (point) => {
        this.state = "crashed";
        clock.freeze(name);
        trace(`${name} crashed${where(point)}`);
      },
    );
    // A crashed replica's writes not yet committed die with it (they sat in its group commit's queue).
    const dead = () => {
      if (this.state === "crashed") throw new Error(`${name} crashed before these writes committed`);
    };
    this.raw = new SqliteStore(options.dbFile, () => clock.now(), { groupCommit: { before: dead } });
    // As app.ts: every consumer reads through the lease holder's cache, whose misses go through the gate.
    this.store = withHolderCache(this.wrap(this.raw));
    const timers = clock.timersFor(name);
    this.leases = new Leases(this.store, { replica: name, ttlMs: options.ttlMs, timers });
    this.stacks = new AgentStackManager(this.store);
    if (options.plants?.staleCache) this.stacks.invalidate = () => {};
    const ids = counterIds(name);
    const model = new ScriptedModel(name, options.shared, this.gate, (key) => this.holdsLive(key));
    const runtime: RuntimeDeps = {
      store: this.store,
      stacks: this.stacks,
      model,
      tools: new ToolRegistry([ledgerTool(name, options.outside, this.gate, options.shared, options.plants?.idempotentLedger)]),
      catalog: () => options.catalog,
      settings: {
        defaultModel: "claude-sim",
        maxIterations: 6,
        callDepthMax: 3,
        callTimeoutMs: 10_000,
        compactionThreshold: 0.7,
        compactionKeepTokens: 20_000,
        contextTokens: { "*": 200_000 },
        approvalTimeoutMs: 60_000,
      },
      ids,
      log: silentLogger(),
      limiter: new CallLimiter(2, 2),
      timers,
      schemas: new InlineSchemaChecker(),
    };
    const orchestrator = new Orchestrator(runtime);
    const handle = orchestrator.handleMessage.bind(orchestrator);
    orchestrator.handleMessage = (request, writer, signal) =>
      currentTurn.run({ sessionKey: request.sessionKey, requestId: request.id }, () => handle(request, writer, signal));
    this.gateway = new Gateway({ store: this.store, leases: this.leases, model, orchestrator, runtime, ids, log: silentLogger(), retryBaseMs: 1 });
    runtime.onEvent = (key, event) => this.gateway.emit(key, event);
    if (options.plants?.noTakeover) this.gateway.poll = async () => {};
    this.gateway.register({
      prefix: "sim",
      deliver: async (message, receipt) => {
        if (receipt.sentChunks.has(0)) return;
        options.outside.delivered.push({ replica: name, id: message.id, requestId: message.requestId, text: message.text });
        await receipt.chunkSent(0, message.id);
      },
    });
  }

  get name(): string {
    return this.options.name;
  }

  get live(): boolean {
    return this.state === "running";
  }

  /** This replica holds the session's lease in the database right now (not merely in its own memory). */
  holdsLive(key: string): boolean {
    const row = this.options.checker.lease(key);
    const mine = this.leases.fence(key);
    return row !== null && mine !== undefined && row.holder === this.name && row.token === mine.token && row.expiresAt > this.options.clock.now();
  }

  /** Every call waits while the replica is paused; every commit and every claim is reported to the checker. */
  private wrap(raw: SqliteStore): Store {
    const gate = this.gate;
    const { checker, name } = this.options;
    const gated = <R extends object>(role: R, overrides: Partial<Record<keyof R, unknown>> = {}): R => {
      const out: Record<string, unknown> = {};
      for (const method of Object.getOwnPropertyNames(Object.getPrototypeOf(role))) {
        const value = (role as Record<string, unknown>)[method];
        if (method === "constructor" || typeof value !== "function") continue;
        const call = ((overrides as Record<string, unknown>)[method] ?? value.bind(role)) as (...a: unknown[]) => unknown;
        out[method] = (...args: unknown[]) => {
          const held = gate.wait("store");
          return held ? held.then(() => call(...args)) : call(...args);
        };
      }
      return out as R;
    };
    const claimed = (out: { id: string } | null) => {
      if (out) checker.claimedBy.set(out.id, name);
      return out;
    };
    return {
      sessions: gated(raw.sessions),
      tasks: gated(raw.tasks),
      requests: gated(raw.requests),
      approvals: gated(raw.approvals),
      leases: gated(raw.leases),
      memories: gated(raw.memories),
      userData: gated(raw.userData),
      operations: gated(raw.operations),
      indicators: gated(raw.indicators),
      files: gated(raw.files),
      schedules: gated(raw.schedules),
      usage: gated(raw.usage),
      workspaces: gated(raw.workspaces),
      feed: { watch: (listener) => raw.feed.watch(listener), announce: (change) => gated(raw.feed).announce(change) },
      outbox: gated(raw.outbox, { claimNext: (key: string) => raw.outbox.claimNext(key).then(claimed) }),
      // Writers are made at once (no database call); their commits wait at the gate.
      steps: Object.assign(gated(raw.steps), { writer: (lease: Lease) => this.observedWriter(raw, lease) }),
      ping: () => raw.ping(),
      close: () => raw.close(),
    };
  }

  /** The session's writer, each of its commits gated and observed (stealFence: under whatever lease is current). */
  private observedWriter(raw: SqliteStore, lease: Lease): SessionWriter {
    const granted = raw.steps.writer(lease);
    const steal = this.options.plants?.stealFence === true;
    const writerNow = (): SessionWriter => {
      const row = this.options.checker.lease(lease.key);
      return steal && row ? raw.steps.writer({ key: lease.key, ...row } as Lease) : granted;
    };
    return {
      sessionKey: granted.sessionKey,
      fence: granted.fence,
      commit: (step) => {
        const held = this.gate.wait("store");
        return held ? held.then(() => this.observedCommit(writerNow(), step)) : this.observedCommit(writerNow(), step);
      },
    };
  }

  /** A database round trip takes a millisecond; the lease is read and the step committed in the same tick. */
  private observedCommit(writer: SessionWriter, step: StepCommit): Promise<void> {
    const { checker, clock, trace } = this.options;
    clock.tick(1);
    const key = writer.sessionKey;
    const fence = writer.fence;
    const current = checker.lease(key);
    const believed = this.leases.fence(key)?.token ?? null;
    const record = { replica: this.name, sessionKey: key, fence, believed, current, step };
    const what = describeStep(step);
    return writer.commit(step).then(
      async () => {
        trace(`${this.name} commit ${key} token ${fence.token}${fence.holder === this.name ? "" : ` (${fence.holder}'s)`}: ${what}`);
        checker.afterCommit({ ...record, ok: true, error: null });
        // Where a turn starts or the stack changes shape (where a stale cache would show), the turn goes on only
        // after the stack in memory was compared with the committed one.
        const cached = this.stacks.cached(key);
        const shape = step.framesPushed?.length || step.framesPopped?.length || step.request?.status === "running";
        if (cached && shape) await checker.afterStep(this.name, key, cached.all(), this.raw);
      },
      (error: unknown) => {
        if (error instanceof FencedError) {
          trace(`${this.name} commit ${key} token ${fence.token} REFUSED (lease now ${current?.holder}/${current?.token}): ${what}`);
          checker.afterCommit({ ...record, ok: false, error });
        }
        throw error;
      },
    );
  }
}

function describeStep(step: StepCommit): string {
  const parts: string[] = [];
  if (step.request) parts.push(`${step.request.id}→${step.request.status}`);
  if (step.framesPushed?.length) parts.push(`push ${step.framesPushed.map((f) => f.agentName).join(",")}`);
  if (step.framesPopped?.length) parts.push(`pop ${step.framesPopped.length}`);
  const running = step.framesUpdated?.find((f) => f.runningToolUseId);
  if (running) parts.push(`running ${running.runningToolUseId}`);
  for (const o of step.outbound ?? []) parts.push(`reply "${o.text}"`);
  if (step.log?.length) parts.push(`${step.log.length} log rows`);
  return parts.join(", ") || "(empty)";
}

/** Readable ids, apart per replica (they share one database). */
function counterIds(replica: string): Ids {
  const counts = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counts.get(prefix) ?? 0) + 1;
      counts.set(prefix, n);
      return `${prefix}_${replica}_${n}`;
    },
  };
}
