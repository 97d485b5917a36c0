import { createHash, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Catalog } from "../../src/catalog/definition.js";
import type { Ids } from "../../src/runtime/deps.js";
import { Checker } from "./invariants.js";
import { Prng } from "./prng.js";
import { SimModel, UNAVAILABLE, type ModelBehaviour } from "./sim-model.js";
import { Crash, type SimMove } from "./sim-store.js";
import { checkSimSchedules, simJobs } from "./sim-schedules.js";
import { VirtualTime } from "./virtual-time.js";
import { World, type Outside, type WorldPlants } from "./world.js";

export interface ScenarioOptions {
  seed: number;
  dir: string;
  catalog: Catalog;
  plants?: WorldPlants & { randomIds?: boolean };
  behaviour?: Partial<ModelBehaviour>;
  sessions?: number;
  events?: number;
  crashes?: boolean;
  /** MID_TURN; default: steer on even seeds, queue on odd ones (so both paths face the same faults). */
  midTurn?: "queue" | "steer";
  /** Make every world crash at its first commit after this many (for planted bugs that need a restart). */
  forceCrashAfter?: number;
  /** Make the first world crash just before its first group commit of several writes after this many. */
  forceGroupCrashBefore?: number;
  /** Make the first world crash just before the commit that follows the first step marking a tool as running. */
  forceCrashAfterRunningTool?: boolean;
  /**
   * The call limiter: calls in flight per target and how many more may wait. Default 2 and 2, or SIM_CALL_LIMIT and
   * SIM_CALL_QUEUE (`SIM_CALL_LIMIT=1 SIM_CALL_QUEUE=0 SIM_CROWD=1 npm run sim -- --seeds 2000`; SIM_CROWD=1 is
   * behaviour.crowd).
   */
  callLimit?: { max: number; queue: number };
  /** Scheduled jobs in the sessions, time passing while the process is up and while it is down (default on). */
  schedules?: boolean;
}

export interface ScenarioResult {
  seed: number;
  violations: string[];
  traceHash: string;
  stats: {
    modelCalls: number;
    restarts: number;
    messages: number;
    delivered: number;
    compactions: number;
    groupCrashes: number;
    /** call_agent calls refused with "target busy", and calls to a target that is unavailable. */
    busy: number;
    unavailable: number;
    /** Scheduled runs, runs that stood for earlier due times (folded), skip notices for late ones, and outages. */
    scheduled: { runs: number; folded: number; late: number; downs: number };
  };
}

const CALL_DEPTH_MAX = 3;

export function replayCommand(seed: number): string {
  return `npm run sim -- --seed ${seed}`;
}

