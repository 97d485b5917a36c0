// Several statements in one round trip: their texts with the values written in as literals, sent as one simple
// query. PostgreSQL runs a simple query's statements in order, each seeing the ones before, as one transaction
// (unless the caller already opened one): an error in any of them undoes them all. node-postgres sends a query
// only once the previous one answered, so this is how a step's writes become one round trip instead of one per
// statement plus BEGIN and COMMIT.
import pg from "pg";
import type { Sql } from "./statements.js";

/** The SQLSTATE the fence raises when the lease moved on (class "SB": ours, not PostgreSQL's). */
export const FENCED_SQLSTATE = "SBF01";

export class StatementBatch {
  private readonly texts: string[] = [];

  /** Adds `statement` with `values`; returns its index in what `send` resolves with. */
  add(statement: Sql, values: unknown[]): number {
    this.texts.push(inline(statement.text, values));
    return this.texts.length - 1;
  }

  /**
   * Locks the lease row of `key` until the batch's transaction ends (a takeover waits for this step instead of
   * racing it) and fails the whole batch with FENCED_SQLSTATE, the current token in its detail, unless `token`
   * still holds it.
   */
  fence(key: string, token: number): number {
    // The key goes in hex: nothing in it can end the dollar-quoted block.
    const keyHex = Buffer.from(key, "utf8").toString("hex");
    this.texts.push(
      `DO $fence$ DECLARE current_token bigint; BEGIN
         SELECT token INTO current_token FROM leases WHERE key = convert_from('\\x${keyHex}'::bytea, 'UTF8') FOR UPDATE;
         IF current_token IS DISTINCT FROM ${integer(token)} THEN
           RAISE EXCEPTION 'fenced' USING ERRCODE = '${FENCED_SQLSTATE}', DETAIL = coalesce(current_token::text, '');
         END IF;
       END $fence$`,
    );
    return this.texts.length - 1;
  }

  get size(): number {
    return this.texts.length;
  }

  /** Sends every statement in one round trip; one result per statement, in order. */
  async send(client: pg.ClientBase | pg.Pool): Promise<pg.QueryResult[]> {
    // The leading comment says how many statements ride in this round trip (the bench counts them by it).
    const results = (await client.query(`/* statements: ${this.texts.length} */ ${this.texts.join(";\n")}`)) as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(results) ? results : [results];
  }
}

/** The token the fence error names as current (null: nobody holds the lease). */
export function fencedCurrent(error: unknown): number | null | undefined {
  const e = error as { code?: string; detail?: string };
  if (e?.code !== FENCED_SQLSTATE) return undefined;
  return e.detail ? Number(e.detail) : null;
}

/** `text` with $1…$n replaced by the values as SQL literals (untyped, as a bound parameter is). */
export function inline(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index >= values.length) throw new Error(`statement needs $${n} but was given ${values.length} values`);
    return literal(values[index]);
  });
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (Array.isArray(value)) return pg.escapeLiteral(`{${value.map(arrayElement).join(",")}}`);
  if (typeof value === "number") return integerOrFloat(value);
  if (typeof value === "bigint") return `'${value.toString()}'`;
  if (typeof value === "boolean") return value ? "'true'" : "'false'";
  if (typeof value === "string") return pg.escapeLiteral(value);
  throw new Error(`cannot write a ${typeof value} as an SQL literal`);
}

/** An element of an array literal: quoted, backslashes and quotes escaped (as pg writes arrays it binds). */
function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (Array.isArray(value)) throw new Error("nested arrays are not written as literals");
  return `"${String(value).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function integer(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
}

function integerOrFloat(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return `'${String(value)}'`;
}
