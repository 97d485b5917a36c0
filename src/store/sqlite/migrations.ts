import type Database from "better-sqlite3";

// Each entry moves the schema one version up; PRAGMA user_version records where a database is.
const MIGRATIONS: string[] = [
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
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `the database is at schema version ${current}, newer than this Switchboard (${SCHEMA_VERSION}); upgrade Switchboard or use another DATA_DIR`,
    );
  }
  for (let version = current; version < SCHEMA_VERSION; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
