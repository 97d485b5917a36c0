import Database from "better-sqlite3";
import { statSync } from "node:fs";
import { createServer } from "node:http";
import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { join } from "node:path";
import { systemText } from "../test/fakes/anthropic/server.js";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { benchDatabase } from "./postgres.js";
import { countStatements } from "./statements.js";
import { idleMemory, rawSqliteCommitsPerSecond, startupMs } from "./limits.js";
import { watchEventLoop } from "./loop.js";
import { benchWorld, percentile, ScriptModel, send } from "./world.js";

export interface Result {
  scenario: string;
  [figure: string]: number | string;
}

const rss = () => Math.round(process.memoryUsage().rss / 1024 / 1024);

/** The database's size after a checkpoint (what the scenario really wrote). */
function dbBytes(root: string): number {
  const file = join(root, "bench.db");
  const db = new Database(file);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return statSync(file).size;
}

function summary(latencies: number[], elapsedMs: number, count: number) {
  return {
    messages_per_s: Math.round((count / elapsedMs) * 1000),
    p50_ms: +percentile(latencies, 50).toFixed(3),
    p99_ms: +percentile(latencies, 99).toFixed(3),
  };
}

export async function singleTurn(): Promise<Result> {
  const { cpu_us_per_message: _cpu, ...run } = await singleTurnOnce();
  return { scenario: "single-turn", ...run };
}

/** single-turn, cpu-per-message and limit-ratio read the same run (one per `npm run bench`). */
let singleTurnResult: ReturnType<typeof singleTurnRun> | null = null;
const singleTurnOnce = () => (singleTurnResult ??= singleTurnRun(null));

async function singleTurnRun(tracer: Tracer | null) {
  const world = benchWorld(new ScriptModel(() => [{ type: "text", text: "ok" }]), undefined, undefined, tracer);
  const latencies: number[] = [];
  const sessions = 1000;
  const perSession = 10;
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < perSession; i++) for (let s = 0; s < sessions; s++) latencies.push(await send(world, `s${s}`, `message ${i}`));
  const elapsed = performance.now() - start;
  const used = process.cpuUsage(cpu);
  await world.close();
  const bytes = dbBytes(world.root);
  world.remove();
  const messages = sessions * perSession;
  return {
    messages,
    ...summary(latencies, elapsed, messages),
    peak_rss_mb: rss(),
    db_bytes_per_message: Math.round(bytes / messages),
    cpu_us_per_message: Math.round((used.user + used.system) / messages),
  };
}

/** Process CPU time (user + system) over single-turn's messages: what one message costs the machine. */
export async function cpuPerMessage(): Promise<Result> {
  const run = await singleTurnOnce();
  return { scenario: "cpu-per-message", messages: run.messages, cpu_us_per_message: run.cpu_us_per_message, messages_per_s: run.messages_per_s };
}

/** single-turn's rate as a share of what the disk layer allows: a raw SQLite commit loop measured in the same run. */
export async function limitRatio(): Promise<Result> {
  const run = await singleTurnOnce();
  const raw = rawSqliteCommitsPerSecond();
  return {
    scenario: "limit-ratio",
    single_turn_messages_per_s: run.messages_per_s,
    raw_sqlite_commits_per_s: raw,
    percent_of_limit: +((run.messages_per_s / raw) * 100).toFixed(1),
  };
}

/** 10,000 sessions each waiting on a child (interview asked its question), in one running gateway. */
export async function idleMemoryScenario(): Promise<Result> {
  return { scenario: "idle-memory", ...(await idleMemory(handoffModel())) };
}

/** `npm start` on an empty data directory until it logs that it started (median of 3). */
export async function startup(): Promise<Result> {
  return { scenario: "startup", runs: 3, ready_ms: Math.round(await startupMs(3)) };
}

/**
 * Single-turn with tracing off, then on: the official SDK's batch processor and OTLP/protobuf exporter sending every
 * span to a collector stand-in on loopback (in this process, so its work counts against the gateway: a worst case).
 */
