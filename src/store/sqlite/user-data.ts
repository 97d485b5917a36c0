// A user's data on SQLite (npm run user): what the store holds about one user identity, exported or erased.
// Rare, so statements are prepared on the spot. Which sessions are whose is decided in `userSessions`.
import type Database from "better-sqlite3";
import { toApproval, toExportedLogEntry, toExportedOutbound, toMemory, toRequest, toTask, type Row } from "../rows.js";
import type { ApprovalRecord, UserDataStore, UserExport, UserFootprint } from "../store.js";
import { userFootprint } from "./footprint.js";

/**
 * The sessions `userId` owns or wrote in. A session is the user's own (`owned`: exported and erased whole) when
 * its owner is the user, or when it has no owner (a chat, e.g. a direct message) and nobody else wrote in it.
 * Any other session is someone else's conversation: only the user's own rows in it are theirs.
 */
function userSessions(db: Database.Database, userId: string): Array<{ key: string; owned: boolean }> {
  const rows = db
    .prepare(
      `SELECT k.key, s.owner_id,
         EXISTS (SELECT 1 FROM requests r WHERE r.session_key = k.key AND r.user_id <> @user) AS others
       FROM (SELECT key FROM sessions WHERE owner_id = @user UNION SELECT session_key FROM requests WHERE user_id = @user) k
       LEFT JOIN sessions s ON s.key = k.key
       ORDER BY k.key`,
    )
    .all({ user: userId }) as Row[];
  return rows.map((r) => ({
    key: String(r.key),
    owned: r.owner_id === userId || ((r.owner_id === null || r.owner_id === undefined) && Number(r.others) === 0),
  }));
}

export function exportUser(db: Database.Database, userId: string, now: number): UserExport {
  return db.transaction((): UserExport => {
    const sessions = userSessions(db, userId).map(({ key, owned }) => {
      const p = { key, user: userId };
      const mine = owned ? "" : "AND request_id IN (SELECT id FROM requests WHERE session_key = @key AND user_id = @user)";
      const requests = db
        .prepare(`SELECT * FROM requests WHERE session_key = @key ${owned ? "" : "AND user_id = @user"} ORDER BY seq`)
        .all(p) as Row[];
      const tasks = db
        .prepare(`SELECT * FROM tasks WHERE session_key = @key ${owned ? "" : "AND owner_id = @user"} ORDER BY created_at, rowid`)
        .all(p) as Row[];
      const log = db.prepare(`SELECT * FROM context_log WHERE session_key = @key ${mine} ORDER BY seq`).all(p) as Row[];
      const outbound = db.prepare(`SELECT * FROM outbox WHERE session_key = @key ${mine} ORDER BY seq`).all(p) as Row[];
      return {
        sessionKey: key,
        owned,
        requests: requests.map(toRequest),
        tasks: tasks.map((r) => toTask(r).task),
        log: log.map(toExportedLogEntry),
        outbound: outbound.map(toExportedOutbound),
      };
    });
    const owned = JSON.stringify(sessions.filter((s) => s.owned).map((s) => s.sessionKey));
    const approvals = db
      .prepare(
        `SELECT * FROM approvals WHERE owner_id = @user OR decided_by = @user OR session_key IN (SELECT value FROM json_each(@owned))
         ORDER BY requested_at, id`,
      )
      .all({ user: userId, owned }) as Row[];
    const memories = db.prepare(`SELECT * FROM memories WHERE user_id = ? ORDER BY created_at, seq`).all(userId) as Row[];
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
  })();
}

/**
 * Erases the user's data in one transaction; counts per table. Their own sessions go whole. In someone else's
 * session only their request rows go: the log and replies there are that owner's conversation history (a
 * message row deleted from it would change what the owner's agent remembers), so they stay. Leases stay too: a
 * lease row is never deleted, so that its fencing token only ever grows.
 */
export function deleteUser(db: Database.Database, userId: string): Record<string, number> {
  return db.transaction(() => {
    const counts: Record<string, number> = {};
    const run = (table: string, sql: string, params: Record<string, unknown>) => {
      counts[table] = (counts[table] ?? 0) + db.prepare(sql).run(params).changes;
    };
    const owned = JSON.stringify(userSessions(db, userId).filter((s) => s.owned).map((s) => s.key));
    const p = { owned, user: userId };
    const inOwned = `session_key IN (SELECT value FROM json_each(@owned))`;
    // Other users' memories learnt in a task erased here stay theirs; only the link to the task goes.
    db.prepare(`UPDATE memories SET task_id = NULL WHERE user_id <> @user AND task_id IN (SELECT id FROM tasks WHERE ${inOwned})`).run(p);
    const userApprovals = `owner_id = @user OR decided_by = @user`;
    run("quarantine", `DELETE FROM quarantine WHERE ${inOwned} OR (kind = 'approval' AND row_id IN (SELECT id FROM approvals WHERE ${userApprovals}))`, p);
    run("deliveries", `DELETE FROM deliveries WHERE outbound_id IN (SELECT id FROM outbox WHERE ${inOwned})`, p);
    for (const table of ["outbox", "context_log", "frames", "tasks", "requests", "approvals", "idempotency_keys", "indicators", "memory_jobs"]) {
      run(table, `DELETE FROM ${table} WHERE ${inOwned}`, p);
    }
    run("sessions", `DELETE FROM sessions WHERE key IN (SELECT value FROM json_each(@owned))`, p);
    run("requests", `DELETE FROM requests WHERE user_id = @user`, p);
    run("approvals", `DELETE FROM approvals WHERE ${userApprovals}`, p);
    run("idempotency_keys", `DELETE FROM idempotency_keys WHERE user_id = @user`, p);
    run("memories", `DELETE FROM memories WHERE user_id = @user`, p);
    run("memory_jobs", `DELETE FROM memory_jobs WHERE user_id = @user`, p);
    return counts;
  })();
}

export class SqliteUserData implements UserDataStore {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {}

  async export(userId: string): Promise<UserExport> {
    return exportUser(this.db, userId, this.now());
  }

  async erase(userId: string): Promise<Record<string, number>> {
    return deleteUser(this.db, userId);
  }

  async footprint(userId: string): Promise<UserFootprint> {
    return userFootprint(this.db, userId);
  }
}
