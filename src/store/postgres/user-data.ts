// A user's data on PostgreSQL (npm run user): the one algorithm (src/store/user-data.ts), each statement awaited,
// inside the caller's transaction. Rare, so plain statements.
import type pg from "pg";
import type { Row } from "../rows.js";
import type { UserDataStore, UserExport, UserFootprint } from "../store.js";
import { eraseUser, exportUser, type Plan, type Statement, type UserDataDialect } from "../user-data.js";
import { transaction } from "./connection.js";
import { userFootprint } from "./footprint.js";

const dialect: UserDataDialect = {
  inList: (column, name) => `${column} = ANY(@${name}::text[])`,
  insertionOrder: () => "seq",
};

/** `@name` parameters as PostgreSQL's `$1`, `$2`… */
function positional({ sql, params }: Statement): { text: string; values: unknown[] } {
  const names: string[] = [];
  const text = sql.replace(/@(\w+)/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`no value for @${name} in: ${sql}`);
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  });
  return { text, values: names.map((n) => params[n]) };
}

/** Runs `plan` to its end on `client` (inside the caller's transaction). */
export async function runPlan<T>(client: pg.ClientBase, plan: Plan<T>): Promise<T> {
  let next = plan.next();
  while (!next.done) {
    const step = next.value;
    if ("all" in step) {
      const { text, values } = positional(step.all);
      next = plan.next((await client.query<Row>(text, values)).rows);
    } else {
      const { text, values } = positional(step.run);
      next = plan.next((await client.query(text, values)).rowCount ?? 0);
    }
  }
  return next.value;
}

export class PostgresUserData implements UserDataStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => number,
  ) {}

  export(userId: string): Promise<UserExport> {
    const now = this.now();
    return transaction(this.pool, async (client) => {
      // Everything about the user, read in one snapshot.
      await client.query(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
      return runPlan(client, exportUser(dialect, userId, now));
    });
  }

  erase(userId: string): Promise<Record<string, number>> {
    return transaction(this.pool, (client) => runPlan(client, eraseUser(dialect, userId)));
  }

  footprint(userId: string): Promise<UserFootprint> {
    return userFootprint(this.pool, userId);
  }
}
