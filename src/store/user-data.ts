// A user's data (npm run user): what the store holds about one user identity, exported or erased. One algorithm
// for both backends, written as a plan: a generator that yields each statement and is handed back its rows (or the
// number of rows it changed). Each backend runs the plan its own way, inside one transaction: SQLite synchronously,
// PostgreSQL awaiting each statement. Statements name their parameters `@name`; a parameter that is a list of
// strings is tested with `dialect.inList`. The tables of a conversation come from the schema's description.
import { toApproval, toExportedLogEntry, toExportedOutbound, toMemory, toRequest, toTask, usageDay, type Row } from "./rows.js";
import { SESSION_TABLES } from "./schema.js";
import type { ApprovalRecord, UserExport } from "./store.js";
import { toStoredFile } from "./roles/files.js";

export interface Statement {
  sql: string;
  params: Record<string, string | string[]>;
}

/** `all`: the rows come back; `run`: the number of rows changed comes back. */
export type Step = { all: Statement } | { run: Statement };

export type Plan<T> = Generator<Step, T, Row[] | number>;

export interface UserDataDialect {
  /** SQL saying that `column` is one of the strings of the list parameter `@name`. */
  inList(column: string, name: string): string;
  /** What orders the rows of a table without a `seq` column of its own by insertion (SQLite: rowid). */
  insertionOrder(table: "tasks"): string;
}

function* all(sql: string, params: Statement["params"]): Generator<Step, Row[], Row[] | number> {
  return (yield { all: { sql, params } }) as Row[];
}

function* run(sql: string, params: Statement["params"]): Generator<Step, number, Row[] | number> {
  return (yield { run: { sql, params } }) as number;
}

/**
 * The sessions `userId` owns or wrote in. A session is the user's own (`owned`: exported and erased whole) when
 * its owner is the user, or when it has no owner (a chat, e.g. a direct message) and nobody else wrote in it.
 * Any other session is someone else's conversation: only the user's own rows in it are theirs.
 */
function* userSessions(userId: string): Plan<Array<{ key: string; owned: boolean }>> {
  const rows = yield* all(
    `SELECT k.key, s.owner_id,
       EXISTS (SELECT 1 FROM requests r WHERE r.session_key = k.key AND r.user_id <> @user) AS others
     FROM (SELECT key FROM sessions WHERE owner_id = @user UNION SELECT session_key FROM requests WHERE user_id = @user) k
     LEFT JOIN sessions s ON s.key = k.key
     ORDER BY k.key`,
    { user: userId },
  );
  return rows.map((r) => ({
    key: String(r.key),
    // SQLite answers EXISTS with 0 or 1, PostgreSQL with a boolean.
    owned: r.owner_id === userId || ((r.owner_id === null || r.owner_id === undefined) && Number(r.others) === 0),
  }));
}

/** Everything stored about the user: the sessions they own or wrote in, their approvals and their memories. */
export function* exportUser(d: UserDataDialect, userId: string, now: number): Plan<UserExport> {
  const sessions: UserExport["sessions"] = [];
  for (const { key, owned } of yield* userSessions(userId)) {
    // In someone else's session: the user's requests, their tasks, and the log rows and replies of their requests.
    const p = { key, user: userId };
    const only = (column: string) => (owned ? "" : `AND ${column} = @user`);
    const mine = owned ? "" : "AND request_id IN (SELECT id FROM requests WHERE session_key = @key AND user_id = @user)";
    const requests = yield* all(`SELECT * FROM requests WHERE session_key = @key ${only("user_id")} ORDER BY seq`, p);
    const tasks = yield* all(`SELECT * FROM tasks WHERE session_key = @key ${only("owner_id")} ORDER BY created_at, ${d.insertionOrder("tasks")}`, p);
    const log = yield* all(`SELECT * FROM context_log WHERE session_key = @key ${mine} ORDER BY seq`, p);
    const outbound = yield* all(`SELECT * FROM outbox WHERE session_key = @key ${mine} ORDER BY seq`, p);
    // Their files, with their bytes (base64): in their own sessions all of them, elsewhere the ones they sent. A
    // file past FILE_RETENTION_DAYS is listed with its expiredAt and no content.
    const files = yield* all(
      `SELECT f.*, b.bytes FROM files f LEFT JOIN file_blobs b ON b.session_key = f.session_key AND b.sha256 = f.sha256
       WHERE f.session_key = @key ${only("f.owner_id")} ORDER BY f.created_at, f.id`,
      p,
    );
    const workspaceFiles = owned ? yield* all(`SELECT path, kind, mode, size, sha256, content FROM workspace_files WHERE session_key = @key ORDER BY path`, p) : [];
    sessions.push({
      sessionKey: key,
      owned,
      requests: requests.map(toRequest),
      tasks: tasks.map((r) => toTask(r).task),
      log: log.map(toExportedLogEntry),
      outbound: outbound.map(toExportedOutbound),
      files: files.map((r) => ({ ...toStoredFile(r), contentBase64: r.bytes ? Buffer.from(r.bytes as Uint8Array).toString("base64") : "" })),
      workspace: workspaceFiles.map(toExportedFile),
    });
  }
  const owned = sessions.filter((s) => s.owned).map((s) => s.sessionKey);
  const approvals = yield* all(`SELECT * FROM approvals WHERE owner_id = @user OR decided_by = @user OR ${d.inList("session_key", "owned")} ORDER BY requested_at, id`, {
    user: userId,
    owned,
  });
  const memories = yield* all(`SELECT seq, id, user_id, text, kind, task_id, created_at, updated_at FROM memories WHERE user_id = @user ORDER BY created_at, seq`, {
    user: userId,
  });
  const usage = yield* all(
    `SELECT * FROM usage_daily WHERE (scope = 'user' AND subject = @user) OR (scope = 'chat' AND ${d.inList("subject", "owned")}) ORDER BY scope DESC, subject, day`,
    { user: userId, owned },
  );
  return {
    userId,
    exportedAt: new Date(now).toISOString(),
    usage: usage.map(usageDay),
    memories: memories.map(toMemory),
    sessions,
    approvals: approvals.flatMap((r): ApprovalRecord[] => {
      try {
        return [toApproval(r)];
      } catch {
        return []; // unreadable (it is quarantined when the runtime next reads it); the rest still exports
      }
    }),
  };
}

