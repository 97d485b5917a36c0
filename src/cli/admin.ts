import { approvalsView, formatApprovals, formatSession, formatSessions, formatStuck, sessionsView, sessionView, stuckView } from "../admin/report.js";
import { formatSchedules, schedulesView } from "../admin/schedules.js";
import { clean, parseDuration } from "../admin/text.js";
import { loadConfigOrExit } from "../config.js";
import { openDatabase } from "./database.js";
import { findSessionKey } from "./session-key.js";
import { parseArguments, unknownName, usageError } from "./usage.js";

// `npm run admin -- <command>`: what an operator asks of a running gateway's database: recent sessions and their
// cost, one session in full, pending approvals, and work that is stuck. It only reads, and works beside a running
// gateway (SQLite is opened without the gateway's process lock; PostgreSQL is shared anyway).

const USAGE = `usage: npm run admin -- sessions [--limit N] [--json]   recent sessions (20 by default) and their owners
       npm run admin -- show <session key> [--json]     one session: stack, task, approvals, errors
                                                        (a unique start of the key is enough)
       npm run admin -- approvals [--json]              every pending approval, oldest first
       npm run admin -- stuck [--after 10m] [--json]    work not moving for that long
                                                        (default: ADMIN_STUCK_AFTER, 5m)
       npm run admin -- schedules [--limit N] [--json]  scheduled jobs (100 by default): owner, chat,
                                                        next run, last result
`;

// Typed in full so that the checker knows the checks below narrow `command` (a call that returns `never`).
const usage: (problem?: string) => never = (problem) => usageError(USAGE, problem);
const parsed = parseArguments(USAGE, { limit: { type: "string" }, after: { type: "string" }, json: { type: "boolean" } }, { positionals: true });
const [command, ...args] = parsed.positionals;
const { limit: limitText, after: afterText, json } = parsed.values;
const COMMANDS = ["sessions", "show", "approvals", "stuck", "schedules"];
if (!command || !COMMANDS.includes(command)) usage(command ? unknownName("command", command, COMMANDS) : undefined);
if (command === "show" && args.length === 0) usage("show needs a session key, e.g. telegram:1001");
const expected = command === "show" ? 1 : 0;
if (args.length > expected) usage(`unexpected argument "${clean(args[expected]!)}"`);
if (limitText !== undefined && command !== "sessions" && command !== "schedules") usage("--limit is for sessions and schedules");
if (afterText !== undefined && command !== "stuck") usage("--after is for stuck");

let limit = command === "schedules" ? 100 : 20;
if (limitText !== undefined) {
  limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > 1000) usage(`--limit must be a whole number from 1 to 1000, got "${clean(limitText)}"`);
}
let afterMs: number | null = null;
if (afterText !== undefined) {
  afterMs = parseDuration(afterText);
  if (afterMs === null || afterMs < 1) usage(`--after must be a duration such as 90s, 10m or 2h, got "${clean(afterText)}"`);
}

const config = loadConfigOrExit({ LOG_LEVEL: "error" });
const store = await openDatabase(config, { exclusive: false });
const now = Date.now();
const print = (view: unknown, text: (now: number) => string) => process.stdout.write(json ? `${JSON.stringify(view, null, 2)}\n` : `${text(now)}\n`);
try {
  switch (command) {
    case "sessions": {
      const view = await sessionsView(store, { limit });
      print(view, (at) => formatSessions(view, at));
      break;
    }
    case "show": {
      const match = await findSessionKey(store, args[0]!);
      const view = match.ok ? await sessionView(store, match.key, { now }) : null;
      if (!view) {
        process.stderr.write(`${match.ok ? `no session "${clean(match.key)}"` : match.problem}\n`);
        process.exitCode = 1;
        break;
      }
      print(view, (at) => formatSession(view, at));
      break;
    }
    case "approvals": {
      const view = await approvalsView(store, { now });
      print(view, (at) => formatApprovals(view, at));
      break;
    }
    case "schedules": {
      const view = await schedulesView(store, { limit });
      print(view, (at) => formatSchedules(view, at));
      break;
    }
    case "stuck": {
      const view = await stuckView(store, { olderThanMs: afterMs ?? config.ADMIN_STUCK_AFTER, now });
      print(view, (at) => formatStuck(view, at));
      break;
    }
  }
} finally {
  await store.close();
}
