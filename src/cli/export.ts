import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfigOrExit } from "../config.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import type { Store } from "../store/store.js";

// `npm run export -- <session key>`: the session's context log as JSONL on stdout, one entry per line.
const key = process.argv[2];
if (!key) {
  process.stderr.write("usage: npm run export -- <session key>   (e.g. console:local, telegram:12345)\n");
  process.exit(2);
}
const config = loadConfigOrExit();
const store = await openForReading();
const entries = await store.sessionLog(key);
if (entries.length === 0) process.stderr.write(`no log entries for session ${key}\n`);
for (const e of entries) {
  process.stdout.write(
    `${JSON.stringify({
      seq: e.seq,
      type: e.type,
      session: e.sessionKey,
      task: e.taskId,
      request: e.requestId,
      frame: e.frameId,
      agent_session_id: e.agentSessionId,
      created_at: new Date(e.createdAt).toISOString(),
      ...(e.payload as object),
    })}\n`,
  );
}
await store.close();

/** The database the gateway uses (DATABASE_URL, else DATA_DIR), opened beside a running gateway. */
async function openForReading(): Promise<Store> {
  if (config.DATABASE_URL) {
    const { PostgresStore } = await import("../store/postgres/postgres-store.js");
    return PostgresStore.open(config.DATABASE_URL);
  }
  const file = join(config.DATA_DIR, "switchboard.db");
  if (!existsSync(file)) {
    process.stderr.write(`no database at ${file}; set DATA_DIR (or DATABASE_URL) to where Switchboard keeps its data\n`);
    process.exit(1);
  }
  return new SqliteStore(file);
}
