import type Database from "better-sqlite3";

const SQL = Symbol("statement to prepare");
type Deferred = { [SQL]: string };

const isDeferred = (value: unknown): value is Deferred => typeof value === "object" && value !== null && SQL in value;

/**
 * The statements `prepare(db)` makes, each prepared by SQLite on its first use rather than all when the store opens.
 * A process uses a few dozen of the store's statements, and preparing every one of them was two thirds of opening a
 * store (8 of 12 ms): paid by every start, command-line tool and restart, and by every test that opens a store.
 * `prepare` may only call `db.prepare` (nested objects of statements are fine); a statement that does not compile
 * against the schema now fails where it is first run (test/store/sqlite-prepared-on-use.test.ts prepares them all).
 */
export function preparedOnUse<T extends object>(db: Database.Database, prepare: (db: Database.Database) => T): T {
  const recorder = { prepare: (sql: string): Deferred => ({ [SQL]: sql }) } as unknown as Database.Database;
  return onFirstUse(db, prepare(recorder));
}

function onFirstUse<T extends object>(db: Database.Database, recorded: T): T {
  const statements: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(recorded)) {
    if (isDeferred(value)) {
      let statement: Database.Statement | undefined;
      Object.defineProperty(statements, name, { enumerable: true, get: () => (statement ??= db.prepare(value[SQL])) });
    } else statements[name] = typeof value === "object" && value !== null ? onFirstUse(db, value) : value;
  }
  return statements as T;
}
