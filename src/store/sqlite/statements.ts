import type Database from "better-sqlite3";
import { prepareFileStatements } from "./files.js";

const ACTIVE = `('running', 'waiting_user', 'waiting_approval')`;

/**
 * The operator's session summaries (operations.ts) of the sessions `where` picks, the most recently active first:
 * the newest activity is found per session first (an index lookup each), the rest only for the `limit` picked.
 */
const sessionSummaries = (where: string, limit: string) => `
  WITH picked AS (
    SELECT s.key, s.owner_id, s.cost_nano_usd,
      s.input_tokens + s.output_tokens + s.cache_read_tokens + s.cache_write_tokens AS tokens,
      COALESCE((SELECT MAX(r.updated_at) FROM requests r WHERE r.session_key = s.key), s.created_at) AS last_activity
    FROM sessions s ${where}
    ORDER BY last_activity DESC, s.key LIMIT ${limit}
  )
  SELECT p.key, p.cost_nano_usd, p.tokens, p.last_activity,
    COALESCE(p.owner_id,
      (SELECT t.owner_id FROM tasks t WHERE t.session_key = p.key ORDER BY t.created_at DESC, t.rowid DESC LIMIT 1)) AS owner_id,
    (SELECT json_group_array(CASE WHEN json_valid(f.data) THEN json_extract(f.data, '$.agentName') END ORDER BY f.position)
      FROM frames f WHERE f.session_key = p.key) AS stack,
    a.id AS task_id, a.status AS task_status,
    (SELECT count(*) FROM approvals ap WHERE ap.session_key = p.key AND ap.status = 'pending') AS pending_approvals
  FROM picked p
  LEFT JOIN tasks a ON a.id = (
    SELECT t.id FROM tasks t WHERE t.session_key = p.key AND t.status IN ${ACTIVE} ORDER BY t.created_at DESC, t.rowid DESC LIMIT 1)
  ORDER BY p.last_activity DESC, p.key`;

