// What the SQLite store's roles share: one connection and its prepared statements, the clock, group commit, the
// change feed of this process, the lease table (or this process's leases in memory) and the quarantine.
import type Database from "better-sqlite3";
import type { StoreChange } from "../store.js";
import type { GroupCommit } from "./group-commit.js";
import type { SqliteLeases } from "./leases.js";
import type { SqliteQuarantine } from "./quarantine.js";
import type { Statements } from "./statements.js";

export interface SqliteContext {
  db: Database.Database;
  stmts: Statements;
  now: () => number;
  /** Steps, inbound messages, delivery marks and leases of a shared file commit in groups (group-commit.ts). */
  writes: GroupCommit;
  /** Tells this process's watchers, after the change committed. */
  emit(change: StoreChange): void;
  leases: SqliteLeases;
  quarantine: SqliteQuarantine;
}