/**
 * Erases the user's data; counts per table. Their own sessions go whole, from every table of a conversation. In
 * someone else's session only their request rows go: the log and replies there are that owner's conversation
 * history (a message row deleted from it would change what the owner's agent remembers), so they stay. Leases
 * stay too: a lease row is never deleted, so that its fencing token only ever grows.
 */
export function* eraseUser(d: UserDataDialect, userId: string): Plan<Record<string, number>> {
  const counts: Record<string, number> = {};
  function* count(table: string, sql: string, params: Statement["params"]): Generator<Step, void, Row[] | number> {
    counts[table] = (counts[table] ?? 0) + (yield* run(sql, params));
  }
  const sessions = yield* userSessions(userId);
  const owned = sessions.filter((s) => s.owned).map((s) => s.key);
  const p = { owned, user: userId, touched: sessions.map((s) => s.key) };
  const inOwned = d.inList("session_key", "owned");
  // Other users' memories learnt in a task erased here stay theirs; only the link to the task goes.
  yield* run(`UPDATE memories SET task_id = NULL WHERE user_id <> @user AND task_id IN (SELECT id FROM tasks WHERE ${inOwned})`, p);
  const userApprovals = `owner_id = @user OR decided_by = @user`;
  // Before the rows they refer to go: quarantined approvals of the user, deliveries of the sessions' replies.
  yield* count("quarantine", `DELETE FROM quarantine WHERE ${inOwned} OR (kind = 'approval' AND row_id IN (SELECT id FROM approvals WHERE ${userApprovals}))`, p);
  yield* count("deliveries", `DELETE FROM deliveries WHERE outbound_id IN (SELECT id FROM outbox WHERE ${inOwned})`, p);
  for (const table of SESSION_TABLES.filter((t) => t !== "quarantine")) yield* count(table, `DELETE FROM ${table} WHERE ${inOwned}`, p);
  yield* count("sessions", `DELETE FROM sessions WHERE ${d.inList("key", "owned")}`, p);
  // Written outside any session's writer: a new fencing token on every session the user wrote in ends a step under
  // way there (it is taken up again from its last commit), and tells the replica that held the session that what it
  // cached of it (holder-cache.ts, its stacks) is gone.
  yield* run(`UPDATE leases SET token = token + 1, expires_at = 0 WHERE ${d.inList("key", "touched")}`, p);
  // The files they sent into other people's conversations go too, and their bytes unless another file there has them.
  yield* count("files", `DELETE FROM files WHERE owner_id = @user`, p);
  yield* count(
    "file_blobs",
    `DELETE FROM file_blobs WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.session_key = file_blobs.session_key AND f.sha256 = file_blobs.sha256)`,
    p,
  );
  yield* count("requests", `DELETE FROM requests WHERE user_id = @user`, p);
  yield* count("approvals", `DELETE FROM approvals WHERE ${userApprovals}`, p);
  yield* count("idempotency_keys", `DELETE FROM idempotency_keys WHERE user_id = @user`, p);
  yield* count("memories", `DELETE FROM memories WHERE user_id = @user`, p);
  yield* count("memory_jobs", `DELETE FROM memory_jobs WHERE user_id = @user`, p);
  // Their scheduled jobs in anyone's conversation (their own conversations' jobs went above), and their time zone.
  yield* count("schedule_jobs", `DELETE FROM schedule_jobs WHERE owner_id = @user`, p);
  yield* count("user_timezones", `DELETE FROM user_timezones WHERE user_id = @user`, p);
  yield* count("usage_daily", `DELETE FROM usage_daily WHERE (scope = 'user' AND subject = @user) OR (scope = 'chat' AND ${d.inList("subject", "owned")})`, p);
  return counts;
}

/** A workspace file as exported: its bytes base64 (as stored), a symlink's target as text. */
function toExportedFile(r: Row): UserExport["sessions"][number]["workspace"][number] {
  const entry = { path: String(r.path), kind: String(r.kind), mode: Number(r.mode), size: Number(r.size), sha256: String(r.sha256) };
  return r.kind === "symlink" ? { ...entry, target: Buffer.from(String(r.content), "base64").toString() } : { ...entry, contentBase64: String(r.content) };
}
