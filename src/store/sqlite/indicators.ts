// Indicators on SQLite (what a provider showed in a chat, for a restart to take back).
import type { Row } from "../rows.js";
import type { IndicatorStore } from "../store.js";
import type { SqliteContext } from "./context.js";

export class SqliteIndicators implements IndicatorStore {
  constructor(private readonly ctx: SqliteContext) {}

  async save(sessionKey: string, data: string): Promise<void> {
    this.ctx.stmts.saveIndicator.run(sessionKey, data, this.ctx.now());
  }

  async delete(sessionKey: string): Promise<void> {
    this.ctx.stmts.deleteIndicator.run(sessionKey);
  }

  async list(provider: string): Promise<Array<{ sessionKey: string; data: string }>> {
    return (this.ctx.stmts.indicators.all(provider, provider) as Row[]).map((r) => ({ sessionKey: String(r.session_key), data: String(r.data) }));
  }
}
