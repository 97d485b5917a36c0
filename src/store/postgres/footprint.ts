// What one user keeps on the server (the HTTP API's per-user caps), on PostgreSQL. See Store.userFootprint.
import type pg from "pg";
import type { UserFootprint } from "../store.js";
import { sql } from "./statements.js";

const FOOTPRINT = sql(
  "user_footprint",
  `SELECT
     (SELECT count(*) FROM sessions WHERE owner_id = $1)::float8 AS sessions,
     ((SELECT coalesce(sum(octet_length(l.payload)), 0) FROM sessions s JOIN context_log l ON l.session_key = s.key WHERE s.owner_id = $1)
      + (SELECT coalesce(sum(octet_length(text)), 0) FROM memories WHERE user_id = $1))::float8 AS bytes`,
);

export async function userFootprint(pool: pg.Pool, userId: string): Promise<UserFootprint> {
  const { rows } = await pool.query<{ sessions: number; bytes: number }>({ ...FOOTPRINT, values: [userId] });
  return { sessions: Number(rows[0]!.sessions), bytes: Number(rows[0]!.bytes) };
}
