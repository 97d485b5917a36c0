// A user's data on PostgreSQL (npm run user): what the store holds about one user identity, exported or erased,
// by the same rules as the SQLite store (src/store/sqlite/user-data.ts). Rare, so plain statements.
import type pg from "pg";
import { toApproval, toExportedLogEntry, toExportedOutbound, toMemory, toRequest, toTask, type Row } from "../rows.js";
import type { ApprovalRecord, UserDataStore, UserExport, UserFootprint } from "../store.js";
import { transaction } from "./connection.js";
import { userFootprint } from "./footprint.js";

/**
 * The sessions `userId` owns or wrote in. A session is the user's own (`owned`: exported and erased whole) when
 * its owner is the user, or when it has no owner (a chat, e.g. a direct message) and nobody else wrote in it.
 * Any other session is someone else's conversation: only the user's own rows in it are theirs.
 */
async function userSessions(client: pg.ClientBase, userId: string): Promise<Array<{ key: string; owned: boolean }>> {
  const { rows } = await client.query<{ key: string; owner_id: string | null; others: boolean }>(
    `SELECT k.key, s.owner_id,
       EXISTS (SELECT 1 FROM requests r WHERE r.session_key = k.key AND r.user_id <> $1) AS others
     FROM (SELECT key FROM sessions WHERE owner_id = $1 UNION SELECT session_key FROM requests WHERE user_id = $1) k
     LEFT JOIN sessions s ON s.key = k.key
     ORDER BY k.key`,
    [userId],
  );
  return rows.map((r) => ({ key: r.key, owned: r.owner_id === userId || (r.owner_id === null && !r.others) }));
}

/** Everything about the user, read in one snapshot (REPEATABLE READ, read only). */
export async function exportUser(client: pg.ClientBase, userId: string, now: number): Promise<UserExport> {
  await client.query(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
  const all = async (text: string, values: unknown[]) => (await client.query<Row>(text, values)).rows;
  const sessions = [];
  for (const { key, owned } of await userSessions(client, userId)) {
    // In someone else's session: the user's requests, their tasks, and the log rows and replies of their requests.
    const values = owned ? [key] : [key, userId];
    const only = (column: string) => (owned ? "" : `AND ${column} = $2`);
    const mine = owned ? "" : "AND request_id IN (SELECT id FROM requests WHERE session_key = $1 AND user_id = $2)";
    const requests = await all(`SELECT * FROM requests WHERE session_key = $1 ${only("user_id")} ORDER BY seq`, values);
    const tasks = await all(`SELECT * FROM tasks WHERE session_key = $1 ${only("owner_id")} ORDER BY created_at, seq`, values);
    const log = await all(`SELECT * FROM context_log WHERE session_key = $1 ${mine} ORDER BY seq`, values);
    const outbound = await all(`SELECT * FROM outbox WHERE session_key = $1 ${mine} ORDER BY seq`, values);
    sessions.push({
      sessionKey: key,
      owned,
      requests: requests.map(toRequest),
      tasks: tasks.map((r) => toTask(r).task),
      log: log.map(toExportedLogEntry),
      outbound: outbound.map(toExportedOutbound),
    });
  }
  const owned = sessions.filter((s) => s.owned).map((s) => s.sessionKey);
  const approvals = await all(
    `SELECT * FROM approvals WHERE owner_id = $1 OR decided_by = $1 OR session_key = ANY($2::text[]) ORDER BY requested_at, id`,
    [userId, owned],
  );
  const memories = await all(
    `SELECT seq, id, user_id, text, kind, task_id, created_at, updated_at FROM memories WHERE user_id = $1 ORDER BY created_at, seq`,
    [userId],
  );
  return {
    userId,
    exportedAt: new Date(now).toISOString(),
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
 * Erases the user's data inside the caller's transaction; counts per table. Their own sessions go whole. In
 * someone else's session only their request rows go: the log and replies there are that owner's conversation
 * history (a message row deleted from it would change what the owner's agent remembers), so they stay. Leases
 * stay too: a lease row is never deleted, so that its fencing token only ever grows.
 */
export async function deleteUser(client: pg.ClientBase, userId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const run = async (table: string, text: string, values: unknown[]) => {
    counts[table] = (counts[table] ?? 0) + ((await client.query(text, values)).rowCount ?? 0);
  };
  const owned = (await userSessions(client, userId)).filter((s) => s.owned).map((s) => s.key);
  const p = [owned, userId];
  const inOwned = `session_key = ANY($1::text[])`;
  // Other users' memories learnt in a task erased here stay theirs; only the link to the task goes.
  await client.query(
    `UPDATE memories SET task_id = NULL WHERE user_id <> $2 AND task_id IN (SELECT id FROM tasks WHERE session_key = ANY($1::text[]))`,
    p,
  );
  const userApprovals = `owner_id = $2 OR decided_by = $2`;
  await run(
    "quarantine",
    `DELETE FROM quarantine WHERE session_key = ANY($1::text[]) OR (kind = 'approval' AND row_id IN (SELECT id FROM approvals WHERE ${userApprovals}))`,
    p,
  );
  await run("deliveries", `DELETE FROM deliveries WHERE outbound_id IN (SELECT id FROM outbox WHERE ${inOwned})`, [owned]);
  for (const table of ["outbox", "context_log", "frames", "tasks", "requests", "approvals", "idempotency_keys", "indicators", "memory_jobs"]) {
    await run(table, `DELETE FROM ${table} WHERE ${inOwned}`, [owned]);
  }
  await run("sessions", `DELETE FROM sessions WHERE key = ANY($1::text[])`, [owned]);
  await run("requests", `DELETE FROM requests WHERE user_id = $1`, [userId]);
  await run("approvals", `DELETE FROM approvals WHERE owner_id = $1 OR decided_by = $1`, [userId]);
  await run("idempotency_keys", `DELETE FROM idempotency_keys WHERE user_id = $1`, [userId]);
  await run("memories", `DELETE FROM memories WHERE user_id = $1`, [userId]);
  await run("memory_jobs", `DELETE FROM memory_jobs WHERE user_id = $1`, [userId]);
  return counts;
}

export class PostgresUserData implements UserDataStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => number,
  ) {}

  export(userId: string): Promise<UserExport> {
    const now = this.now();
    return transaction(this.pool, (client) => exportUser(client, userId, now));
  }

  erase(userId: string): Promise<Record<string, number>> {
    return transaction(this.pool, (client) => deleteUser(client, userId));
  }

  footprint(userId: string): Promise<UserFootprint> {
    return userFootprint(this.pool, userId);
  }
}
