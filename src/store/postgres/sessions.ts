// Sessions on PostgreSQL: opened on first use, their token totals, and moving a whole conversation (move.ts).
import * as rows from "../rows.js";
import type { SessionRecord, SessionStore, SessionUsage } from "../store.js";
import { transaction } from "./connection.js";
import type { PostgresContext } from "./context.js";
import { moveSession } from "./move.js";
import { S } from "./statements.js";

export class PostgresSessions implements SessionStore {
  constructor(private readonly ctx: PostgresContext) {}

  async open(key: string, newMainAgentSessionId: () => string): Promise<SessionRecord> {
    const found = await this.ctx.one(S.getSession, [key]);
    if (found) return rows.toSession(found);
    // The new row comes back from the insert; another replica that created it first leaves it to be read.
    const created = await this.ctx.maybe(S.insertSession, [key, newMainAgentSessionId(), this.ctx.now()], rows.toSession);
    return created ?? rows.toSession((await this.ctx.one(S.getSession, [key]))!);
  }

  find(key: string): Promise<SessionRecord | null> {
    return this.ctx.maybe(S.getSession, [key], rows.toSession);
  }

  async usage(key: string): Promise<SessionUsage> {
    return rows.toSessionUsage(await this.ctx.one(S.sessionUsage, [key]));
  }

  move(from: string, to: string): Promise<{ moved: number } | { refused: string }> {
    return transaction(this.ctx.pool, (client) => moveSession(client, from, to));
  }
}
