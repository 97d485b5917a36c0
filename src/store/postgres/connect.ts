// Opening the store's connections: the query pool (after migrating through it) and the LISTEN connection,
// side by side. Whatever fails, nothing is left open, and the reason is one line without the password.
import type pg from "pg";
import type { Logger } from "pino";
import { checkUrl, clientConfig, connectionError, createPool, describeTarget, scrubPassword } from "./connection.js";
import { ChangeListener } from "./listener.js";
import { migrate } from "./migrations.js";

export async function connect(url: string, options: { poolMax?: number; log: Logger }): Promise<{ pool: pg.Pool; listener: ChangeListener }> {
  checkUrl(url);
  const { log } = options;
  const pool = createPool(url, { poolMax: options.poolMax });
  // pg emits 'error' on an idle pooled connection when the server goes away; the next query reconnects.
  pool.on("error", (error) => log.warn({ err: scrubPassword(error.message, url) }, "a pooled PostgreSQL connection failed"));
  const listener = new ChangeListener(clientConfig(url), log);
  const migrated = (async () => {
    const client = await pool.connect().catch((error: unknown) => {
      throw connectionError(error, url);
    });
    try {
      await migrate(client);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(scrubPassword(`cannot migrate the PostgreSQL database at ${describeTarget(url)}: ${message}`, url), { cause: error });
    } finally {
      client.release();
    }
  })();
  const listening = listener.start().catch((error: unknown) => {
    throw connectionError(error, url);
  });
  const failed = (await Promise.allSettled([migrated, listening])).find((r) => r.status === "rejected");
  if (failed) {
    await listener.close();
    await pool.end().catch(() => undefined);
    throw failed.reason;
  }
  return { pool, listener };
}
