// Connecting to PostgreSQL: the pool (with its own int8 parser), transactions, and errors that say what went
// wrong without ever carrying the password.
import pg from "pg";

/** BIGINT columns (timestamps, seqs, tokens, counters) read back as numbers; exact below 2^53. Only for our pools. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === pg.types.builtins.INT8 && format !== "binary") return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

export interface ConnectionOptions {
  poolMax?: number;
  /** How long a connection attempt may take before it fails (default 10 s). */
  connectTimeoutMs?: number;
}

export function clientConfig(url: string, options: ConnectionOptions = {}): pg.ClientConfig {
  return {
    connectionString: url,
    types: TYPES,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: "switchboard",
    keepAlive: true,
    // A transaction stalled halfway (a network hang) would hold its lease row's lock; the server ends it.
    idle_in_transaction_session_timeout: 60_000,
  };
}

export function createPool(url: string, options: ConnectionOptions = {}): pg.Pool {
  // Pipelined: the queries a caller sends without waiting (a step's batch, statement-batch.ts) go out together and
  // are answered in order; a caller that waits for each sees no difference.
  return new pg.Pool({ ...clientConfig(url, options), pipeline: true, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 });
}

/** Runs `work` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when it throws. */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // Set when the connection itself failed (BEGIN or ROLLBACK did not go through): the pool must drop it.
  let broken: Error | undefined;
  try {
    await client.query("BEGIN").catch((error: Error) => {
      broken = error;
      throw error;
    });
    try {
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    }
  } finally {
    client.release(broken);
  }
}

/** Where the URL points, for messages: user, host, port and database, never the password. */
export function describeTarget(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username ? `${decodeURIComponent(u.username)}@` : "";
    return `postgres://${user}${u.host}${u.pathname}`;
  } catch {
    return "(an unparsable DATABASE_URL)";
  }
}

function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}

/** Removes the URL's password (plain and URL-encoded) from a text that might echo it. */
export function scrubPassword(text: string, url: string): string {
  const password = passwordOf(url);
  if (password.length === 0) return text;
  return text.split(password).join("***").split(encodeURIComponent(password)).join("***");
}

/**
 * A connection failure as one line naming what was wrong: unreachable server, refused credentials, missing
 * database or role, bad URL. The password never appears, even if the driver echoed it.
 */
export function connectionError(error: unknown, url: string): Error {
  const target = describeTarget(url);
  const e = error as { code?: string; message?: string };
  const detail = e.message ?? String(error);
  let reason: string;
  switch (e.code) {
    case "ECONNREFUSED":
      reason = "the connection was refused: is the server running, and on that host and port?";
      break;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      reason = "the host name does not resolve";
      break;
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      reason = `the server cannot be reached (${e.code})`;
      break;
    case "28P01":
      reason = `the password was refused (${detail})`;
      break;
    case "28000":
      reason = `the server does not let this user in (${detail}); check the role and pg_hba.conf`;
      break;
    case "3D000":
      reason = `the database does not exist (${detail})`;
      break;
    default:
      reason = /timeout/i.test(detail) ? "the connection timed out: is the server reachable?" : detail;
  }
  return new Error(scrubPassword(`cannot connect to PostgreSQL at ${target}: ${reason}`, url), { cause: error });
}

/** Checks the URL's shape before the driver sees it (the driver's own message may quote the URL). */
export function checkUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error("DATABASE_URL is not a URL: expected postgres://user:password@host:5432/database");
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new Error(`DATABASE_URL must start with postgres:// or postgresql:// (it starts with ${parsed.protocol}//)`);
  }
}