/** One seeded scenario: sessions, messages, commands, duplicates and crash-restarts, checked all along. */
export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const { seed } = options;
  const prng = new Prng(seed);
  const time = new VirtualTime();
  const outside: Outside = { delivered: [], ledger: 0, runs: new Map() };
  const model = new SimModel(prng, time, { maxCallsPerRequest: 300, crowd: process.env.SIM_CROWD === "1", ...options.behaviour });
  const checker = new Checker(CALL_DEPTH_MAX);
  const ids = options.plants?.randomIds ? randomIdSource() : counterIdSource();
  const dbFile = join(options.dir, `sim-${seed}-${randomUUID().slice(0, 8)}.db`);
  const sessions = Array.from({ length: options.sessions ?? 3 }, (_, i) => `sim:s${i + 1}`);
  const messages: Array<{ session: string; id: string; text: string; accepted: boolean }> = [];
  let restarts = 0;
  /** Restarts after an outage (time passed while the process was down), not after a crash. */
  let downs = 0;
  const moves: SimMove[] = [];
  /** Crashes that struck a group commit of several writes between its commit and its acknowledgements. */
  let groupCrashes = 0;

  const crashPoint = () => {
    const crashed = restarts - downs;
    if (options.forceCrashAfter !== undefined && crashed === 0) return { commit: options.forceCrashAfter, after: true };
    if (options.forceGroupCrashBefore !== undefined && crashed === 0) return { groupCommit: options.forceGroupCrashBefore, before: true };
    if (options.forceCrashAfterRunningTool && crashed === 0) return { afterRunningTool: true as const };
    if (!(options.crashes ?? true) || crashed >= 3 || !prng.chance(0.5)) return null;
    if (prng.chance(0.3)) return { groupCommit: 1 + prng.int(6), before: prng.chance(0.3) };
    return { commit: 1 + prng.int(40), after: prng.chance(0.5) };
  };
  const boot = () =>
    new World({
      dbFile,
      catalog: options.catalog,
      model,
      time,
      ids,
      prng,
      outside,
      crashAt: crashPoint(),
      plants: options.plants ?? {},
      callDepthMax: CALL_DEPTH_MAX,
      callLimit: options.callLimit ?? callLimitFromEnv(),
      replica: `sim-${restarts}`,
      midTurn: options.midTurn ?? (seed % 2 === 0 ? "steer" : "queue"),
      onCommit: (world, step) => checker.afterCommit(world.store, world.stacks.cached(step.sessionKey), step),
      onMove: (move) => moves.push(move),
    });

  let world = boot();
  const restart = async () => {
    // The dead process's scheduler sets no more timers.
    await world.scheduler.stop();
    await world.gateway.idle();
    if (world.store.crashedGroup > 0) groupCrashes++;
    restarts++;
    if (process.env.SIM_DEBUG) console.log(`restart #${restarts}`);
    world = boot();
    try {
      await checker.afterRestart(world.store, (key) => world.stacks.getOrLoad(key));
      await world.gateway.recover();
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
    }
    // As at a start: runs missed while the process was down run now, or are skipped, per the grace.
    world.scheduler.start();
  };
  const settle = async () => {
    await world.scheduler.idle();
    // Idle: no turn runs, and every call_agent callee has stopped (one whose caller gave up closes itself later).
    await world.gateway.idle();
    await world.limiter.idle();
    while (world.store.dead) {
      await restart();
      await world.gateway.idle();
    }
  };

  type Message = (typeof messages)[number];
  /** A platform redelivers what the process died before acknowledging: submit until a live world takes it. */
  const deliver = async (message: Message) => {
    for (;;) {
      try {
        const result = await world.gateway.submit({ sessionKey: message.session, messageId: message.id, userId: `user-${message.session}`, text: message.text });
        if (process.env.SIM_DEBUG) console.log(`submit ${message.session} ${message.id} "${message.text}" → ${JSON.stringify(result)}`);
        if (result.status === "accepted" || result.status === "duplicate") message.accepted = true;
        return;
      } catch (error) {
        if (!(error instanceof Crash)) throw error;
        await restart();
      }
    }
  };
  /**
   * Messages of several chats that arrive together, as the updates of one Telegram getUpdates batch or Slack events
   * handled at once do: submitted in the same turn of the event loop, so their inserts can share a group commit
   * (and a crash can strike it). What a dead process did not acknowledge is redelivered, one by one.
   */
  const deliverTogether = async (batch: Message[]) => {
    const results = await Promise.allSettled(
      batch.map((message) => world.gateway.submit({ sessionKey: message.session, messageId: message.id, userId: `user-${message.session}`, text: message.text })),
    );
    for (const [i, result] of results.entries()) {
      if (result.status === "rejected" && !(result.reason instanceof Crash)) throw result.reason;
      if (result.status === "fulfilled" && (result.value.status === "accepted" || result.value.status === "duplicate")) batch[i]!.accepted = true;
    }
    if (world.store.dead) await restart();
    for (const message of batch) if (!message.accepted) await deliver(message);
  };
  /**
   * A batch run that a dead process left open (it crashed before the run closed itself) is closed when its session
   * next starts a task, or by a /cancel (Orchestrator.handleMessage, control.ts unwind). A session where that is
   * still to come gets one more message (a /cancel when a task waits there), so the end state shows them closed.
   */
  const closeLeftOpen = async () => {
    if (restarts === 0) return;
    for (const key of sessions) {
      const live = new Set((await world.store.steps.frames(key)).map((f) => f.agentSessionId));
      if ((await world.store.steps.openAgentSessions(key)).every((s) => live.has(s.agentSessionId))) continue;
      const waiting = (await world.store.tasks.active(key)) !== null;
      const message = { session: key, id: `closing-${key}`, text: waiting ? "/cancel" : `message closing: please help with ${key}`, accepted: false };
      messages.push(message);
      await deliver(message);
      await settle();
    }
  };

  /** Time passes while the process is up: each timer that comes due fires (the scheduler's among them), then settles. */
  const passTime = async (ms: number) => {
    const until = time.now() + ms;
    for (let next = time.nextAt(); next !== null && next <= until; next = time.nextAt()) {
      time.advance(Math.max(0, next - time.now()));
      await settle();
    }
    if (until > time.now()) time.advance(until - time.now());
  };
  /** An outage: the process dies (idle, or not), time passes, and it starts again. */
  const outage = async (ms: number) => {
    await settle();
    await world.scheduler.stop();
    world.store.die();
    time.advance(ms);
    downs++;
    await restart();
    await settle();
  };

  const jobs = (options.schedules ?? true) ? simJobs(prng, sessions, time.now()) : [];
  const jobsCreated = time.now();
  let scheduleEnd = jobsCreated;
  const events = options.events ?? 14;
  try {
    for (const job of jobs) await world.store.schedules.create(job, 20);
    world.scheduler.start();
    for (let i = 0; i < events; i++) {
      const session = prng.pick(sessions);
      const kind = prng.weighted({
        message: 62,
        duplicate: 10,
        cancel: 7,
        status: 5,
        stop: 3,
        reset: 3,
        decide: 8,
        expire: 2,
        ...(jobs.length > 0 ? { wait: 8, down: 3 } : {}),
      });
      if (kind === "wait" || kind === "down") {
        // Up to 1.5 h with the process up; or 10 min to 3 h down (a due time in it runs late, or is skipped).
        if (kind === "wait") await passTime(prng.int(90 * 60_000));
        else await outage((10 + prng.int(170)) * 60_000);
        continue;
      }
      if (kind === "decide" || kind === "expire") {
        // The owner clicks Approve or Deny (sometimes twice), or time runs out.
        try {
          if (kind === "expire") await world.gateway.expireApprovals(time.now() + 120_000);
          else {
            const pending = await world.store.approvals.pending(session);
            if (pending.length > 0) {
              const approval = prng.pick(pending);
              const decision = prng.chance(0.6) ? "approve" : "deny";
              await world.gateway.decide(approval.id, `user-${session}`, decision);
              if (prng.chance(0.3)) await world.gateway.decide(approval.id, `user-${session}`, decision === "approve" ? "deny" : "approve");
            }
          }
        } catch (error) {
          if (!(error instanceof Crash)) throw error;
        }
        await settle();
        continue;
      }
      const earlier = messages.filter((m) => m.session === session);
      const message = kind === "duplicate" && earlier.length > 0 ? prng.pick(earlier) : { session, id: `p${i}`, text: textFor(kind, i), accepted: false };
      if (!messages.includes(message)) messages.push(message);
      // One message in five arrives with messages of the other chats (a batch of updates).
      const together =
        kind === "message" && prng.chance(0.2)
          ? sessions
              .filter((s) => s !== session)
              .map((s, n) => ({ session: s, id: `p${i}-${n}`, text: `message ${i}.${n + 1}: please help with task ${i}.${n + 1}`, accepted: false }))
          : [];
      messages.push(...together);
      if (together.length > 0) await deliverTogether([message, ...together]);
      else await deliver(message);
      if (prng.chance(0.5)) await settle();
      else if (world.store.dead) await settle();
    }
    await settle();
    await closeLeftOpen();
    // Every due time up to the end has its outcome: look until no job is due (a run's turn moves the clock on).
    for (let i = 0; i < 10 && jobs.length > 0; i++) {
      await settle();
      if ((await world.store.schedules.due(time.now(), 100)).length === 0) break;
      await world.scheduler.look().catch((error: unknown) => {
        if (!(error instanceof Crash)) throw error;
      });
    }
    scheduleEnd = time.now();
  } catch (error) {
    checker.violations.push(`the simulation itself failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }

  let traceHash = "";
  let compactions = 0;
  const refusals = { busy: 0, unavailable: 0 };
  try {
    const rows = (await Promise.all(sessions.map((key) => world.store.steps.log(key)))).flat();
    compactions = rows.filter((e) => e.type === "compaction").length;
    for (const row of rows) {
      if (row.type !== "tool_result") continue;
      const content = String((row.payload as { content?: unknown }).content);
      if (content.startsWith("target busy:")) refusals.busy++;
      if (content.startsWith(`the agent "${UNAVAILABLE}" is unavailable`)) refusals.unavailable++;
    }
    await checker.atEnd(
      world.store,
      sessions,
      outside,
      messages.filter((m) => m.text.startsWith("message ")),
    );
    if (jobs.length > 0) checker.violations.push(...(await checkSimSchedules(world.store, jobs, moves, sessions, jobsCreated, scheduleEnd)));
    traceHash = await trace(world, sessions, outside);
  } finally {
    await world.store.close();
    if (!process.env.SIM_KEEP_DB) for (const suffix of ["", "-wal", "-shm", ".lock"]) rmSync(dbFile + suffix, { force: true });
  }
  const violations = [...model.violations, ...checker.violations].map((v) => `seed ${seed}: ${v}\n  replay: ${replayCommand(seed)}`);
  return {
    seed,
    violations,
    traceHash,
    stats: {
      modelCalls: model.calls,
      restarts: restarts - downs,
      messages: messages.length,
      delivered: outside.delivered.length,
      compactions,
      groupCrashes,
      ...refusals,
      scheduled: scheduleStats(moves, downs),
    },
  };
}

/** What the scheduled jobs did: runs, runs that stood for earlier due times, moves that told of late ones; outages. */
function scheduleStats(moves: SimMove[], downs: number): ScenarioResult["stats"]["scheduled"] {
  const stats = { runs: 0, folded: 0, late: 0, downs };
  for (const m of moves) {
    if (m.result === "run") stats.runs++;
    if (m.told) stats.late++;
  }
  // A run's move that settled more than its run: the rest were folded in, or late (told with the same move).
  stats.folded = moves.filter((m) => m.result === "run" && m.from < m.lastDue).length;
  return stats;
}

function callLimitFromEnv(): { max: number; queue: number } {
  const max = Number(process.env.SIM_CALL_LIMIT ?? 2);
  const queue = Number(process.env.SIM_CALL_QUEUE ?? 2);
  if (!Number.isInteger(max) || max < 1 || !Number.isInteger(queue) || queue < 0) {
    throw new Error(`SIM_CALL_LIMIT must be a whole number ≥ 1 and SIM_CALL_QUEUE one ≥ 0, got "${process.env.SIM_CALL_LIMIT}" and "${process.env.SIM_CALL_QUEUE}"`);
  }
  return { max, queue };
}

function textFor(kind: string, i: number): string {
  switch (kind) {
    case "cancel":
      return "/cancel";
    case "status":
      return "/status";
    case "reset":
      return "/reset";
    case "stop":
      return "stop";
    default:
      return `message ${i}: please help with task ${i}`;
  }
}

function counterIdSource(): Ids {
  const counts = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counts.get(prefix) ?? 0) + 1;
      counts.set(prefix, n);
      return `${prefix}_${n}`;
    },
  };
}

/** The planted nondeterminism: ids that do not come from the seed. */
function randomIdSource(): Ids {
  return { next: (prefix) => `${prefix}_${randomUUID()}` };
}

/** A hash of everything observable: the context log, every request's end, and what the platform showed. */
async function trace(world: World, sessions: string[], outside: Outside): Promise<string> {
  const hash = createHash("sha256");
  for (const key of sessions) {
    for (const e of await world.store.steps.log(key))
      hash.update(JSON.stringify([e.seq, e.type, e.taskId, e.requestId, e.frameId, e.agentSessionId, e.payload, e.createdAt]));
    for (const r of await world.store.requests.ofSession(key)) hash.update(JSON.stringify([r.id, r.status, r.error, r.text]));
  }
  for (const d of outside.delivered) hash.update(JSON.stringify([d.id, d.agent, d.text]));
  hash.update(String(outside.ledger));
  return hash.digest("hex");
}
