// Sessions on SQLite: opened on first use, their token totals, and moving a whole conversation to another key.
import { toSession, toSessionUsage, type Row } from "../rows.js";
import { SESSION_TABLES } from "../schema.js";
import type { SessionRecord, SessionStore, SessionUsage } from "../store.js";
import type { SqliteContext } from "./context.js";

export class SqliteSessions implements SessionStore {
  constructor(private readonly ctx: SqliteContext) {}

  async open(key: string, newMainAgentSessionId: () => string): Promise<SessionRecord> {
    const { stmts } = this.ctx;
    let row = stmts.getSession.get(key) as Row | undefined;
    if (!row) {
      const now = this.ctx.now();
      stmts.insertSession.run(key, newMainAgentSessionId(), now, now);
      row = stmts.getSession.get(key) as Row;
    }
    return toSession(row);
  }

  async find(key: string): Promise<SessionRecord | null> {
    const row = this.ctx.stmts.getSession.get(key) as Row | undefined;
    return row ? toSession(row) : null;
  }

  async usage(key: string): Promise<SessionUsage> {
    return toSessionUsage((this.ctx.stmts.sessionUsage.get(key) as Row | undefined) ?? null);
  }

  async move(from: string, to: string): Promise<{ moved: number } | { refused: string }> {
    const { db, stmts } = this.ctx;
    return db.transaction((): { moved: number } | { refused: string } => {
      const under = (column: string) => `(${column} = @from OR substr(${column}, 1, length(@from) + 1) = @from || ':')`;
      const renamed = (column: string) => `@to || substr(${column}, length(@from) + 1)`;
      const keys = db.prepare(`SELECT key FROM sessions WHERE ${under("key")}`).all({ from }) as Array<{ key: string }>;
      for (const { key } of keys) {
        const target = to + key.slice(from.length);
        if (!stmts.getSession.get(target)) continue;
        // The new chat already has a session of its own (a message got there first): fine while it holds no work.
        if (stmts.activeTask.get(target) || (stmts.frames.all(target) as Row[]).length > 0) {
          return { refused: `${target} already has a conversation under way` };
        }
        db.prepare(`DELETE FROM sessions WHERE key = ?`).run(target);
        stmts.deleteIndicator.run(target);
      }
      // A request of the new key's idle conversation may share an external id with one moving in (ids unique per
      // chat only): the moving one keeps its identity under a prefixed id, so both stay and neither is lost.
      db.prepare(
        `UPDATE requests SET external_id = 'moved:' || session_key || ':' || external_id WHERE ${under("session_key")}
         AND EXISTS (SELECT 1 FROM requests b WHERE b.session_key = ${renamed("requests.session_key")} AND b.external_id = requests.external_id)`,
      ).run({ from, to });
      for (const table of SESSION_TABLES) {
        db.prepare(`UPDATE ${table} SET session_key = ${renamed("session_key")} WHERE ${under("session_key")}`).run({ from, to });
      }
      db.prepare(`UPDATE sessions SET key = ${renamed("key")} WHERE ${under("key")}`).run({ from, to });
      // A new fencing token on both sides (see the PostgreSQL move); leases in the process's memory are this process's own.
      db.prepare(`UPDATE leases SET token = token + 1, expires_at = 0 WHERE ${under("key")} OR key = @to OR substr(key, 1, length(@to) + 1) = @to || ':'`).run({
        from,
        to,
      });
      return { moved: keys.length };
    })();
  }
}
