import { clean } from "../admin/text.js";
import { loadConfigOrExit } from "../config.js";
import { openDatabase } from "./database.js";
import { findSessionKey } from "./session-key.js";
import { parseArguments, usageError } from "./usage.js";

// `npm run export -- <session key>`: the session's context log as JSONL on stdout, one entry per line. The key may
// be cut short to a unique start (as `npm run admin -- show` takes it); a session that does not exist exits 1.
const USAGE = "usage: npm run export -- <session key>   (e.g. console:local, telegram:12345; a unique start of the key is enough)\n";
const { positionals } = parseArguments(USAGE, {}, { positionals: true });
if (positionals.length !== 1) usageError(USAGE, positionals.length > 1 ? `one session at a time, got ${positionals.length}` : undefined);
const config = loadConfigOrExit({ LOG_LEVEL: "error" });
const store = await openDatabase(config, { exclusive: false });
try {
  const match = await findSessionKey(store, positionals[0]!);
  if (!match.ok) {
    process.stderr.write(`${match.problem}\n`);
    process.exitCode = 1;
  } else {
    if (match.byPrefix) process.stderr.write(`exporting ${clean(match.key)}\n`);
    const entries = await store.steps.log(match.key);
    if (entries.length === 0) process.stderr.write(`session ${clean(match.key)} has no log entries yet\n`);
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
  }
} finally {
  await store.close();
}
