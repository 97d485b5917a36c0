import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchWorld, send, type ScriptModel } from "./world.js";

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * The disk layer's own rate: one small row per autocommit INSERT into a fresh WAL database with the store's
 * settings (synchronous = NORMAL), for `ms` milliseconds. What any durable gateway on this machine is measured against.
 */
export function rawSqliteCommitsPerSecond(ms = 2000): number {
  const root = mkdtempSync(join(tmpdir(), "switchboard-raw-"));
  const db = new Database(join(root, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 10000");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  let commits = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    for (let i = 0; i < 100; i++) insert.run("message");
    commits += 100;
  }
  const rate = (commits / (performance.now() - start)) * 1000;
  db.close();
  rmSync(root, { recursive: true, force: true });
  return Math.round(rate);
}

/**
 * Sessions each with a child waiting for the user, in one running gateway: what idle sessions cost in memory. The
 * heap per session is the slope between the first 1,000 sessions and all of them, so the gateway's fixed costs
 * (code compiled on first use, caches that fill up) do not count as the sessions'.
 */
export async function idleMemory(model: ScriptModel, sessions = 10_000) {
  const gc = () => global.gc?.();
  const world = benchWorld(model);
  const warm = 1000;
  const open = async (from: number, to: number) => {
    for (let s = from; s < to; s++) await send(world, `i${s}`, "plan a trip"); // each leaves interview waiting at depth 2
    await world.gateway.idle();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const heapBefore = await open(0, warm);
  const heapAfter = await open(warm, sessions);
  const rssMb = Math.round(process.memoryUsage().rss / 1024 / 1024);
  const waiting = (await world.store.operations.operationalCounts()).activeStacks;
  await world.close();
  world.remove();
  return {
    sessions,
    sessions_with_waiting_child: waiting,
    rss_mb: rssMb,
    heap_bytes_per_idle_session: Math.round(Math.max(0, heapAfter - heapBefore) / (sessions - warm)),
  };
}

/**
 * `npm start` to ready: the real entry point (`node --import tsx src/main.ts`, what `npm start` runs without npm's own
 * start-up) on an empty data directory, until it logs "switchboard started". The median of `runs`.
 */
export async function startupMs(runs = 3): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), "switchboard-startup-"));
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", DATA_DIR: dataDir, LOG_LEVEL: "info" };
    const start = performance.now();
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    await new Promise<void>((resolve, reject) => {
      let log = "";
      child.stderr.on("data", (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes("switchboard started")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`the gateway exited (${code}) before it was ready:\n${log}`)));
    });
    times.push(performance.now() - start);
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}
