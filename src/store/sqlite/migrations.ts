import type Database from "better-sqlite3";
import { inputHash } from "../input-hash.js";

// Each entry moves the schema one version up; PRAGMA user_version records where a database is. An entry is
// SQL, or a function for the steps SQL cannot say (hashing stored JSON).
const QUALIFIED = ["telegram", "slack", "http", "jwt", "console"];

const MIGRATIONS: Array<string | ((db: Database.Database) => void)> = [
  `
  CREATE TABLE sessions (
    key TEXT PRIMARY KEY,
    main_agent_session_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    status TEXT NOT NULL,
    request_id TEXT,
    result TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX tasks_by_session ON tasks(session_key, status);
  CREATE TABLE requests (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    external_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,
    task_id TEXT,
    error TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (session_key, external_id)
  );
  CREATE INDEX requests_unfinished ON requests(status) WHERE status IN ('pending', 'running');
  CREATE TABLE frames (
    frame_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (session_key, position)
  );
  CREATE TABLE context_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT NOT NULL,
    task_id TEXT,
    request_id TEXT,
    frame_id TEXT,
    agent_session_id TEXT,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX log_by_session ON context_log(session_key, seq);
  CREATE INDEX log_by_agent_session ON context_log(agent_session_id, seq);
  CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    request_id TEXT,
    task_id TEXT,
    agent TEXT NOT NULL,
    depth INTEGER NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    delivered_at INTEGER,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX outbox_pending ON outbox(session_key, seq) WHERE delivered_at IS NULL;
  `,
  // 2: the delivery journal per chunk, so a long reply cut off by a restart resumes at the next chunk.
  `
  CREATE TABLE deliveries (
    outbound_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    platform_message_id TEXT NOT NULL,
    sent_at INTEGER NOT NULL,
    PRIMARY KEY (outbound_id, chunk)
  );
  `,
  // 3: structured results reported back by children, exposed on the task.
  `
  ALTER TABLE tasks ADD COLUMN structured_output TEXT;
  `,
  // 4: prompt-cache usage per request, and running totals per session (all time, and since the last /reset).
  `
  ALTER TABLE requests ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE requests ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN tokens_since_reset INTEGER NOT NULL DEFAULT 0;
  `,
  // 5: human approval of tools. A decision moves 'pending' to one final state by compare-and-set.
  `
  CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    task_id TEXT,
    frame_id TEXT NOT NULL,
    tool_use_id TEXT NOT NULL UNIQUE,
    tool_name TEXT NOT NULL,
    input TEXT NOT NULL,
    agent TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    status TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decided_by TEXT,
    decided_at INTEGER
  );
  CREATE INDEX approvals_pending ON approvals(expires_at) WHERE status = 'pending';
  ALTER TABLE outbox ADD COLUMN approval_id TEXT;
  `,
  // 6: security. User ids carry their source; HTTP sessions have an owner from their first request; client
  // idempotency keys keep the response they got; an approval is bound to its tool and a hash of its input (a
  // reused tool_use id with another input needs a new one); rows that cannot be read are quarantined.
  (db) => {
    db.exec(`
      ALTER TABLE sessions ADD COLUMN owner_id TEXT;
      CREATE TABLE idempotency_keys (
        user_id TEXT NOT NULL,
        key TEXT NOT NULL,
        request_id TEXT NOT NULL,
        session_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        response TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, key)
      );
      CREATE TABLE quarantine (
        kind TEXT NOT NULL,
        row_id TEXT NOT NULL,
        session_key TEXT,
        reason TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (kind, row_id)
      );
      CREATE TABLE approvals_v6 (
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
        requested_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_by TEXT,
        decided_at INTEGER,
        UNIQUE (tool_use_id, tool_name, input_hash)
      );
    `);
    const insert = db.prepare(
      `INSERT INTO approvals_v6 SELECT id, session_key, task_id, frame_id, tool_use_id, tool_name, input, ?, agent, owner_id,
       status, requested_at, expires_at, decided_by, decided_at FROM approvals WHERE id = ?`,
    );
    for (const row of db.prepare(`SELECT id, input FROM approvals`).all() as Array<{ id: string; input: string }>) {
      let hash: string;
      try {
        hash = inputHash(JSON.parse(row.input));
      } catch {
        hash = "unreadable"; // quarantined when first read
      }
      insert.run(hash, row.id);
    }
    db.exec(`
      DROP TABLE approvals;
      ALTER TABLE approvals_v6 RENAME TO approvals;
      CREATE INDEX approvals_pending ON approvals(expires_at) WHERE status = 'pending';
      CREATE INDEX approvals_by_use ON approvals(tool_use_id);
    `);
    // Ids stored before this version were bare platform ids; the session key says where each came from.
    const qualify = (column: string) => `CASE
      WHEN ${column} IS NULL OR ${column} IN ('timeout', 'cancelled') OR ${QUALIFIED.map((p) => `${column} GLOB '${p}:*'`).join(" OR ")} THEN ${column}
      WHEN session_key GLOB 'slack:*' THEN 'slack:' || substr(session_key, 7, instr(substr(session_key, 7) || ':', ':') - 1) || ':' || ${column}
      ELSE substr(session_key, 1, instr(session_key, ':')) || ${column} END`;
    db.exec(`
      UPDATE tasks SET owner_id = ${qualify("owner_id")};
      UPDATE requests SET user_id = ${qualify("user_id")};
      UPDATE approvals SET owner_id = ${qualify("owner_id")}, decided_by = ${qualify("decided_by")};
      UPDATE sessions SET owner_id = (SELECT t.owner_id FROM tasks t WHERE t.session_key = sessions.key ORDER BY t.created_at, t.rowid LIMIT 1)
        WHERE key GLOB 'http:*';
    `);
  },
  // 7: delivery outcomes. A reply the platform refused for good is marked undeliverable (never re-queued);
  // indicators a provider showed (a reaction, a status) are remembered so a restart can take them back.
  `
  ALTER TABLE outbox ADD COLUMN failed_at INTEGER;
  ALTER TABLE outbox ADD COLUMN failure TEXT;
  DROP INDEX outbox_pending;
  CREATE INDEX outbox_pending ON outbox(session_key, seq) WHERE delivered_at IS NULL AND failed_at IS NULL;
  CREATE TABLE indicators (
    session_key TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  `,
  // 8: leases with fencing tokens (one process per SQLite file, but the same protocol as PostgreSQL). Rows are
  // never deleted, so a key's token only grows.
  `
  CREATE TABLE leases (
    key TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    token INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  // 9: long-term memory. Facts kept per user identity, searched with FTS5 over an external-content index kept in
  // step by triggers (seq is the stable rowid it needs; the text id is the caller's). unicode61 without stemming,
  // like PostgreSQL's 'simple': whole words in any language, and both backends find the same memories. The
  // extraction jobs queued when a task ends, claimed by one worker at a time.
  `
  CREATE TABLE memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    text TEXT NOT NULL,
    kind TEXT,
    task_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX memories_by_user ON memories(user_id, created_at, seq);
  CREATE INDEX memories_by_task ON memories(task_id) WHERE task_id IS NOT NULL;
  CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, content = 'memories', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
  END;
  CREATE TABLE memory_jobs (
    task_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    holder TEXT,
    claimed_until INTEGER,
    next_at INTEGER NOT NULL,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX memory_jobs_open ON memory_jobs(created_at) WHERE status IN ('pending', 'running');
  CREATE INDEX memory_jobs_by_user ON memory_jobs(user_id);
  CREATE INDEX memory_jobs_by_session ON memory_jobs(session_key);
  `,
  // 10: what model calls cost (in whole nano-USD, so sums stay exact), per request and per session (all time, and
  // since the last /reset); and the indexes the operator queries need (a session's latest activity, its failed
  // requests, undeliverable replies and pending approvals), so none scans a table that grows with every message.
  `
  ALTER TABLE requests ADD COLUMN cost_nano_usd INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cost_nano_usd INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cost_since_reset_nano_usd INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX requests_activity ON requests(session_key, updated_at);
  CREATE INDEX requests_failed ON requests(session_key, updated_at) WHERE error IS NOT NULL;
  CREATE INDEX outbox_failed ON outbox(session_key, failed_at) WHERE failed_at IS NOT NULL;
  CREATE INDEX approvals_pending_by_session ON approvals(session_key, requested_at) WHERE status = 'pending';
  `,
  // 11: a session's unfinished requests (read before and after every turn) straight from the partial index, in order,
  // instead of through every request the session ever had; the all-sessions queries read the same small index.
  `
  DROP INDEX requests_unfinished;
  CREATE INDEX requests_unfinished ON requests(session_key, seq) WHERE status IN ('pending', 'running');
  `,
  // 12: a task's expiry and metadata (given by the request that starts it, kept on that request until then); an
  // approval names the request it paused (read back from the prompt's outbox row for older ones), and answers only
  // the call of its own session and task: the table is rebuilt because the old UNIQUE bound a call everywhere.
  `
  ALTER TABLE tasks ADD COLUMN expires_at INTEGER;
  ALTER TABLE tasks ADD COLUMN metadata TEXT;
  ALTER TABLE requests ADD COLUMN task_expires_at INTEGER;
  ALTER TABLE requests ADD COLUMN task_metadata TEXT;
  CREATE TABLE approvals_v12 (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    task_id TEXT,
    request_id TEXT,
    frame_id TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    input TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    agent TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    status TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decided_by TEXT,
    decided_at INTEGER
  );
  INSERT INTO approvals_v12 (id, session_key, task_id, request_id, frame_id, tool_use_id, tool_name, input, input_hash, agent,
    owner_id, status, requested_at, expires_at, decided_by, decided_at)
  SELECT a.id, a.session_key, a.task_id, (SELECT o.request_id FROM outbox o WHERE o.approval_id = a.id ORDER BY o.seq LIMIT 1),
    a.frame_id, a.tool_use_id, a.tool_name, a.input, a.input_hash, a.agent, a.owner_id, a.status, a.requested_at, a.expires_at,
    a.decided_by, a.decided_at
  FROM approvals a;
  DROP TABLE approvals;
  ALTER TABLE approvals_v12 RENAME TO approvals;
  CREATE UNIQUE INDEX approvals_by_call ON approvals(session_key, COALESCE(task_id, ''), tool_use_id, tool_name, input_hash);
  CREATE INDEX approvals_pending ON approvals(expires_at) WHERE status = 'pending';
  CREATE INDEX approvals_pending_by_session ON approvals(session_key, requested_at) WHERE status = 'pending';
  `,
  // 13: the sessions a user owns, counted before the HTTP API opens another (HTTP_SESSIONS_PER_USER_MAX) and summed
  // for their stored bytes, without reading every session.
  `
  CREATE INDEX sessions_by_owner ON sessions(owner_id) WHERE owner_id IS NOT NULL;
  `,
  // 14: the indexes PostgreSQL had and SQLite lacked (src/store/schema.ts is the one description; the parity test
  // compares both live schemas with it): a request's replies, a task's requests, a session's requests in order, an
  // owner's active task, and a session's undeliverable replies in order (as they are listed) instead of by time.
  `
  CREATE INDEX requests_by_session ON requests(session_key, seq);
  CREATE INDEX requests_by_task ON requests(task_id);
  CREATE INDEX outbox_by_request ON outbox(request_id, seq);
  CREATE INDEX tasks_active_by_owner ON tasks(owner_id) WHERE status IN ('running', 'waiting_user', 'waiting_approval');
  DROP INDEX outbox_failed;
  CREATE INDEX outbox_failed ON outbox(session_key, seq) WHERE failed_at IS NOT NULL;
  `,
  // 15: two of 14's indexes cost every message a B-tree write (one more page in each commit's WAL) and bought SQLite
  // nothing: a session's requests in order come through the (session_key, external_id) key and a sort of that one
  // session's rows; a task's requests through its session (taskUsage). PostgreSQL keeps both (schema.ts,
  // DIALECT_ONLY). Measured in docs/engineering/performance.md ("What the store split cost").
  `
  DROP INDEX requests_by_session;
  DROP INDEX requests_by_task;
  `,
  // 16: scheduled jobs (the schedule tool, /schedules) and each user's time zone (/timezone). A job's row is its
  // conversation's (session_key): it moves with it; its owner's erasure deletes it wherever it is.
  `
  CREATE TABLE schedule_jobs (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    instruction TEXT NOT NULL,
    schedule TEXT NOT NULL,
    timezone TEXT NOT NULL,
    next_due INTEGER,
    status TEXT NOT NULL,
    last_due INTEGER,
    last_result TEXT,
    created_by_task TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX schedule_jobs_by_owner ON schedule_jobs(owner_id);
  CREATE INDEX schedule_jobs_by_session ON schedule_jobs(session_key);
  CREATE INDEX schedule_jobs_due ON schedule_jobs(next_due) WHERE status = 'active';
  CREATE TABLE user_timezones (
    user_id TEXT PRIMARY KEY,
    timezone TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
  // 17: the daily quotas' counters (USER_DAILY_MESSAGES, USER_DAILY_USD, CHAT_DAILY_USD): per user and per chat and
  // day, with the limits the user was already told about.
  `
  CREATE TABLE usage_daily (
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    day TEXT NOT NULL,
    messages INTEGER NOT NULL,
    cost_nano_usd INTEGER NOT NULL,
    told TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (scope, subject, day)
  );
  CREATE INDEX usage_daily_recent ON usage_daily(scope, updated_at);
  `,
  // 18: the files of each session's workspace (src/store/roles/workspaces.ts): a file's bytes base64 in content, a
  // symlink's target there; written only under the session's lease.
  `
  CREATE TABLE workspace_files (
    session_key TEXT NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    mode INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    content TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (session_key, path)
  );
  `,
  // 19: the files of a conversation (src/store/roles/files.ts): their bytes once per conversation and content.
  `
  CREATE TABLE file_blobs (
    session_key TEXT NOT NULL, sha256 TEXT NOT NULL, bytes BLOB NOT NULL, size INTEGER NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (session_key, sha256)
  );
  CREATE TABLE files (
    id TEXT NOT NULL PRIMARY KEY, public_id TEXT NOT NULL UNIQUE, session_key TEXT NOT NULL, request_id TEXT,
    owner_id TEXT NOT NULL, sha256 TEXT NOT NULL, name TEXT NOT NULL, mime TEXT NOT NULL, kind TEXT NOT NULL,
    size INTEGER NOT NULL, voice INTEGER NOT NULL, created_at INTEGER NOT NULL
  );
  CREATE INDEX files_by_request ON files(request_id);
  CREATE INDEX files_by_session ON files(session_key, created_at);
  `,
  // 20: the quotas' holds (a model call's estimated cost, counted against USER_DAILY_USD and CHAT_DAILY_USD while it
  // runs, until it is settled, released or expires) and their refusals per request (the HTTP API's 429 reads them).
  `
  CREATE TABLE usage_holds (
    id TEXT NOT NULL, scope TEXT NOT NULL, subject TEXT NOT NULL, day TEXT NOT NULL, cost_nano_usd INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (id, scope)
  );
  CREATE INDEX usage_holds_by_counter ON usage_holds(scope, subject, day);
  CREATE TABLE quota_refusals (
    request_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL, user_id TEXT NOT NULL, limit_name TEXT NOT NULL,
    resets_at INTEGER NOT NULL, created_at INTEGER NOT NULL
  );
  CREATE INDEX quota_refusals_by_session ON quota_refusals(session_key);
  `,
  // 21: a reply may carry a file an agent sent (send_file): the outbox delivers it with the provider's file upload.
  `
  ALTER TABLE outbox ADD COLUMN file_id TEXT;
  `,
  // 22: the retention (FILE_RETENTION_DAYS): when a file's bytes were deleted; the oldest contents found by index
  // (a scan of file_blobs would read every blob's overflow pages to reach created_at).
  `
  ALTER TABLE files ADD COLUMN expired_at INTEGER;
  CREATE INDEX file_blobs_by_age ON file_blobs(created_at);
  `,
  // 23: where in the traces a scheduled job was made (a W3C traceparent): each run's span links to it.
  `ALTER TABLE schedule_jobs ADD COLUMN traceparent TEXT;`,
  // 24: why a failed request failed, as a code (FailureCode): a waiter on another replica reads it instead of the
  // words the user was told. Requests failed before this version get the code of the gateway's own fixed words for
  // the server-side failures (the words of src/gateway/failures.ts at this version, so that a waiter still reads
  // them as failed, as it did by their words); any other old failure keeps no code and reads as finished, as it did.
  // Same as PostgreSQL version 16.
  `
  ALTER TABLE requests ADD COLUMN error_code TEXT;
  UPDATE requests SET error_code = CASE error
    WHEN 'Sorry, the saved state of this chat is damaged, so I could not continue it. Send /reset to start over.' THEN 'corrupt'
    WHEN 'Sorry, something went wrong while handling that message. Please try again.' THEN 'internal'
    WHEN 'Sorry, I can''t store messages right now (the server''s storage is failing), so I could not process that. Please try again later.' THEN 'store_failing'
  END
  WHERE status = 'failed' AND error_code IS NULL;
  `,
  // 25: requests_activity (session_key, updated_at) was rewritten by every change of a request's status, about three
  // WAL pages per user message, for the operator's session views only; they now read a session's requests through
  // its (session_key, external_id) key (PostgreSQL keeps the index: schema.ts, DIALECT_ONLY).
  `DROP INDEX requests_activity;`,
  // 26: a frame's own key (frame_id) was a third B-tree every push, update and pop wrote; a step finds its frames
  // through the session's (session_key, position) key instead (a stack is a few frames). WITHOUT ROWID keyed by
  // frame_id was the other way to two B-trees, but a frame (~1 KB, its system prompt) is larger than such a table
  // keeps on its leaf page: the spill to overflow pages cost more pages than the key saved (docs/engineering/
  // performance.md, "Fewer B-trees per message"). PostgreSQL keeps the key (schema.ts, DIALECT_ONLY).
  `
  CREATE TABLE frames_v26 (
    frame_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (session_key, position)
  );
  INSERT INTO frames_v26 (frame_id, session_key, position, data) SELECT frame_id, session_key, position, data FROM frames ORDER BY rowid;
  DROP TABLE frames;
  ALTER TABLE frames_v26 RENAME TO frames;
  `,
  // 27: the log's two indexes, by session and by agent session, were two B-trees every log row wrote, the agent
  // session's (a random id first) the one that touched most pages. One index by session, then agent session, serves
  // both: a history is read with its session named (StepStore.history), an exact search bounded by that agent
  // session's rows; a session's whole log reads its rows from the same index and sorts them. The history could
  // also have been read through the old session index with a filter, one page fewer per message, but walking every
  // row the chat ever had for each frame (docs/engineering/performance.md, "Fewer B-trees per message").
  // PostgreSQL keeps its two indexes (schema.ts, DIALECT_ONLY).
  `
  DROP INDEX log_by_agent_session;
  DROP INDEX log_by_session;
  CREATE INDEX log_by_session_agent ON context_log(session_key, agent_session_id, seq);
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the schema up to `target` (the newest by default; tests stop earlier to build old databases). */
export function migrate(db: Database.Database, target = SCHEMA_VERSION): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(`the database is at schema version ${current}, newer than this Switchboard (${SCHEMA_VERSION}); upgrade Switchboard or use another DATA_DIR`);
  }
  for (let version = current; version < target; version++) {
    db.transaction(() => {
      const step = MIGRATIONS[version]!;
      if (typeof step === "string") db.exec(step);
      else step(db);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
