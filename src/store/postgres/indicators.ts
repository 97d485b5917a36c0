// Indicators on PostgreSQL (what a provider showed in a chat, for a restart to take back).
import type { IndicatorStore } from "../store.js";
import type { PostgresContext } from "./context.js";
import { S } from "./statements.js";

export class PostgresIndicators implements IndicatorStore {
  constructor(private readonly ctx: PostgresContext) {}

  async save(sessionKey: string, data: string): Promise<void> {
    await this.ctx.changed(S.saveIndicator, [sessionKey, data, this.ctx.now()]);
  }

  async delete(sessionKey: string): Promise<void> {
    await this.ctx.changed(S.deleteIndicator, [sessionKey]);
  }

  async list(provider: string): Promise<Array<{ sessionKey: string; data: string }>> {
    return (await this.ctx.all(S.indicators, [provider])).map((r) => ({ sessionKey: String(r.session_key), data: String(r.data) }));
  }
}
