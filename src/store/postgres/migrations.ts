import pg from "pg";
import { checkUrl, clientConfig, connectionError, describeTarget, scrubPassword } from "./connection.js";

// Each entry moves the schema one version up; schema_migrations records which versions a database has. Version
// 1 is the whole schema as the SQLite store has it at its version 7, plus leases. New versions are appended,
// never edited. Stored JSON stays TEXT (not jsonb) so a malformed row can exist, be read, and be quarantined
// like in SQLite. Every step runs as an ordinary role that owns its database: no extensions, no superuser.
const MIGRATIONS: string[] = [
  `
  CREATE TABLE sessions (
    key TEXT PRIMARY KEY,
    owner_id TEXT,
    main_agent_session_id TEXT NOT NULL,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    tokens_since_reset BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE TABLE tasks (
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    status TEXT NOT NULL,
    request_id TEXT,
    result TEXT,
    error TEXT,
    structured_output TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX tasks_by_session ON tasks (session_key, status);
  CREATE INDEX tasks_active_by_owner ON tasks (owner_id) WHERE status IN ('running', 'waiting_user', 'waiting_approval');
  CREATE TABLE requests (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    external_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,
    task_id TEXT,
    error TEXT,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (session_key, external_id)
  );
  CREATE INDEX requests_by_session ON requests (session_key, seq);
  CREATE INDEX requests_unfinished ON requests (seq) WHERE status IN ('pending', 'running');
  CREATE INDEX requests_by_task ON requests (task_id);
  CREATE TABLE frames (
    frame_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (session_key, position)
  );
  CREATE TABLE context_log (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_key TEXT NOT NULL,
    task_id TEXT,
    request_id TEXT,
    frame_id TEXT,
    agent_session_id TEXT,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX log_by_session ON context_log (session_key, seq);
  CREATE INDEX log_by_agent_session ON context_log (agent_session_id, seq);
  CREATE TABLE outbox (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    request_id TEXT,
    task_id TEXT,
    approval_id TEXT,
    agent TEXT NOT NULL,
    depth INTEGER NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    delivered_at BIGINT,
    failed_at BIGINT,
    failure TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX outbox_pending ON outbox (session_key, seq) WHERE delivered_at IS NULL AND failed_at IS NULL;
  CREATE INDEX outbox_by_request ON outbox (request_id, seq);
  CREATE INDEX outbox_failed ON outbox (session_key, seq) WHERE failed_at IS NOT NULL;
  CREATE TABLE deliveries (
    outbound_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    platform_message_id TEXT NOT NULL,
    sent_at BIGINT NOT NULL,
    PRIMARY KEY (outbound_id, chunk)
  );
  CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    task_id TEXT,
    frame_id TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    input TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    agent TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    status TEXT NOT NULL,
    requested_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    decided_by TEXT,
    decided_at BIGINT,
    UNIQUE (tool_use_id, tool_name, input_hash)
  );
  CREATE INDEX approvals_pending ON approvals (expires_at) WHERE status = 'pending';
  CREATE INDEX approvals_pending_by_session ON approvals (session_key, requested_at) WHERE status = 'pending';
  CREATE TABLE idempotency_keys (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    request_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, key)
  );
  CREATE TABLE quarantine (
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    kind TEXT NOT NULL,
    row_id TEXT NOT NULL,
    session_key TEXT,
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (kind, row_id)
  );
  CREATE TABLE indicators (
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    session_key TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  -- A lease row is never deleted: its token must only ever grow. A released lease has expires_at = 0.
  CREATE TABLE leases (
    key TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    token BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  `,
  // 2: long-term memory (SQLite version 9). The search vector is generated from the text with the 'simple'
  // configuration: no stemming and no stop words, so it works the same for any language (and finds what SQLite's
  // unicode61 finds). Punctuation becomes a space first, so that the parser sees words, not file paths, e-mail
  // addresses or host names ("Europe/Lisbon" is found by "Lisbon"); search queries get the same treatment.
  `
  CREATE TABLE memories (
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    text TEXT NOT NULL,
    kind TEXT,
    task_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    search TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, regexp_replace(text, '[[:punct:]]+', ' ', 'g'))) STORED
  );
  CREATE INDEX memories_by_user ON memories (user_id, created_at, seq);
  CREATE INDEX memories_by_task ON memories (task_id) WHERE task_id IS NOT NULL;
  CREATE INDEX memories_search ON memories USING GIN (search);
  CREATE TABLE memory_jobs (
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    task_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    holder TEXT,
    claimed_until BIGINT,
    next_at BIGINT NOT NULL,
    error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX memory_jobs_open ON memory_jobs (created_at, seq) WHERE status IN ('pending', 'running');
  CREATE INDEX memory_jobs_by_user ON memory_jobs (user_id);
  CREATE INDEX memory_jobs_by_session ON memory_jobs (session_key);
  `,
  // 3: what model calls cost (SQLite version 10): whole nano-USD, so sums stay exact, per request and per session
  // (all time, and since the last /reset). Indexes for the operator queries: a session's latest activity and its
  // failed requests (outbox_failed exists since 1). frame_agent_name reads a stored frame's agent name, NULL when
  // the frame is not valid JSON (IS JSON needs PostgreSQL 16), so one unreadable frame cannot fail the listing.
  `
  ALTER TABLE requests ADD COLUMN cost_nano_usd BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cost_nano_usd BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cost_since_reset_nano_usd BIGINT NOT NULL DEFAULT 0;
  CREATE INDEX requests_activity ON requests (session_key, updated_at);
  CREATE INDEX requests_failed ON requests (session_key, updated_at) WHERE error IS NOT NULL;
  CREATE FUNCTION frame_agent_name(data TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE AS $$
  BEGIN
    RETURN data::json ->> 'agentName';
  EXCEPTION WHEN others THEN
    RETURN NULL;
  END
  $$;
  `,
  // 4: a task's expiry and metadata, given by the request that starts it (SQLite version 12); an approval names the
  // request it paused (read back from the prompt's outbox row for older ones) and answers only the call of its own
  // session and task, so the UNIQUE that bound a call everywhere becomes an index that includes both.
  `
  ALTER TABLE tasks ADD COLUMN expires_at BIGINT;
  ALTER TABLE tasks ADD COLUMN metadata TEXT;
  ALTER TABLE requests ADD COLUMN task_expires_at BIGINT;
  ALTER TABLE requests ADD COLUMN task_metadata TEXT;
  ALTER TABLE approvals ADD COLUMN request_id TEXT;
  UPDATE approvals a SET request_id = (SELECT o.request_id FROM outbox o WHERE o.approval_id = a.id ORDER BY o.seq LIMIT 1);
  ALTER TABLE approvals DROP CONSTRAINT approvals_tool_use_id_tool_name_input_hash_key;
  CREATE UNIQUE INDEX approvals_by_call ON approvals (session_key, COALESCE(task_id, ''), tool_use_id, tool_name, input_hash);
  `,
  // 5: the change feed's contents. Any role that can connect may LISTEN and NOTIFY, so a notification names only
  // a row here, which only the owner (the application's role) can read or write; rows are read for a minute and
  // deleted after two. created_at is the database's clock, the one every replica reads it by. UNLOGGED: no WAL,
  // so a streamed delta costs no disk flush; after a crash the table is empty, which loses only what a lost
  // notification loses (the orphan poll catches up; deltas are previews).
  `
  CREATE UNLOGGED TABLE change_feed (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    change TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  );
  REVOKE ALL ON change_feed FROM PUBLIC;
  `,
  // 6: the sessions a user owns (SQLite version 13), counted before the HTTP API opens another and summed for their
  // stored bytes, without reading every session.
  `
  CREATE INDEX sessions_by_owner ON sessions (owner_id) WHERE owner_id IS NOT NULL;
  `,
  // 7: a session's unfinished requests (read before and after every turn) straight from the partial index, in
  // order, as SQLite has had since its version 11; version 1 indexed them by seq alone. src/store/schema.ts is the
  // one description both migration lists arrive at (test/store/schema/parity.test.ts).
  `
  DROP INDEX requests_unfinished;
  CREATE INDEX requests_unfinished ON requests (session_key, seq) WHERE status IN ('pending', 'running');
  `,
  // 8: scheduled jobs (the schedule tool, /schedules) and each user's time zone (/timezone). A job's row is its
  // conversation's (session_key): it moves with it; its owner's erasure deletes it wherever it is.
  `
  CREATE TABLE schedule_jobs (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    instruction TEXT NOT NULL,
    schedule TEXT NOT NULL,
    timezone TEXT NOT NULL,
    next_due BIGINT,
    status TEXT NOT NULL,
    last_due BIGINT,
    last_result TEXT,
    created_by_task TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX schedule_jobs_by_owner ON schedule_jobs(owner_id);
  CREATE INDEX schedule_jobs_by_session ON schedule_jobs(session_key);
  CREATE INDEX schedule_jobs_due ON schedule_jobs(next_due) WHERE status = 'active';
  CREATE TABLE user_timezones (
    user_id TEXT PRIMARY KEY,
    timezone TEXT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  `,
  // 9: the daily quotas' counters (USER_DAILY_MESSAGES, USER_DAILY_USD, CHAT_DAILY_USD): per user and per chat and
  // day, with the limits the user was already told about (SQLite version 17).
  `
  CREATE TABLE usage_daily (
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    day TEXT NOT NULL,
    messages BIGINT NOT NULL,
    cost_nano_usd BIGINT NOT NULL,
    told TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (scope, subject, day)
  );
  CREATE INDEX usage_daily_recent ON usage_daily (scope, updated_at);
  `,
  // 10: the files of each session's workspace (src/store/roles/workspaces.ts): a file's bytes base64 in content, a
  // symlink's target there; written only under the session's lease.
  `
  CREATE TABLE workspace_files (
    session_key TEXT NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    mode INTEGER NOT NULL,
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    content TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (session_key, path)
  );
  `,
  // 11: the files of a conversation (src/store/roles/files.ts): their bytes once per conversation and content.
  `
  CREATE TABLE file_blobs (
    session_key TEXT NOT NULL, sha256 TEXT NOT NULL, bytes BYTEA NOT NULL, size BIGINT NOT NULL, created_at BIGINT NOT NULL,
    PRIMARY KEY (session_key, sha256)
  );
  CREATE TABLE files (
    id TEXT PRIMARY KEY, public_id TEXT NOT NULL UNIQUE, session_key TEXT NOT NULL, request_id TEXT,
    owner_id TEXT NOT NULL, sha256 TEXT NOT NULL, name TEXT NOT NULL, mime TEXT NOT NULL, kind TEXT NOT NULL,
    size BIGINT NOT NULL, voice INTEGER NOT NULL, created_at BIGINT NOT NULL
  );
  CREATE INDEX files_by_request ON files (request_id);
  CREATE INDEX files_by_session ON files (session_key, created_at);
  `,
  // 12: the quotas' holds and their refusals per request (SQLite version 20).
  `
  CREATE TABLE usage_holds (
    id TEXT NOT NULL, scope TEXT NOT NULL, subject TEXT NOT NULL, day TEXT NOT NULL, cost_nano_usd BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (id, scope)
  );
  CREATE INDEX usage_holds_by_counter ON usage_holds (scope, subject, day);
  CREATE TABLE quota_refusals (
    request_id TEXT PRIMARY KEY, session_key TEXT NOT NULL, user_id TEXT NOT NULL, limit_name TEXT NOT NULL,
    resets_at BIGINT NOT NULL, created_at BIGINT NOT NULL
  );
  CREATE INDEX quota_refusals_by_session ON quota_refusals (session_key);
  `,
  // 13: a reply may carry a file an agent sent (send_file): the outbox delivers it with the provider's file upload.
  `
  ALTER TABLE outbox ADD COLUMN file_id TEXT;
  `,
  // 14: the retention (FILE_RETENTION_DAYS): when a file's bytes were deleted; the oldest contents found by index.
  `
  ALTER TABLE files ADD COLUMN expired_at BIGINT;
  CREATE INDEX file_blobs_by_age ON file_blobs (created_at);
  `,
  // 15: where in the traces a scheduled job was made (a W3C traceparent): each run's span links to it.
  `ALTER TABLE schedule_jobs ADD COLUMN traceparent TEXT;`,
  // 16: why a failed request failed, as a code (FailureCode): a waiter on another replica reads it instead of the
  // words the user was told. Requests failed before this version get the code of the gateway's own fixed words for
  // the server-side failures (the words of src/gateway/failures.ts at this version, so that a waiter still reads
  // them as failed, as it did by their words); any other old failure keeps no code and reads as finished, as it did.
  // Same as SQLite version 24.
  `
  ALTER TABLE requests ADD COLUMN error_code TEXT;
  UPDATE requests SET error_code = CASE error
    WHEN 'Sorry, the saved state of this chat is damaged, so I could not continue it. Send /reset to start over.' THEN 'corrupt'
    WHEN 'Sorry, something went wrong while handling that message. Please try again.' THEN 'internal'
    WHEN 'Sorry, I can''t store messages right now (the server''s storage is failing), so I could not process that. Please try again later.' THEN 'store_failing'
  END
  WHERE status = 'failed' AND error_code IS NULL;
  `,
  // 17: the step's fence as a function (PostgreSQL only): a step's statements go out pipelined as prepared
  // statements (statement-batch.ts), so the fence that aborts the step's transaction when the lease moved on is a
  // call with bound values, planned once per connection, instead of a DO block compiled on every step.
  `
  CREATE FUNCTION switchboard_fence(lease_key TEXT, expected BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
  DECLARE current_token BIGINT;
  BEGIN
    SELECT token INTO current_token FROM leases WHERE key = lease_key FOR UPDATE;
    IF current_token IS DISTINCT FROM expected THEN
      RAISE EXCEPTION 'fenced' USING ERRCODE = 'SBF01', DETAIL = coalesce(current_token::text, '');
    END IF;
  END
  $$;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Taken (per transaction) around the whole migration, so replicas starting together migrate exactly once. */
const MIGRATION_LOCK = "7310586118470193475"; // a fixed bigint for Switchboard, no meaning beyond that

/**
 * Brings the schema up to `target` (the newest by default; tests stop earlier to build old databases), in one
 * transaction holding an advisory lock. Refuses a database that is newer than this code. Returns the version.
 */
export async function migrate(client: pg.ClientBase, target = SCHEMA_VERSION): Promise<number> {
  await client.query("BEGIN");
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ v: number }>(`SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_migrations`);
    const current = rows[0]?.v ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `the database is at schema version ${current}, newer than this Switchboard (schema version ${SCHEMA_VERSION}); upgrade Switchboard or point DATABASE_URL at another database`,
      );
    }
    for (let version = current; version < target; version++) {
      await client.query(MIGRATIONS[version]!);
      await client.query(`INSERT INTO schema_migrations (version) VALUES ($1)`, [version + 1]);
    }
    await client.query("COMMIT");
    return Math.max(current, target);
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** `npm run migrate`: connects once, migrates, and returns the schema version the database is now at. */
export async function migrateDatabase(url: string): Promise<number> {
  checkUrl(url);
  const client = new pg.Client(clientConfig(url));
  client.on("error", () => undefined); // a failure surfaces through the awaited call below
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw connectionError(error, url);
  }
  try {
    return await migrate(client);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(scrubPassword(`cannot migrate the PostgreSQL database at ${describeTarget(url)}: ${message}`, url), { cause: error });
  } finally {
    await client.end().catch(() => undefined);
  }
}
