import { join } from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { DatabaseInUseError } from "../store/sqlite/process-lock.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import type { QuarantineRecord, Store } from "../store/store.js";
import { StartupError } from "./startup.js";

/**
 * The database: PostgreSQL when DATABASE_URL is set (migrated under an advisory lock, so replicas starting together
 * migrate once), else SQLite in DATA_DIR, held with an OS lock so that a second process on it refuses to start.
 */
export async function openStore(config: Config, log: Logger): Promise<Store> {
  // Logged once per row: the row is marked, so the next read skips it silently.
  const onQuarantine = (q: QuarantineRecord) =>
    log.error(
      { session: q.sessionKey, kind: q.kind, row: q.rowId },
      `stored ${q.kind} ${q.rowId} could not be read (${q.reason.split(":")[0]}); it was set aside in the quarantine table and only its session is affected. If that chat misbehaves, send /reset there.`,
    );
  if (config.DATABASE_URL) {
    const { PostgresStore } = await import("../store/postgres/postgres-store.js");
    try {
      return await PostgresStore.open(config.DATABASE_URL, { onQuarantine, log });
    } catch (error) {
      throw new StartupError(`Cannot open the PostgreSQL database (DATABASE_URL): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  try {
    return new SqliteStore(join(config.DATA_DIR, "switchboard.db"), Date.now, { onQuarantine, exclusive: true });
  } catch (error) {
    if (error instanceof DatabaseInUseError) {
      throw new StartupError(
        `Another Switchboard is already running on DATA_DIR=${config.DATA_DIR} (its database is locked). Stop it first, give this one its own DATA_DIR, or set DATABASE_URL to run several replicas on one PostgreSQL.`,
      );
    }
    throw new StartupError(`Cannot open the database: ${error instanceof Error ? error.message : String(error)}`);
  }
}
