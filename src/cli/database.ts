import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.js";
import { DatabaseInUseError } from "../store/sqlite/process-lock.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import type { Store } from "../store/store.js";

/** Prints `message` and exits 1: what every command-line tool does when it cannot go on. */
export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/**
 * The gateway's database for a command-line tool: PostgreSQL when DATABASE_URL is set, else the SQLite file in
 * DATA_DIR (which must exist). `exclusive` takes the gateway's process lock (for changes that must not race a running
 * gateway; `inUse` says what to do then); otherwise it opens beside a running gateway. Any failure is printed, exit 1.
 */
export async function openDatabase(config: Config, options: { exclusive: boolean; inUse?: string }): Promise<Store> {
  if (config.DATABASE_URL) {
    const { PostgresStore } = await import("../store/postgres/postgres-store.js");
    try {
      return await PostgresStore.open(config.DATABASE_URL);
    } catch (error) {
      fail(`cannot open the PostgreSQL database (DATABASE_URL): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const file = join(config.DATA_DIR, "switchboard.db");
  if (!existsSync(file)) fail(`no database at ${file}; set DATA_DIR (or DATABASE_URL) to where Switchboard keeps its data`);
  try {
    return new SqliteStore(file, Date.now, { exclusive: options.exclusive });
  } catch (error) {
    if (error instanceof DatabaseInUseError && options.inUse) fail(options.inUse);
    fail(`cannot open the database ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
