// The statements of the operator's queries (operations.ts), named like the rest (statements.ts). Each reads
// through an index: requests_activity and requests_failed (migration 3), the partial indexes of unfinished
// requests, pending approvals and the outbox, and frames by session.
import { sql } from "./statements.js";

const ACTIVE = `('running', 'waiting_user', 'waiting_approval')`;
const PENDING_OUTBOX = `delivered_at IS NULL AND failed_at IS NULL`;

/**
 * The session summaries of the sessions `where` picks, the most recently active first: the newest activity is
 * found per session first (an index lookup each), the rest only for the `limit` picked.
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
      (SELECT t.owner_id FROM tasks t WHERE t.session_key = p.key ORDER BY t.created_at DESC, t.seq DESC LIMIT 1)) AS owner_id,
    ARRAY(SELECT frame_agent_name(f.data) FROM frames f WHERE f.session_key = p.key ORDER BY f.position) AS stack,
    a.id AS task_id, a.status AS task_status,
    (SELECT count(*) FROM approvals ap WHERE ap.session_key = p.key AND ap.status = 'pending') AS pending_approvals
  FROM picked p
  LEFT JOIN LATERAL (
    SELECT t.id, t.status FROM tasks t WHERE t.session_key = p.key AND t.status IN ${ACTIVE}
    ORDER BY t.created_at DESC, t.seq DESC LIMIT 1
  ) a ON true
  ORDER BY p.last_activity DESC, p.key`;

export const O = {
  recentSessions: sql("recent_sessions", sessionSummaries("", "$1")),
  sessionSummary: sql("session_summary", sessionSummaries("WHERE s.key = $1", "1")),
  allPendingApprovals: sql("all_pending_approvals", `SELECT * FROM approvals WHERE status = 'pending' ORDER BY requested_at, id`),
  stuckRequests: sql("stuck_requests", `SELECT * FROM requests WHERE status IN ('pending', 'running') AND updated_at < $1 ORDER BY updated_at, seq LIMIT $2`),
  stuckOutbound: sql("stuck_outbound", `SELECT * FROM outbox WHERE ${PENDING_OUTBOX} AND created_at < $1 ORDER BY created_at, seq LIMIT $2`),
  stuckApprovals: sql("stuck_approvals", `SELECT * FROM approvals WHERE status = 'pending' AND requested_at < $1 ORDER BY requested_at, id LIMIT $2`),
  // Ties go to the newest row.
  recentErrors: sql(
    "recent_errors",
    `SELECT at, source, id, error FROM (
       SELECT updated_at AS at, 'request' AS source, id, error, seq AS n FROM requests WHERE session_key = $1 AND error IS NOT NULL
       UNION ALL
       SELECT updated_at, 'task', id, COALESCE(error, 'failed'), seq FROM tasks WHERE session_key = $1 AND status = 'failed'
       UNION ALL
       SELECT failed_at, 'delivery', id, COALESCE(failure, 'undeliverable'), seq FROM outbox WHERE session_key = $1 AND failed_at IS NOT NULL
     ) e ORDER BY at DESC, source, n DESC LIMIT $2`,
  ),
  operationalCounts: sql(
    "operational_counts",
    `SELECT
       (SELECT count(DISTINCT session_key) FROM frames) AS active_stacks,
       (SELECT count(*) FROM requests WHERE status = 'pending') AS queued_messages,
       (SELECT count(*) FROM approvals WHERE status = 'pending') AS pending_approvals,
       (SELECT count(*) FROM outbox WHERE failed_at IS NOT NULL) AS undeliverable,
       (SELECT count(*) FROM outbox WHERE ${PENDING_OUTBOX}) AS outbox_backlog`,
  ),
};
