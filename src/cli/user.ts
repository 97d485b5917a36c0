import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfigOrExit } from "../config.js";
import { openDatabase } from "./database.js";
import type { UserExport } from "../store/store.js";
import { workspaceId, workspacesRoot } from "../workspace/local.js";

// `npm run user -- export <user> [--out FILE]`: everything stored about one user (their identity as the gateway
// writes it: telegram:4242, slack:T1:U1, http:alice) as pretty JSON.
// `npm run user -- delete <user> [--yes]`: erases it. Without --yes it only says what would go (and exits 1, so a
// script that forgot --yes does not take the erasure for done).
// Reading works beside a running gateway; erasing a SQLite database needs the gateway stopped (it holds the
// database's process lock, and its cached conversations would outlive the erasure).

const USAGE = `usage: npm run user -- export <user> [--out FILE]
       npm run user -- delete <user> [--yes]
<user> is an identity with its source, e.g. telegram:4242, slack:T1:U1, http:alice, console:bob
`;

function usage(problem?: string): never {
  process.stderr.write(`${problem ? `${problem}\n` : ""}${USAGE}`);
  process.exit(2);
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({ args: process.argv.slice(2), allowPositionals: true, options: { out: { type: "string" }, yes: { type: "boolean" } } });
}
try {
  parsed = parse();
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
const [command, user, ...extra] = parsed.positionals;
if (command !== "export" && command !== "delete") usage(command ? `unknown command "${command}"` : undefined);
if (!user) usage(`${command} needs a user`);
if (extra.length > 0) usage(`unexpected argument "${extra[0]}"`);
if (command === "export" && parsed.values.yes) usage("--yes is for delete");
if (command === "delete" && parsed.values.out !== undefined) usage("--out is for export");

const config = loadConfigOrExit({ LOG_LEVEL: "error" });
const erase = command === "delete" && parsed.values.yes === true;
const store = await openDatabase(config, {
  exclusive: erase,
  inUse:
    `Switchboard is running on DATA_DIR=${config.DATA_DIR} (it holds the database's lock). Stop it first, run this again, then start it: ` +
    "a user's data is erased only while the gateway is stopped. (Nothing was deleted.)",
});
try {
  const data = await store.userData.export(user);
  const summary = describe(data);
  if (command === "export") {
    const json = `${JSON.stringify(data, null, 2)}\n`;
    if (parsed.values.out) {
      // Personal data: readable by the admin who wrote it only.
      writeFileSync(parsed.values.out, json, { mode: 0o600 });
      process.stderr.write(`wrote ${parsed.values.out}: ${summary ?? "nothing is stored about this user"}\n`);
    } else process.stdout.write(json);
    if (!summary) process.stderr.write(`nothing is stored about ${user}${hint(user)}\n`);
  } else if (!summary) {
    process.stdout.write(`nothing is stored about ${user}; nothing to delete${hint(user)}\n`);
  } else if (!erase) {
    process.stdout.write(`${user}: ${summary}.\nNothing was deleted. To erase all of it, run: npm run user -- delete ${user} --yes\n`);
    process.exitCode = 1;
  } else {
    const counts = await store.userData.erase(user);
    // The workspaces' copies on this machine go too (another replica's copy is emptied when it next holds the session).
    for (const s of data.sessions.filter((s) => s.owned)) rmSync(join(workspacesRoot(config.DATA_DIR), workspaceId(s.sessionKey)), { recursive: true, force: true });
    const rows = Object.entries(counts).filter(([, n]) => n > 0);
    const listed = rows.length ? rows.map(([table, n]) => `${table} ${n}`).join(", ") : "no rows";
    process.stdout.write(`deleted everything stored about ${user} (${listed})\n`);
  }
} finally {
  await store.close();
}

/** What an export holds, in words ("3 memories, 2 sessions (…)"); null when it holds nothing. */
function describe(data: UserExport): string | null {
  const sum = (pick: (s: UserExport["sessions"][number]) => number) => data.sessions.reduce((n, s) => n + pick(s), 0);
  const owned = data.sessions.filter((s) => s.owned).length;
  const parts = [
    [data.memories.length, "memory", "memories"],
    [data.sessions.length, "session", "sessions"],
    [sum((s) => s.requests.length), "request", "requests"],
    [sum((s) => s.tasks.length), "task", "tasks"],
    [sum((s) => s.log.length), "log entry", "log entries"],
    [sum((s) => s.outbound.length), "reply", "replies"],
    [data.approvals.length, "approval", "approvals"],
  ] as const;
  if (parts.every(([n]) => n === 0)) return null;
  const words = parts.map(([n, one, many]) => `${n} ${n === 1 ? one : many}`);
  // Sessions theirs alone (they own it, or nobody else wrote in it) go whole; in the others only what they wrote goes.
  if (data.sessions.length > 0) words[1] += ` (${owned} theirs alone)`;
  return words.join(", ");
}

function hint(user: string): string {
  return user.includes(":") ? "" : " (user ids carry their source, e.g. telegram:4242, slack:T1:U1, http:alice)";
}
