// Several statements in one round trip: sent together in pipeline mode (the pool's connections are pipelined,
// connection.ts), each as its named prepared statement with bound values, between BEGIN and COMMIT unless the
// caller's transaction holds them. PostgreSQL runs them in order, each seeing the ones before, as one transaction:
// an error in any of them aborts it, the statements after it fail too, and the COMMIT rolls it back. Prepared
// statements are parsed and planned once per connection, where a simple query's text was parsed and planned again
// on every step (docs/engineering/performance.md, "Where a PostgreSQL user message's time goes").
import pg from "pg";
import type { Sql } from "./statements.js";

/** The SQLSTATE the fence raises when the lease moved on (class "SB": ours, not PostgreSQL's). */
export const FENCED_SQLSTATE = "SBF01";

/** Locks the lease row and raises FENCED_SQLSTATE unless the token still holds it (a function: PostgreSQL migration 17). */
const FENCE: Sql = { name: "sb_step_fence", text: "SELECT switchboard_fence($1, $2)" };

/**
 * What the bench's statement counter reads on each query of a batch: the first carries how many statements the
 * round trip holds (the fence and the batch's statements; BEGIN and COMMIT ride along), the others 0.
 */
export interface PipelinedQuery extends pg.QueryConfig {
  pipelined: number;
}

export class StatementBatch {
  private readonly items: Array<{ statement: Sql; values: unknown[] }> = [];

  /** Adds `statement` with `values`; returns its index in what `send` resolves with. */
  add(statement: Sql, values: unknown[]): number {
    this.items.push({ statement, values });
    return this.items.length - 1;
  }

  /**
   * Locks the lease row of `key` until the batch's transaction ends (a takeover waits for this step instead of
   * racing it) and fails the whole batch with FENCED_SQLSTATE, the current token in its detail, unless `token`
   * still holds it.
   */
  fence(key: string, token: number): number {
    if (!Number.isSafeInteger(token)) throw new Error(`not an integer: ${token}`);
    return this.add(FENCE, [key, token]);
  }

  get size(): number {
    return this.items.length;
  }

  /**
   * Sends every statement in one round trip; one result per statement, in order. On a pool: on one of its
   * connections, in a transaction of their own; on a client: inside the transaction its caller opened.
   */
  async send(target: pg.ClientBase | pg.Pool): Promise<pg.QueryResult[]> {
    if (!(target instanceof pg.Pool)) return this.pipeline(target, false);
    const client = await target.connect();
    try {
      const results = await this.pipeline(client, true);
      client.release();
      return results;
    } catch (error) {
      // A failure without a SQLSTATE is the connection's (reset, timeout): the pool must not reuse it.
      client.release((error as { code?: unknown })?.code ? undefined : (error as Error));
      throw error;
    }
  }

  private async pipeline(client: pg.ClientBase, own: boolean): Promise<pg.QueryResult[]> {
    if (this.items.length === 0) return [];
    const queries: PipelinedQuery[] = this.items.map(({ statement, values }) => ({ ...statement, values, pipelined: 0 }));
    if (own) queries.unshift({ text: "BEGIN", pipelined: 0 });
    queries[0]!.pipelined = this.items.length;
    if (own) queries.push({ text: "COMMIT", pipelined: 0 });
    // All submitted before any answer. node-postgres writes each protocol message by itself (three per prepared
    // statement); corked, they leave in one write.
    const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
    stream?.cork?.();
    let pending: Array<Promise<pg.QueryResult>>;
    try {
      pending = queries.map((q) => client.query(q));
    } finally {
      stream?.uncork?.();
    }
    const settled = await Promise.allSettled(pending);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) throw failed.reason;
    const results = settled.map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value);
    return own ? results.slice(1, -1) : results;
  }
}

/** The token the fence error names as current (null: nobody holds the lease). */
export function fencedCurrent(error: unknown): number | null | undefined {
  const e = error as { code?: string; detail?: string };
  if (e?.code !== FENCED_SQLSTATE) return undefined;
  return e.detail ? Number(e.detail) : null;
}
