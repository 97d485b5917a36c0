// The pages each user message writes to SQLite's WAL, by B-tree (docs/engineering/performance.md, "SQLite's
// physical layout"). A bench world on a file with the automatic checkpoint off, so every page every commit wrote
// stays in the WAL; then each frame's header names its page, and the dbstat virtual table says which table or index
// owns that page now. The counts are exact and do not depend on the machine's load.
//
//   npx tsx bench/wal-pages.ts [handoff-roundtrip|single-turn] [sessions]
import Database from "better-sqlite3";
import { closeSync, mkdtempSync, openSync, readSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { handoffModel } from "./scenarios.js";
import { benchWorld, ScriptModel, send } from "./world.js";

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

interface WalFrame {
  page: number;
  /** Non-zero on the last frame of a commit (the database's size in pages then). */
  commitSize: number;
}

/** The frames of `walFile` from byte `from` on (a frame boundary), as their headers say. */
function readFrames(walFile: string, from: number): { pageSize: number; frames: WalFrame[] } {
  const fd = openSync(walFile, "r");
  try {
    const header = Buffer.alloc(WAL_HEADER);
    readSync(fd, header, 0, WAL_HEADER, 0);
    const pageSize = header.readUInt32BE(8);
    const size = statSync(walFile).size;
    const frameHeader = Buffer.alloc(FRAME_HEADER);
    const frames: WalFrame[] = [];
    for (let at = Math.max(from, WAL_HEADER); at + FRAME_HEADER + pageSize <= size; at += FRAME_HEADER + pageSize) {
      readSync(fd, frameHeader, 0, FRAME_HEADER, at);
      frames.push({ page: frameHeader.readUInt32BE(0), commitSize: frameHeader.readUInt32BE(4) });
    }
    return { pageSize, frames };
  } finally {
    closeSync(fd);
  }
}

/** Which B-tree owns each page of `file` (overflow pages count as their table's); pages not listed are free. */
function owners(file: string): Map<number, string> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare(`SELECT name, pageno FROM dbstat`).all() as Array<{ name: string; pageno: number }>;
    return new Map(rows.map((r) => [r.pageno, r.name]));
  } finally {
    db.close();
  }
}

async function run(scenario: string, sessions: number): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "switchboard-wal-pages-"));
  const file = join(root, "bench.db");
  // Opened as benchWorld would; its connection stops checkpointing, so the WAL keeps every page written from here.
  const store = new SqliteStore(file, Date.now, { exclusive: true });
  (store as unknown as { db: Database.Database }).db.pragma("wal_autocheckpoint = 0");
  const model = scenario === "single-turn" ? new ScriptModel(() => [{ type: "text", text: "ok" }]) : handoffModel();
  const world = benchWorld(model, root, store);
  const from = statSync(`${file}-wal`).size;
  let userMessages = 0;
  if (scenario === "single-turn") {
    for (let i = 0; i < 10; i++) for (let s = 0; s < sessions; s++, userMessages++) await send(world, `s${s}`, `message ${i}`);
  } else {
    for (let s = 0; s < sessions; s++, userMessages += 2) {
      await send(world, `h${s}`, "plan a trip");
      await send(world, `h${s}`, "Lisbon");
    }
  }
  const { pageSize, frames } = readFrames(`${file}-wal`, from);
  const byPage = owners(file);
  const byTree = new Map<string, number>();
  for (const f of frames) {
    const name = f.page === 1 ? "page 1 (header, sqlite_schema)" : (byPage.get(f.page) ?? "free");
    byTree.set(name, (byTree.get(name) ?? 0) + 1);
  }
  await world.close();
  world.remove();
  const per = (n: number) => (n / userMessages).toFixed(2);
  const commits = frames.filter((f) => f.commitSize > 0).length;
  process.stdout.write(
    `${scenario}: ${userMessages} user messages; per user message ${per(frames.length)} pages (${per((frames.length * pageSize) / 1024)} KB of WAL), ${per(commits)} commits\n`,
  );
  for (const [name, n] of [...byTree].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    process.stdout.write(`${per(n).padStart(8)}  ${name}\n`);
  }
}

const [scenario = "handoff-roundtrip", sessions = "300"] = process.argv.slice(2);
if (scenario !== "handoff-roundtrip" && scenario !== "single-turn") throw new Error(`unknown scenario ${scenario}: handoff-roundtrip or single-turn`);
await run(scenario, Number(sessions));
