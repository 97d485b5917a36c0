// A user's data on SQLite (npm run user): the one algorithm (src/store/user-data.ts) run synchronously inside one
// transaction. Export and erase are rare, so their statements are prepared on the spot.
import type Database from "better-sqlite3";
import type { Row } from "../rows.js";
import type { UserDataStore, UserExport, UserFootprint } from "../store.js";
import { eraseUser, exportUser, type Plan, type Statement, type UserDataDialect } from "../user-data.js";
import { prepareFootprint } from "./footprint.js";

const dialect: UserDataDialect = {
  inList: (column, name) => `${column} IN (SELECT value FROM json_each(@${name}))`,
  insertionOrder: () => "rowid",
};

/** Lists travel as JSON (read back by json_each). */
function bind(params: Statement["params"]): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? JSON.stringify(v) : v]));
}

/** Runs `plan` to its end in one transaction. */
export function runPlan<T>(db: Database.Database, plan: () => Plan<T>): T {
  return db.transaction((): T => {
    const steps = plan();
    let next = steps.next();
    while (!next.done) {
      const step = next.value;
      next = steps.next("all" in step ? (db.prepare(step.all.sql).all(bind(step.all.params)) as Row[]) : db.prepare(step.run.sql).run(bind(step.run.params)).changes);
    }
    return next.value;
  })();
}

export class SqliteUserData implements UserDataStore {
  private readonly footprintOf: (userId: string) => UserFootprint;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {
    this.footprintOf = prepareFootprint(db);
  }

  async export(userId: string): Promise<UserExport> {
    const now = this.now();
    return runPlan(this.db, () => exportUser(dialect, userId, now));
  }

  async erase(userId: string): Promise<Record<string, number>> {
    return runPlan(this.db, () => eraseUser(dialect, userId));
  }

  async footprint(userId: string): Promise<UserFootprint> {
    return this.footprintOf(userId);
  }
}
