import { SqliteStore } from "./sqlite/sqlite-store.js";

/** An in-memory store for tests: the same SQLite code, so tests exercise what production runs. */
export function openMemoryStore(now?: () => number): SqliteStore {
  return new SqliteStore(":memory:", now);
}