export async function tracingOverhead(): Promise<Result> {
  let exports = 0;
  const sink = createServer((req, res) => {
    req.on("data", () => {});
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(sink.address() as { port: number }).port}/v1/traces`;
  // A queue that holds every span of the run, so none is dropped and every one is exported (the default 2048 drops).
  const provider = new BasicTracerProvider({
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url, concurrencyLimit: 1000 }), { maxQueueSize: 100_000, maxExportBatchSize: 512, scheduledDelayMillis: 200 }),
    ],
  });
  const tracer = provider.getTracer("switchboard");
  // Alternated, off/on twice, and the better of each kept: the machine's drift hits both sides alike.
  const off: Awaited<ReturnType<typeof singleTurnRun>>[] = [];
  const on: Awaited<ReturnType<typeof singleTurnRun>>[] = [];
  for (let round = 0; round < 2; round++) {
    off.push(await singleTurnRun(null));
    on.push(await singleTurnRun(tracer));
  }
  await provider.shutdown();
  await new Promise<void>((resolve) => sink.close(() => resolve()));
  const best = (runs: typeof off) => runs.reduce((a, b) => (b.messages_per_s > a.messages_per_s ? b : a));
  const [o, t] = [best(off), best(on)];
  return {
    scenario: "tracing-overhead",
    messages: t.messages,
    off_messages_per_s: o.messages_per_s,
    on_messages_per_s: t.messages_per_s,
    overhead_pct: +(((o.messages_per_s - t.messages_per_s) / o.messages_per_s) * 100).toFixed(1),
    off_p50_ms: o.p50_ms,
    on_p50_ms: t.p50_ms,
    off_p99_ms: o.p99_ms,
    on_p99_ms: t.p99_ms,
    exports,
  };
}

export const handoffModel = () =>
  new ScriptModel((req, use) => {
    const system = systemText({ system: req.system } as never);
    const last = req.messages.at(-1)!;
    const hasResult = last.content.some((b) => b.type === "tool_result");
    if (system.includes('skill "interview"'))
      return last.content.some((b) => b.type === "text" && b.text === "Lisbon") ? [use("complete", { result: "Lisbon" })] : [{ type: "text", text: "Where to?" }];
    return hasResult ? [{ type: "text", text: "Lisbon it is." }] : [use("use_skill", { name: "interview", message: "ask where" })];
  });

export async function handoffRoundtrip(): Promise<Result> {
  const model = handoffModel();
  const world = benchWorld(model);
  const latencies: number[] = [];
  const sessions = 2000;
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let s = 0; s < sessions; s++) {
    latencies.push(await send(world, `h${s}`, "plan a trip"));
    latencies.push(await send(world, `h${s}`, "Lisbon"));
  }
  const elapsed = performance.now() - start;
  const used = process.cpuUsage(cpu);
  await world.close();
  const bytes = dbBytes(world.root);
  world.remove();
  return {
    scenario: "handoff-roundtrip",
    sessions,
    user_messages: sessions * 2,
    model_calls: model.calls,
    ...summary(latencies, elapsed, sessions * 2),
    cpu_us_per_user_message: Math.round((used.user + used.system) / (sessions * 2)),
    peak_rss_mb: rss(),
    db_bytes_per_session: Math.round(bytes / sessions),
  };
}

/** BENCH_STATEMENTS=1: which statements a user message sent, most frequent first (on stderr). */
function printStatements(counts: Map<string, number>, userMessages: number): void {
  for (const [text, n] of [...counts].sort((a, b) => b[1] - a[1])) {
    process.stderr.write(`${(n / userMessages).toFixed(2).padStart(6)}  ${text.replace(/\s+/g, " ").slice(0, 110)}\n`);
  }
}

/** The same round trip on PostgreSQL (a local server: every statement is a round trip over loopback TCP). */
export async function handoffRoundtripPostgres(): Promise<Result> {
  const database = benchDatabase();
  if ("skipped" in database) return { scenario: "handoff-roundtrip-postgres", skipped: database.skipped };
  try {
    const store = await PostgresStore.open(database.url);
    const model = handoffModel();
    const world = benchWorld(model, undefined, store);
    const latencies: number[] = [];
    const sessions = 500;
    const statements = countStatements();
    const serverBefore = database.serverCpuMs();
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let s = 0; s < sessions; s++) {
      latencies.push(await send(world, `h${s}`, "plan a trip"));
      latencies.push(await send(world, `h${s}`, "Lisbon"));
    }
    const elapsed = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const serverAfter = database.serverCpuMs();
    statements.stop();
    if (process.env.BENCH_STATEMENTS) printStatements(statements.byName(), sessions * 2);
    await world.close();
    world.remove();
    return {
      scenario: "handoff-roundtrip-postgres",
      sessions,
      user_messages: sessions * 2,
      model_calls: model.calls,
      ...summary(latencies, elapsed, sessions * 2),
      statements_per_user_message: +(statements.statements() / (sessions * 2)).toFixed(1),
      round_trips_per_user_message: +(statements.roundTrips() / (sessions * 2)).toFixed(1),
      // Where a user message's wall time goes: this process's CPU, the server's (local server only), the rest waiting.
      wall_us_per_user_message: Math.round((elapsed * 1000) / (sessions * 2)),
      cpu_us_per_user_message: Math.round((used.user + used.system) / (sessions * 2)),
      ...(serverBefore !== null && serverAfter !== null ? { server_cpu_us_per_user_message: Math.round(((serverAfter - serverBefore) * 1000) / (sessions * 2)) } : {}),
      peak_rss_mb: rss(),
    };
  } finally {
    database.stop();
  }
}

/**
 * 1,000 sessions, each sending 10 messages one after the other to a model that takes 1 s per answer; the sessions
 * start spread over the first second, as users do. The ideal is 1,000 msg/s: every session always waiting on the
 * model. `messages_per_s` is the steady state, the rate in the window where every session is talking (the ramp
 * at each end left out); `overhead` is each message's latency beyond the model's second.
 */
export async function concurrent(): Promise<Result> {
  const latency = 1000;
  const world = benchWorld(new ScriptModel(() => [{ type: "text", text: "ok" }], latency));
  const sessions = 1000;
  const perSession = 10;
  const latencies: number[] = [];
  const finished: number[] = [];
  const loop = watchEventLoop();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      await new Promise((resolve) => setTimeout(resolve, (s * latency) / sessions));
      for (let i = 0; i < perSession; i++) {
        latencies.push(await send(world, `c${s}`, `message ${i}`));
        finished.push(performance.now() - start);
      }
    }),
  );
  const elapsed = performance.now() - start;
  const blocked = loop.stop();
  const used = process.cpuUsage(cpu);
  // Steady state: from the moment every session has started (and sent its first message) until the first one is done.
  const from = 2 * latency;
  const to = elapsed - 2 * latency;
  const inWindow = finished.filter((t) => t >= from && t < to).length;
  const groups = world.store instanceof SqliteStore ? world.store.groupCommits() : null;
  const achieved = (inWindow / (to - from)) * 1000;
  const ideal = (sessions / latency) * 1000;
  await world.close();
  world.remove();
  return {
    scenario: "concurrent",
    sessions,
    messages: sessions * perSession,
    model_latency_ms: latency,
    ideal_messages_per_s: Math.round(ideal),
    messages_per_s: Math.round(achieved),
    percent_of_ideal: +((achieved / ideal) * 100).toFixed(1),
    wall_messages_per_s: Math.round(((sessions * perSession) / elapsed) * 1000),
    p50_ms: +percentile(latencies, 50).toFixed(1),
    p99_ms: +percentile(latencies, 99).toFixed(1),
    overhead_p50_ms: +(percentile(latencies, 50) - latency).toFixed(2),
    overhead_p99_ms: +(percentile(latencies, 99) - latency).toFixed(2),
    cpu_us_per_message: Math.round((used.user + used.system) / (sessions * perSession)),
    ...blocked,
    ...(groups ? { writes_per_group_commit: +(groups.writes / groups.batches).toFixed(2), largest_group_commit: groups.largest } : {}),
    peak_rss_mb: rss(),
  };
}

export async function deepStack(): Promise<Result> {
  const chain = ["a", "b", "c", "d", "e"];
  const model = new ScriptModel((req, use) => {
    const system = systemText({ system: req.system } as never);
    const me = /You are the agent "([a-e])"/.exec(system)?.[1];
    const hasResult = req.messages.at(-1)!.content.some((b) => b.type === "tool_result");
    if (!me) return hasResult ? [{ type: "text", text: "unwound" }] : [use("use_agent", { name: "a", message: "go" })];
    const next = chain[chain.indexOf(me) + 1];
    if (hasResult || !next) return [use("complete", { result: `${me} done` })];
    return [use("use_agent", { name: next, message: "deeper" })];
  });
  const world = benchWorld(model);
  const rounds = 1000;
  const latencies: number[] = [];
  const start = performance.now();
  for (let r = 0; r < rounds; r++) latencies.push(await send(world, `d${r % 50}`, "go deep"));
  const elapsed = performance.now() - start;
  await world.close();
  world.remove();
  return {
    scenario: "deep-stack",
    rounds,
    depth: 6,
    model_calls: model.calls,
    rounds_per_s: Math.round((rounds / elapsed) * 1000),
    p50_ms: +percentile(latencies, 50).toFixed(3),
    p99_ms: +percentile(latencies, 99).toFixed(3),
    peak_rss_mb: rss(),
  };
}

export async function recovery(): Promise<Result> {
  const sessions = 10_000;
  const first = benchWorld(handoffModel());
  for (let s = 0; s < sessions; s++) await send(first, `r${s}`, "plan a trip"); // each waits at depth 2
  await first.close();
  if (global.gc) global.gc();
  const before = process.memoryUsage().heapUsed;
  const start = performance.now();
  const second = benchWorld(handoffModel(), first.root);
  const recovered = await second.gateway.recover();
  const ready = performance.now() - start;
  const firstReply = await send(second, "r1234", "Lisbon");
  // The first reply of each of 100 more restored sessions (the one above also pays for a cold page cache).
  const firstReplies: number[] = [];
  for (let s = 2000; s < 2100; s++) firstReplies.push(await send(second, `r${s}`, "Lisbon"));
  const idleSessions: unknown[] = [];
  // Touch every session's stack once (as if each got a message), then measure what idle sessions keep.
  for (let s = 0; s < sessions; s++) idleSessions.push(await second.stacks.hasActive(`bench:r${s}`));
  for (let s = 0; s < sessions; s++) second.stacks.invalidate(`bench:r${s}`);
  if (global.gc) global.gc();
  const perIdle = Math.max(0, process.memoryUsage().heapUsed - before) / sessions;
  await second.close();
  second.remove();
  return {
    scenario: "recovery",
    sessions_with_active_stacks: sessions,
    requests_recovered: recovered,
    ready_ms: +ready.toFixed(1),
    first_reply_in_restored_session_ms: +firstReply.toFixed(2),
    first_reply_in_restored_session_p50_ms: +percentile(firstReplies, 50).toFixed(2),
    first_reply_in_restored_session_p99_ms: +percentile(firstReplies, 99).toFixed(2),
    heap_bytes_per_idle_session: Math.round(perIdle),
    peak_rss_mb: rss(),
  };
}

export async function longHistory(): Promise<Result> {
  const model = new ScriptModel(() => [{ type: "text", text: "noted" }]);
  const world = benchWorld(model);
  for (let i = 0; i < 1000; i++) await send(world, "long", `entry ${i}: ${"detail ".repeat(10)}`); // 2,000 log entries
  const turns = 200;
  const timeTurns = async (session: string) => {
    const t: number[] = [];
    for (let i = 0; i < turns; i++) t.push(await send(world, session, `more ${i}`));
    return percentile(t, 50);
  };
  const long = await timeTurns("long");
  const fresh = await timeTurns("fresh");
  await world.close();
  world.remove();
  return {
    scenario: "long-history",
    log_entries: 2000 + turns * 2,
    per_turn_p50_ms: +long.toFixed(3),
    fresh_session_per_turn_p50_ms: +fresh.toFixed(3),
    ratio: +(long / fresh).toFixed(2),
  };
}