/** Every statement the SQLite store runs, prepared once per connection. */
export function prepareStatements(db: Database.Database) {
  return {
    insertLog: db.prepare(
      `INSERT INTO context_log (session_key, task_id, request_id, frame_id, agent_session_id, type, payload, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // On top of the session's stack; nothing when the frame id is already on it (no key on frame_id: migration 26).
    pushFrame: db.prepare(
      `INSERT INTO frames (frame_id, session_key, position, data)
       SELECT @frame, @key, (SELECT COALESCE(MAX(position), -1) + 1 FROM frames WHERE session_key = @key), @data
       WHERE NOT EXISTS (SELECT 1 FROM frames WHERE session_key = @key AND frame_id = @frame)`,
    ),
    updateFrame: db.prepare(`UPDATE frames SET data = ? WHERE session_key = ? AND frame_id = ?`),
    deleteFrame: db.prepare(`DELETE FROM frames WHERE session_key = ? AND frame_id = ?`),
    insertTask: db.prepare(
      `INSERT INTO tasks (id, session_key, owner_id, status, request_id, expires_at, metadata, created_at, updated_at)
       VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?)`,
    ),
    updateTask: db.prepare(
      `UPDATE tasks SET status = ?, result = COALESCE(?, result), error = COALESCE(?, error),
       structured_output = COALESCE(?, structured_output), updated_at = ? WHERE id = ?`,
    ),
    updateRequest: db.prepare(
      `UPDATE requests SET status = ?, task_id = COALESCE(?, task_id), error = COALESCE(?, error), error_code = COALESCE(?, error_code), updated_at = ? WHERE id = ?`,
    ),
    addUsage: db.prepare(
      `UPDATE requests SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
       cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
       cost_nano_usd = cost_nano_usd + ? WHERE id = ?`,
    ),
    addSessionUsage: db.prepare(
      `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
       cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
       tokens_since_reset = tokens_since_reset + ?,
       cost_nano_usd = cost_nano_usd + ?, cost_since_reset_nano_usd = cost_since_reset_nano_usd + ? WHERE key = ?`,
    ),
    sessionUsage: db.prepare(`SELECT * FROM sessions WHERE key = ?`),
    taskUsage: db.prepare(
      `SELECT COALESCE(SUM(input_tokens), 0) AS i, COALESCE(SUM(output_tokens), 0) AS o,
       COALESCE(SUM(cache_read_tokens), 0) AS r, COALESCE(SUM(cache_write_tokens), 0) AS w,
       COALESCE(SUM(cost_nano_usd), 0) AS c FROM requests
       WHERE session_key = (SELECT session_key FROM tasks WHERE id = @task) AND task_id = @task`,
    ),
    insertOutbound: db.prepare(
      `INSERT INTO outbox (id, session_key, request_id, task_id, agent, depth, text, kind, approval_id, file_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // A call asked for again in its session and task keeps its first approval (approvals_by_call decides).
    insertApproval: db.prepare(
      `INSERT INTO approvals (id, session_key, task_id, request_id, frame_id, tool_use_id, tool_name, input, input_hash, agent, owner_id, status, requested_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT DO NOTHING`,
    ),
    approvalById: db.prepare(`SELECT * FROM approvals WHERE id = ?`),
    approvalByCall: db.prepare(
      `SELECT * FROM approvals WHERE session_key = ? AND COALESCE(task_id, '') = COALESCE(?, '')
       AND tool_use_id = ? AND tool_name = ? AND input_hash = ?`,
    ),
    quarantineApproval: db.prepare(`UPDATE approvals SET status = 'quarantined', input_hash = 'quarantined:' || id WHERE id = ?`),
    insertQuarantine: db.prepare(`INSERT OR IGNORE INTO quarantine (kind, row_id, session_key, reason, created_at) VALUES (?, ?, ?, ?, ?)`),
    quarantined: db.prepare(`SELECT * FROM quarantine ORDER BY created_at DESC, rowid DESC`),
    frameRows: db.prepare(`SELECT frame_id, data FROM frames WHERE session_key = ?`),
    deleteFrames: db.prepare(`DELETE FROM frames WHERE session_key = ?`),
    claimSession: db.prepare(`UPDATE sessions SET owner_id = ? WHERE key = ? AND owner_id IS NULL`),
    idempotency: db.prepare(`SELECT * FROM idempotency_keys WHERE user_id = ? AND key = ?`),
    insertIdempotency: db.prepare(`INSERT INTO idempotency_keys (user_id, key, request_id, session_key, fingerprint, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
    saveIdempotent: db.prepare(`UPDATE idempotency_keys SET response = ? WHERE user_id = ? AND key = ?`),
    outboundFor: db.prepare(`SELECT * FROM outbox WHERE request_id = ? ORDER BY seq`),
    pendingApprovals: db.prepare(`SELECT * FROM approvals WHERE session_key = ? AND status = 'pending' ORDER BY requested_at, id`),
    decideApproval: db.prepare(`UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'`),
    dueApprovals: db.prepare(`SELECT * FROM approvals WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at`),
    setMainSession: db.prepare(`UPDATE sessions SET main_agent_session_id = ?, tokens_since_reset = 0, cost_since_reset_nano_usd = 0, updated_at = ? WHERE key = ?`),
    getSession: db.prepare(`SELECT * FROM sessions WHERE key = ?`),
    insertSession: db.prepare(`INSERT INTO sessions (key, main_agent_session_id, created_at, updated_at) VALUES (?, ?, ?, ?)`),
    insertRequest: db.prepare(
      `INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, task_expires_at, task_metadata, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?) ON CONFLICT (session_key, external_id) DO NOTHING`,
    ),
    requestById: db.prepare(`SELECT * FROM requests WHERE id = ?`),
    requestByExternal: db.prepare(`SELECT * FROM requests WHERE session_key = ? AND external_id = ?`),
    requestsOf: db.prepare(`SELECT * FROM requests WHERE session_key = ? ORDER BY seq`),
    unfinished: db.prepare(`SELECT * FROM requests INDEXED BY requests_unfinished WHERE status IN ('pending', 'running') ORDER BY seq`),
    // Named: SQLite could otherwise walk every request the session ever had through its (session_key, external_id) key.
    unfinishedOf: db.prepare(`SELECT * FROM requests INDEXED BY requests_unfinished WHERE session_key = ? AND status IN ('pending', 'running') ORDER BY seq`),
    taskById: db.prepare(`SELECT * FROM tasks WHERE id = ?`),
    tasksOf: db.prepare(`SELECT * FROM tasks WHERE session_key = ? ORDER BY created_at, rowid`),
    activeTask: db.prepare(
      `SELECT * FROM tasks WHERE session_key = ? AND status IN ('running', 'waiting_user', 'waiting_approval')
       ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    ),
    // The active task's owner, else the sender of the oldest unfinished message (Store.conversationOwner).
    conversationOwner: db.prepare(
      `SELECT COALESCE(
         (SELECT owner_id FROM tasks WHERE session_key = ? AND status IN ('running', 'waiting_user', 'waiting_approval')
          ORDER BY created_at DESC, rowid DESC LIMIT 1),
         (SELECT user_id FROM requests INDEXED BY requests_unfinished WHERE session_key = ? AND kind = 'message' AND status IN ('pending', 'running')
          ORDER BY seq LIMIT 1)) AS owner`,
    ),
    activeTaskOf: db.prepare(
      `SELECT * FROM tasks WHERE owner_id = ? AND status IN ('running', 'waiting_user', 'waiting_approval')
       AND (session_key = ? OR substr(session_key, 1, length(?) + 1) = ? || ':')
       ORDER BY updated_at DESC, rowid DESC LIMIT 1`,
    ),
    frames: db.prepare(`SELECT frame_id, data FROM frames WHERE session_key = ? ORDER BY position`),
    history: db.prepare(`SELECT * FROM context_log WHERE session_key = ? AND agent_session_id = ? AND type IN ('message', 'tool_result', 'compaction') ORDER BY seq`),
    sessionLog: db.prepare(`SELECT * FROM context_log WHERE session_key = ? ORDER BY seq`),
    openAgentSessions: db.prepare(
      `SELECT s.agent_session_id AS id, json_extract(s.payload, '$.agent_name') AS name FROM context_log s
       WHERE s.session_key = ? AND s.type = 'agent_session' AND NOT EXISTS (
         SELECT 1 FROM context_log c WHERE c.session_key = s.session_key AND c.type = 'agent_session_complete'
         AND c.agent_session_id = s.agent_session_id)
       ORDER BY s.seq`,
    ),
    pendingAll: db.prepare(`SELECT * FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL ORDER BY seq`),
    pendingFor: db.prepare(`SELECT * FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL AND session_key = ? ORDER BY seq`),
    markUndeliverable: db.prepare(`UPDATE outbox SET failed_at = ?, failure = ?, delivered_at = NULL WHERE id = ? AND failed_at IS NULL`),
    undeliverable: db.prepare(`SELECT * FROM outbox WHERE session_key = ? AND failed_at IS NOT NULL ORDER BY seq`),
    saveIndicator: db.prepare(`INSERT INTO indicators (session_key, data, created_at) VALUES (?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET data = excluded.data`),
    deleteIndicator: db.prepare(`DELETE FROM indicators WHERE session_key = ?`),
    indicators: db.prepare(`SELECT * FROM indicators WHERE substr(session_key, 1, length(?) + 1) = ? || ':' ORDER BY created_at`),
    nextPending: db.prepare(`SELECT seq FROM outbox WHERE session_key = ? AND delivered_at IS NULL AND failed_at IS NULL ORDER BY seq LIMIT 1`),
    claim: db.prepare(`UPDATE outbox SET delivered_at = ? WHERE seq = ? AND delivered_at IS NULL AND failed_at IS NULL RETURNING *`),
    lease: db.prepare(`SELECT * FROM leases WHERE key = ?`),
    // Granted when free, expired or already ours; a different holder than the last one takes the next token.
    acquireLease: db.prepare(
      `INSERT INTO leases (key, holder, token, expires_at) VALUES (@key, @holder, 1, @expires)
       ON CONFLICT (key) DO UPDATE SET
         token = CASE WHEN leases.holder = excluded.holder THEN leases.token ELSE leases.token + 1 END,
         holder = excluded.holder, expires_at = excluded.expires_at
       WHERE leases.holder = excluded.holder OR leases.expires_at <= @now
       RETURNING *`,
    ),
    renewLease: db.prepare(`UPDATE leases SET expires_at = ? WHERE key = ? AND holder = ? AND token = ?`),
    releaseLease: db.prepare(`UPDATE leases SET expires_at = 0 WHERE key = ? AND holder = ? AND token = ?`),
    expireLeases: db.prepare(`UPDATE leases SET expires_at = 0`),
    // Sessions with work (the store keeps those whose lease is live out: in memory or in the leases table).
    withWork: db.prepare(
      `SELECT session_key AS key FROM requests INDEXED BY requests_unfinished WHERE status IN ('pending', 'running') AND substr(session_key, 1, 1) <> '@'
       UNION SELECT session_key FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL AND substr(session_key, 1, 1) <> '@'
       ORDER BY key`,
    ),
    markDelivered: db.prepare(`UPDATE outbox SET delivered_at = ? WHERE id = ?`),
    markUndelivered: db.prepare(`UPDATE outbox SET delivered_at = NULL WHERE id = ?`),
    runningFor: db.prepare(
      `SELECT * FROM requests INDEXED BY requests_unfinished WHERE session_key = ? AND status IN ('pending', 'running') AND status = 'running' ORDER BY seq`,
    ),
    chunks: db.prepare(`SELECT chunk FROM deliveries WHERE outbound_id = ? ORDER BY chunk`),
    recordChunk: db.prepare(`INSERT OR IGNORE INTO deliveries (outbound_id, chunk, platform_message_id, sent_at) VALUES (?, ?, ?, ?)`),
    // ── files (files.ts) ──
    files: prepareFileStatements(db),
    // ── long-term memory (memories.ts) ──
    memoriesOf: db.prepare(`SELECT * FROM memories WHERE user_id = ? ORDER BY created_at, seq`),
    recentMemories: db.prepare(`SELECT * FROM memories WHERE user_id = ? ORDER BY updated_at DESC, seq DESC LIMIT ?`),
    // bm25 is lower for better matches (negated into a score); the user filter applies to every match.
    searchMemories: db.prepare(
      `SELECT m.*, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
       WHERE memories_fts MATCH ? AND m.user_id = ?
       ORDER BY bm25(memories_fts), m.updated_at DESC, m.seq DESC LIMIT ?`,
    ),
    // A known id is updated, never taken over: an id of another user's memory leaves that memory untouched.
    upsertMemory: db.prepare(
      `INSERT INTO memories (id, user_id, text, kind, task_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET text = excluded.text, kind = excluded.kind,
         task_id = COALESCE(excluded.task_id, memories.task_id), updated_at = excluded.updated_at
       WHERE memories.user_id = excluded.user_id`,
    ),
    deleteMemoriesById: db.prepare(`DELETE FROM memories WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`),
    deleteAllMemories: db.prepare(`DELETE FROM memories WHERE user_id = ?`),
    insertMemoryJob: db.prepare(
      `INSERT INTO memory_jobs (task_id, user_id, session_key, status, attempts, next_at, created_at, updated_at)
       VALUES (?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT (task_id) DO NOTHING`,
    ),
    dueMemoryJob: db.prepare(
      `SELECT * FROM memory_jobs WHERE (status = 'pending' AND next_at <= @now) OR (status = 'running' AND claimed_until < @now)
       ORDER BY created_at, rowid LIMIT 1`,
    ),
    failMemoryJob: db.prepare(`UPDATE memory_jobs SET status = 'failed', holder = NULL, claimed_until = NULL, error = ?, updated_at = ? WHERE task_id = ?`),
    claimMemoryJob: db.prepare(
      `UPDATE memory_jobs SET status = 'running', holder = ?, claimed_until = ?, attempts = attempts + 1, updated_at = ?
       WHERE task_id = ? RETURNING *`,
    ),
    expireMemoryClaims: db.prepare(`UPDATE memory_jobs SET claimed_until = 0 WHERE status = 'running'`),
    heldMemoryJob: db.prepare(`SELECT * FROM memory_jobs WHERE task_id = ? AND status = 'running' AND holder = ?`),
    finishMemoryJob: db.prepare(`UPDATE memory_jobs SET status = 'done', holder = NULL, claimed_until = NULL, updated_at = ? WHERE task_id = ?`),
    retryMemoryJob: db.prepare(
      `UPDATE memory_jobs SET status = 'pending', next_at = ?, error = ?, holder = NULL, claimed_until = NULL, updated_at = ?
       WHERE task_id = ? AND status = 'running' AND holder = ?`,
    ),
    pendingMemoryJobs: db.prepare(`SELECT * FROM memory_jobs WHERE status IN ('pending', 'running') ORDER BY created_at, rowid`),
    // ── operator queries (operations.ts) ──
    recentSessions: db.prepare(sessionSummaries("", "@limit")),
    sessionSummary: db.prepare(sessionSummaries("WHERE s.key = @key", "1")),
    allPendingApprovals: db.prepare(`SELECT * FROM approvals WHERE status = 'pending' ORDER BY requested_at, id`),
    stuckRequests: db.prepare(
      `SELECT * FROM requests INDEXED BY requests_unfinished WHERE status IN ('pending', 'running') AND updated_at < ? ORDER BY updated_at, seq LIMIT ?`,
    ),
    stuckOutbound: db.prepare(`SELECT * FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL AND created_at < ? ORDER BY created_at, seq LIMIT ?`),
    stuckApprovals: db.prepare(`SELECT * FROM approvals WHERE status = 'pending' AND requested_at < ? ORDER BY requested_at, id LIMIT ?`),
    // Each part reads an index (requests_failed, tasks_by_session, outbox_failed); ties go to the newest row.
    recentErrors: db.prepare(
      `SELECT at, source, id, error FROM (
         SELECT updated_at AS at, 'request' AS source, id, error, seq AS n FROM requests INDEXED BY requests_failed WHERE session_key = @key AND error IS NOT NULL
         UNION ALL
         SELECT updated_at, 'task', id, COALESCE(error, 'failed'), rowid FROM tasks WHERE session_key = @key AND status = 'failed'
         UNION ALL
         SELECT failed_at, 'delivery', id, COALESCE(failure, 'undeliverable'), seq FROM outbox WHERE session_key = @key AND failed_at IS NOT NULL
       ) ORDER BY at DESC, source, n DESC LIMIT @limit`,
    ),
    // Every count reads a partial index (the IN term lets SQLite see that requests_unfinished covers 'pending'; INDEXED BY
    // keeps it from scanning the table in rowid order instead).
    operationalCounts: db.prepare(
      `SELECT
         (SELECT count(DISTINCT session_key) FROM frames) AS active_stacks,
         (SELECT count(*) FROM requests INDEXED BY requests_unfinished WHERE status IN ('pending', 'running') AND status = 'pending') AS queued_messages,
         (SELECT count(*) FROM approvals WHERE status = 'pending') AS pending_approvals,
         (SELECT count(*) FROM outbox WHERE failed_at IS NOT NULL) AS undeliverable,
         (SELECT count(*) FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL) AS outbox_backlog`,
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
