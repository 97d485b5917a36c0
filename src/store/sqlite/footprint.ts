// What one user keeps on the server (the HTTP API's per-user caps), on SQLite. See Store.userFootprint.
import type Database from "better-sqlite3";
import type { UserFootprint } from "../store.js";

/** Read at each HTTP admission once the cached figure is old: prepared once per connection. */
export function prepareFootprint(db: Database.Database): (userId: string) => UserFootprint {
  const statement = db.prepare(
    `SELECT
       (SELECT count(*) FROM sessions WHERE owner_id = @user) AS sessions,
       (SELECT coalesce(sum(octet_length(l.payload)), 0) FROM sessions s JOIN context_log l ON l.session_key = s.key WHERE s.owner_id = @user)
       + (SELECT coalesce(sum(octet_length(text)), 0) FROM memories WHERE user_id = @user) AS bytes`,
  );
  return (userId) => {
    const row = statement.get({ user: userId }) as { sessions: number; bytes: number };
    return { sessions: Number(row.sessions), bytes: Number(row.bytes) };
  };
}
