// Every statement the PostgreSQL store runs. Each has a name, so pg prepares it once per connection and then
// only binds and executes it. Lists (log rows, frames, outbox rows, approvals) go in as arrays and are
// unnested: one statement per kind of row, whatever their number.
import { CHANNEL } from "./changes.js";

export interface Sql {
  name: string;
  text: string;
}

export const sql = (name: string, text: string): Sql => ({ name: `sb_${name}`, text });

const ACTIVE = `('running', 'waiting_user', 'waiting_approval')`;
/** The first key of the advisory locks on conversations ("sb" in ASCII). */
const CONVERSATION_LOCK = 0x7362;
const PENDING_OUTBOX = `delivered_at IS NULL AND failed_at IS NULL`;

/** The active task's owner, else the sender of the oldest unfinished message, of the session `key` names. */
const ownerOf = (key: string) => `COALESCE(
  (SELECT owner_id FROM tasks WHERE session_key = ${key} AND status IN ${ACTIVE} ORDER BY created_at DESC, seq DESC LIMIT 1),
  (SELECT user_id FROM requests WHERE session_key = ${key} AND kind = 'message' AND status IN ('pending', 'running')
   ORDER BY seq LIMIT 1))`;

export const S = {
  // ── a step (commit.ts) ────────────────────────────────────────────────────────────────────────────────
  fence: sql("fence", `SELECT token FROM leases WHERE key = $1 FOR UPDATE`),
  insertTask: sql(
    "insert_task",
    `INSERT INTO tasks (id, session_key, owner_id, status, request_id, expires_at, metadata, created_at, updated_at)
     VALUES ($1, $2, $3, 'running', $4, $6, $7, $5, $5)`,
  ),
  insertLog: sql(
    "insert_log",
    `INSERT INTO context_log (session_key, task_id, request_id, frame_id, agent_session_id, type, payload, created_at)
     SELECT $1, e.t, e.r, e.f, e.a, e.ty, e.p, $2::bigint
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) WITH ORDINALITY AS e(t, r, f, a, ty, p, n)
     ORDER BY e.n`,
  ),
  pushFrames: sql(
    "push_frames",
    `INSERT INTO frames (frame_id, session_key, position, data)
     SELECT f.id, $1, (SELECT COALESCE(MAX(position), -1) FROM frames WHERE session_key = $1) + f.n::int, f.data
     FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS f(id, data, n)`,
  ),
  updateFrames: sql("update_frames", `UPDATE frames SET data = u.data FROM unnest($1::text[], $2::text[]) AS u(id, data) WHERE frames.frame_id = u.id`),
  popFrames: sql("pop_frames", `DELETE FROM frames WHERE frame_id = ANY($1::text[])`),
  updateTask: sql(
    "update_task",
    `UPDATE tasks SET status = $1, result = COALESCE($2, result), error = COALESCE($3, error),
     structured_output = COALESCE($4, structured_output), updated_at = $5 WHERE id = $6`,
  ),
  updateRequests: sql(
    "update_requests",
    `UPDATE requests SET status = u.status, task_id = COALESCE(u.task_id, requests.task_id),
     error = COALESCE(u.error, requests.error), error_code = COALESCE(u.error_code, requests.error_code), updated_at = $1
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u(id, status, task_id, error, error_code)
     WHERE requests.id = u.id`,
  ),
  addUsage: sql(
    "add_usage",
    `WITH r AS (
       UPDATE requests SET input_tokens = input_tokens + $1::bigint, output_tokens = output_tokens + $2::bigint,
       cache_read_tokens = cache_read_tokens + $3::bigint, cache_write_tokens = cache_write_tokens + $4::bigint,
       cost_nano_usd = cost_nano_usd + $7::bigint WHERE id = $5
     )
     UPDATE sessions SET input_tokens = input_tokens + $1, output_tokens = output_tokens + $2,
     cache_read_tokens = cache_read_tokens + $3, cache_write_tokens = cache_write_tokens + $4,
     tokens_since_reset = tokens_since_reset + $1::bigint + $2::bigint + $3::bigint + $4::bigint,
     cost_nano_usd = cost_nano_usd + $7::bigint, cost_since_reset_nano_usd = cost_since_reset_nano_usd + $7::bigint WHERE key = $6`,
  ),
  insertOutbound: sql(
    "insert_outbound",
    `INSERT INTO outbox (id, session_key, request_id, task_id, agent, depth, text, kind, approval_id, file_id, created_at)
     SELECT o.id, $1, o.r, o.t, o.a, o.d, o.x, o.k, o.ap, o.f, $2::bigint
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[])
       WITH ORDINALITY AS o(id, r, t, a, d, x, k, ap, f, n)
     ORDER BY o.n`,
  ),
  setMainSession: sql(
    "set_main_session",
    `UPDATE sessions SET main_agent_session_id = $1, tokens_since_reset = 0, cost_since_reset_nano_usd = 0, updated_at = $2
     WHERE key = $3`,
  ),
  // A call asked for again in its session and task keeps its first approval (approvals_by_call decides).
  insertApprovals: sql(
    "insert_approvals",
    `INSERT INTO approvals (id, session_key, task_id, request_id, frame_id, tool_use_id, tool_name, input, input_hash, agent, owner_id,
       status, requested_at, expires_at)
     SELECT a.id, $1, a.t, a.r, a.f, a.u, a.tn, a.i, a.h, a.ag, a.o, 'pending', $2::bigint, $2::bigint + a.ms
     FROM unnest($3::text[], $4::text[], $13::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[])
       WITH ORDINALITY AS a(id, t, r, f, u, tn, i, h, ag, o, ms, n)
     ORDER BY a.n
     ON CONFLICT DO NOTHING`,
  ),
  quarantineFrames: sql(
    "quarantine_frames",
    `WITH gone AS (DELETE FROM frames WHERE session_key = $1 RETURNING frame_id, data)
     INSERT INTO quarantine (kind, row_id, session_key, reason, created_at)
     SELECT 'frame', frame_id, $1, $2::text || ': ' || left(data, 2000), $3::bigint FROM gone
     ON CONFLICT (kind, row_id) DO NOTHING`,
  ),
  // Changes go into the feed table; the notification names only the row (changes.ts says why).
  feed: sql(
    "feed",
    `WITH f AS (
       INSERT INTO change_feed (change) SELECT c.c FROM unnest($1::text[]) WITH ORDINALITY AS c(c, n) ORDER BY c.n RETURNING id, created_at
     )
     SELECT id::text AS id, (extract(epoch FROM created_at) * 1000)::float8 AS at, pg_notify('${CHANNEL}', id::text) AS notified FROM f ORDER BY f.id`,
  ),

  // ── sessions and requests ───────────────────────────────────────────────────────────────────────────────
  getSession: sql("get_session", `SELECT * FROM sessions WHERE key = $1`),
  insertSession: sql(
    "insert_session",
    `INSERT INTO sessions (key, main_agent_session_id, created_at, updated_at) VALUES ($1, $2, $3, $3)
     ON CONFLICT (key) DO NOTHING RETURNING *`,
  ),
  // Creates the session owned by $2, or claims it for $2 if it has no owner; returns the owner either way.
  claimSession: sql(
    "claim_session",
    `INSERT INTO sessions (key, owner_id, main_agent_session_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (key) DO UPDATE SET owner_id = COALESCE(sessions.owner_id, EXCLUDED.owner_id)
     RETURNING owner_id`,
  ),
  // The change is announced in the statement that stores the request, so only a stored request is announced.
  insertRequest: sql(
    "insert_request",
    `WITH ins AS (
       INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, task_expires_at, task_metadata, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'pending', $9, $10, $7, $7)
       ON CONFLICT (session_key, external_id) DO NOTHING
       RETURNING *
     ), f AS (
       INSERT INTO change_feed (change) SELECT $8 FROM ins RETURNING id, created_at
     )
     SELECT ins.*, f.id::text AS change_id, (extract(epoch FROM f.created_at) * 1000)::float8 AS change_at, pg_notify('${CHANNEL}', f.id::text) AS notified
     FROM ins, f`,
  ),
  // insertRequest under an owner rule ($11: NewRequest.owner, as ownerAdmits decides it): stored only when the
  // conversation's owner, read in the same statement, admits the sender; the owner comes back either way.
  insertAdmittedRequest: sql(
    "insert_admitted_request",
    `WITH look AS (SELECT ${ownerOf("$2")} AS owner), ins AS (
       INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, task_expires_at, task_metadata, created_at, updated_at)
       SELECT $1, $2, $3, $4, $5, $6, 'pending', $9, $10, $7, $7 FROM look
       WHERE CASE WHEN look.owner IS NULL THEN $11 = 'mine-or-free' ELSE look.owner = $5 END
       ON CONFLICT (session_key, external_id) DO NOTHING
       RETURNING *
     ), f AS (
       INSERT INTO change_feed (change) SELECT $8 FROM ins RETURNING id, created_at
     )
     SELECT look.owner AS conversation_owner, stored.* FROM look LEFT JOIN (
       SELECT ins.*, f.id::text AS change_id, (extract(epoch FROM f.created_at) * 1000)::float8 AS change_at, pg_notify('${CHANNEL}', f.id::text) AS notified
       FROM ins, f
     ) AS stored ON true`,
  ),
  requestById: sql("request_by_id", `SELECT * FROM requests WHERE id = $1`),
  requestByExternal: sql("request_by_external", `SELECT * FROM requests WHERE session_key = $1 AND external_id = $2`),
  atDoor: sql(
    "at_door",
    `SELECT r.*, ${ownerOf("$1")} AS conversation_owner FROM (SELECT 1) AS one
     LEFT JOIN requests r ON r.session_key = $1 AND r.external_id = $2`,
  ),
  requestsOf: sql("requests_of", `SELECT * FROM requests WHERE session_key = $1 ORDER BY seq`),
  unfinished: sql("unfinished", `SELECT * FROM requests WHERE status IN ('pending', 'running') ORDER BY seq`),
  unfinishedOf: sql("unfinished_of", `SELECT * FROM requests WHERE session_key = $1 AND status IN ('pending', 'running') ORDER BY seq`),
  runningFor: sql("running_for", `SELECT * FROM requests WHERE session_key = $1 AND status = 'running' ORDER BY seq`),
  idempotency: sql("idempotency", `SELECT * FROM idempotency_keys WHERE user_id = $1 AND key = $2`),
  insertIdempotency: sql(
    "insert_idempotency",
    `INSERT INTO idempotency_keys (user_id, key, request_id, session_key, fingerprint, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (user_id, key) DO NOTHING`,
  ),
  deleteIdempotency: sql("delete_idempotency", `DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2`),
  requestByIdempotency: sql("request_by_idempotency", `SELECT r.* FROM idempotency_keys k JOIN requests r ON r.id = k.request_id WHERE k.user_id = $1 AND k.key = $2`),
  saveIdempotent: sql("save_idempotent", `UPDATE idempotency_keys SET response = $1 WHERE user_id = $2 AND key = $3`),

  // ── tasks, frames, the context log, usage ───────────────────────────────────────────────────────────────
  taskById: sql("task_by_id", `SELECT * FROM tasks WHERE id = $1`),
  tasksOf: sql("tasks_of", `SELECT * FROM tasks WHERE session_key = $1 ORDER BY created_at, seq`),
  activeTask: sql("active_task", `SELECT * FROM tasks WHERE session_key = $1 AND status IN ${ACTIVE} ORDER BY created_at DESC, seq DESC LIMIT 1`),
  // The active task's owner, else the sender of the oldest unfinished message (Store.conversationOwner).
  conversationOwner: sql("conversation_owner", `SELECT ${ownerOf("$1")} AS owner`),
  // Serialises the requests that decide a conversation's owner (NewRequest.owner); held until the transaction ends.
  // The two-key form: its key space does not overlap the one-key locks (the migration lock).
  lockConversation: sql("lock_conversation", `SELECT pg_advisory_xact_lock(${CONVERSATION_LOCK}, hashtext($1))`),
  activeTaskOf: sql(
    "active_task_of",
    `SELECT * FROM tasks WHERE owner_id = $1 AND status IN ${ACTIVE}
     AND (session_key = $2 OR starts_with(session_key, $2 || ':'))
     ORDER BY updated_at DESC, seq DESC LIMIT 1`,
  ),
  frames: sql("frames", `SELECT frame_id, data FROM frames WHERE session_key = $1 ORDER BY position`),
  history: sql("history", `SELECT * FROM context_log WHERE agent_session_id = $1 AND session_key = $2 AND type IN ('message', 'tool_result', 'compaction') ORDER BY seq`),
  sessionLog: sql("session_log", `SELECT * FROM context_log WHERE session_key = $1 ORDER BY seq`),
  openAgentSessions: sql(
    "open_agent_sessions",
    `SELECT s.seq, s.agent_session_id, s.payload FROM context_log s
     WHERE s.session_key = $1 AND s.type = 'agent_session' AND NOT EXISTS (
       SELECT 1 FROM context_log c WHERE c.session_key = s.session_key AND c.type = 'agent_session_complete'
       AND c.agent_session_id = s.agent_session_id)
     ORDER BY s.seq`,
  ),
  sessionUsage: sql("session_usage", `SELECT * FROM sessions WHERE key = $1`),
  taskUsage: sql(
    "task_usage",
    `SELECT COALESCE(SUM(input_tokens), 0)::bigint AS i, COALESCE(SUM(output_tokens), 0)::bigint AS o,
     COALESCE(SUM(cache_read_tokens), 0)::bigint AS r, COALESCE(SUM(cache_write_tokens), 0)::bigint AS w,
     COALESCE(SUM(cost_nano_usd), 0)::bigint AS c
     FROM requests WHERE task_id = $1`,
  ),

  // ── the outbox, deliveries, indicators ──────────────────────────────────────────────────────────────────
  pendingAll: sql("pending_all", `SELECT * FROM outbox WHERE ${PENDING_OUTBOX} ORDER BY seq`),
  pendingFor: sql("pending_for", `SELECT * FROM outbox WHERE ${PENDING_OUTBOX} AND session_key = $1 ORDER BY seq`),
  outboundFor: sql("outbound_for", `SELECT * FROM outbox WHERE request_id = $1 ORDER BY seq`),
  // SKIP LOCKED: a row another replica is claiming right now is passed over, never handed out twice.
  // With the reply: its chunks already sent, and whether another reply was pending (the statement's snapshot is
  // the one before its own update, so the claimed row itself is still pending in it).
  claimNext: sql(
    "claim_next",
    `WITH c AS (
       UPDATE outbox SET delivered_at = $2 WHERE id = (
         SELECT id FROM outbox WHERE session_key = $1 AND ${PENDING_OUTBOX} ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED
       ) RETURNING *
     )
     SELECT c.*, ARRAY(SELECT d.chunk FROM deliveries d WHERE d.outbound_id = c.id ORDER BY d.chunk) AS sent_chunks,
       EXISTS (SELECT 1 FROM outbox o WHERE o.session_key = $1 AND o.delivered_at IS NULL AND o.failed_at IS NULL AND o.id <> c.id) AS more_pending
     FROM c`,
  ),
  markDelivered: sql("mark_delivered", `UPDATE outbox SET delivered_at = $1 WHERE id = $2`),
  markUndelivered: sql("mark_undelivered", `UPDATE outbox SET delivered_at = NULL WHERE id = $1`),
  markUndeliverable: sql("mark_undeliverable", `UPDATE outbox SET failed_at = $1, failure = $2, delivered_at = NULL WHERE id = $3 AND failed_at IS NULL`),
  undeliverable: sql("undeliverable", `SELECT * FROM outbox WHERE session_key = $1 AND failed_at IS NOT NULL ORDER BY seq`),
  chunks: sql("chunks", `SELECT chunk FROM deliveries WHERE outbound_id = $1 ORDER BY chunk`),
  recordChunk: sql("record_chunk", `INSERT INTO deliveries (outbound_id, chunk, platform_message_id, sent_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`),
  saveIndicator: sql(
    "save_indicator",
    `INSERT INTO indicators (session_key, data, created_at) VALUES ($1, $2, $3)
     ON CONFLICT (session_key) DO UPDATE SET data = EXCLUDED.data`,
  ),
  deleteIndicator: sql("delete_indicator", `DELETE FROM indicators WHERE session_key = $1`),
  indicators: sql("indicators", `SELECT * FROM indicators WHERE starts_with(session_key, $1 || ':') ORDER BY created_at, seq`),

  // ── approvals and quarantine ────────────────────────────────────────────────────────────────────────────
  approvalById: sql("approval_by_id", `SELECT * FROM approvals WHERE id = $1`),
  approvalByCall: sql(
    "approval_by_call",
    `SELECT * FROM approvals WHERE session_key = $1 AND COALESCE(task_id, '') = COALESCE($2::text, '')
     AND tool_use_id = $3 AND tool_name = $4 AND input_hash = $5`,
  ),
  pendingApprovals: sql("pending_approvals", `SELECT * FROM approvals WHERE session_key = $1 AND status = 'pending' ORDER BY requested_at, id`),
  decideApproval: sql("decide_approval", `UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3 WHERE id = $4 AND status = 'pending'`),
  dueApprovals: sql("due_approvals", `SELECT * FROM approvals WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at`),
  // Takes the approval out of play (no sweep or click finds it, its call may be asked again) and records it.
  quarantineApproval: sql(
    "quarantine_approval",
    `WITH out_of_play AS (UPDATE approvals SET status = 'quarantined', input_hash = 'quarantined:' || id WHERE id = $1)
     INSERT INTO quarantine (kind, row_id, session_key, reason, created_at) VALUES ('approval', $1, $2, $3, $4)
     ON CONFLICT (kind, row_id) DO NOTHING RETURNING created_at`,
  ),
  insertQuarantine: sql(
    "insert_quarantine",
    `INSERT INTO quarantine (kind, row_id, session_key, reason, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (kind, row_id) DO NOTHING RETURNING created_at`,
  ),
  quarantined: sql("quarantined", `SELECT * FROM quarantine ORDER BY created_at DESC, seq DESC`),

  // ── leases ──────────────────────────────────────────────────────────────────────────────────────────────
  // One atomic statement: a new key starts at token 1; the same holder only extends (token kept); another
  // holder gets it only when it is expired or released (token + 1); otherwise no row comes back.
  acquireLease: sql(
    "acquire_lease",
    `INSERT INTO leases AS l (key, holder, token, expires_at) VALUES ($1, $2, 1, $4::bigint)
     ON CONFLICT (key) DO UPDATE SET
       token = CASE WHEN l.holder = EXCLUDED.holder THEN l.token ELSE l.token + 1 END,
       holder = EXCLUDED.holder,
       expires_at = EXCLUDED.expires_at
     WHERE l.holder = EXCLUDED.holder OR l.expires_at <= $3::bigint
     RETURNING *`,
  ),
  renewLease: sql("renew_lease", `UPDATE leases SET expires_at = $4 WHERE key = $1 AND holder = $2 AND token = $3`),
  releaseLease: sql("release_lease", `UPDATE leases SET expires_at = 0 WHERE key = $1 AND holder = $2 AND token = $3`),
  lease: sql("lease", `SELECT * FROM leases WHERE key = $1`),
  orphaned: sql(
    "orphaned",
    `SELECT w.key FROM (
       SELECT session_key AS key FROM requests WHERE status IN ('pending', 'running')
       UNION
       SELECT session_key FROM outbox WHERE ${PENDING_OUTBOX}
     ) w
     WHERE NOT starts_with(w.key, '@')
     AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.key = w.key AND l.expires_at > $1)
     ORDER BY w.key`,
  ),
};
