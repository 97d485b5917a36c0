// The statements of long-term memory (memories.ts), named like the rest (statements.ts).
import { sql } from "./statements.js";

/** Every column but the search vector, which stays in the database. */
const MEMORY = `seq, id, user_id, text, kind, task_id, created_at, updated_at`;
/** What the search vector was built from: the same punctuation-free text (see migration 2). */
const WORDS = (column: string) => `regexp_replace(${column}, '[[:punct:]]+', ' ', 'g')`;
const DUE = `(status = 'pending' AND next_at <= $2::bigint) OR (status = 'running' AND claimed_until < $2::bigint)`;
const GIVE_UP = `j.attempts >= $4::int`;

export const M = {
  memoriesOf: sql("memories_of", `SELECT ${MEMORY} FROM memories WHERE user_id = $1 ORDER BY created_at, seq`),
  recentMemories: sql("recent_memories", `SELECT ${MEMORY} FROM memories WHERE user_id = $1 ORDER BY updated_at DESC, seq DESC LIMIT $2`),
  // BM25 over the user's own memories (ts_rank has no inverse document frequency: "in" would count as much as
  // "timezone"), each memory counting every query word once. A word is its plainto_tsquery, never to_tsquery on
  // what the user typed. k1 = 1.2, b = 0.75; the idf is Lucene's, never negative.
  searchMemories: sql(
    "search_memories",
    `WITH mine AS (
       SELECT ${MEMORY}, search, length(search) AS len FROM memories WHERE user_id = $1
     ),
     stats AS (SELECT count(*)::float8 AS n, GREATEST(avg(len), 1)::float8 AS avglen FROM mine),
     words AS (
       SELECT DISTINCT plainto_tsquery('simple'::regconfig, ${WORDS("w")}) AS q FROM unnest($2::text[]) AS w
     ),
     terms AS (
       SELECT words.q, ln(1 + (stats.n - count(*) + 0.5) / (count(*) + 0.5)) AS idf
       FROM words CROSS JOIN stats JOIN mine ON mine.search @@ words.q
       WHERE numnode(words.q) > 0
       GROUP BY words.q, stats.n
     )
     SELECT ${MEMORY.split(", ")
       .map((c) => `m.${c}`)
       .join(", ")},
       sum(t.idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * m.len / stats.avglen))) AS score
     FROM mine m CROSS JOIN stats JOIN terms t ON m.search @@ t.q
     GROUP BY ${MEMORY.split(", ")
       .map((c) => `m.${c}`)
       .join(", ")}, m.len, stats.avglen
     ORDER BY score DESC, m.updated_at DESC, m.seq DESC LIMIT $3`,
  ),
  // A known id is updated, never taken over: an id of another user's memory leaves that memory untouched.
  upsertMemories: sql(
    "upsert_memories",
    `INSERT INTO memories (id, user_id, text, kind, task_id, created_at, updated_at)
     SELECT a.id, $1, a.text, a.kind, $2, $3::bigint, $3::bigint
     FROM unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS a(id, text, kind, n)
     ORDER BY a.n
     ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, kind = EXCLUDED.kind,
       task_id = COALESCE(EXCLUDED.task_id, memories.task_id), updated_at = EXCLUDED.updated_at
     WHERE memories.user_id = EXCLUDED.user_id`,
  ),
  deleteMemoriesById: sql("delete_memories_by_id", `DELETE FROM memories WHERE user_id = $1 AND id = ANY($2::text[])`),
  deleteAllMemories: sql("delete_all_memories", `DELETE FROM memories WHERE user_id = $1`),
  // A step's usage without its request: the session's totals and its budget since the last /reset.
  addSessionUsage: sql(
    "add_session_usage",
    `UPDATE sessions SET input_tokens = input_tokens + $1::bigint, output_tokens = output_tokens + $2::bigint,
     cache_read_tokens = cache_read_tokens + $3::bigint, cache_write_tokens = cache_write_tokens + $4::bigint,
     tokens_since_reset = tokens_since_reset + $1::bigint + $2::bigint + $3::bigint + $4::bigint,
     cost_nano_usd = cost_nano_usd + $6::bigint, cost_since_reset_nano_usd = cost_since_reset_nano_usd + $6::bigint
     WHERE key = $5`,
  ),
  insertMemoryJob: sql(
    "insert_memory_job",
    `INSERT INTO memory_jobs (task_id, user_id, session_key, status, attempts, next_at, created_at, updated_at)
     VALUES ($1, $2, $3, 'pending', 0, $4, $4, $4) ON CONFLICT (task_id) DO NOTHING`,
  ),
  // The oldest due job, locked (SKIP LOCKED: one another replica is claiming is passed over, never claimed twice),
  // claimed in the same statement; or, when it has had its attempts, marked failed (the caller then asks again).
  claimMemoryJob: sql(
    "claim_memory_job",
    `WITH next AS (
       SELECT task_id FROM memory_jobs WHERE ${DUE} ORDER BY created_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED
     )
     UPDATE memory_jobs j SET
       status = CASE WHEN ${GIVE_UP} THEN 'failed' ELSE 'running' END,
       holder = CASE WHEN ${GIVE_UP} THEN NULL ELSE $1::text END,
       claimed_until = CASE WHEN ${GIVE_UP} THEN NULL ELSE $2::bigint + $3::bigint END,
       error = CASE WHEN ${GIVE_UP} THEN 'gave up after ' || j.attempts || ' attempts' || COALESCE('; last error: ' || j.error, '')
         ELSE j.error END,
       attempts = CASE WHEN ${GIVE_UP} THEN j.attempts ELSE j.attempts + 1 END,
       updated_at = $2::bigint
     FROM next WHERE j.task_id = next.task_id
     RETURNING j.*`,
  ),
  holdMemoryJob: sql("hold_memory_job", `SELECT user_id FROM memory_jobs WHERE task_id = $1 AND status = 'running' AND holder = $2 FOR UPDATE`),
  finishMemoryJob: sql("finish_memory_job", `UPDATE memory_jobs SET status = 'done', holder = NULL, claimed_until = NULL, updated_at = $2 WHERE task_id = $1`),
  retryMemoryJob: sql(
    "retry_memory_job",
    `UPDATE memory_jobs SET status = 'pending', next_at = $1, error = $2, holder = NULL, claimed_until = NULL, updated_at = $3
     WHERE task_id = $4 AND status = 'running' AND holder = $5`,
  ),
  pendingMemoryJobs: sql("pending_memory_jobs", `SELECT * FROM memory_jobs WHERE status IN ('pending', 'running') ORDER BY created_at, seq`),
};
