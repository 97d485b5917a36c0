// The one description of the store's tables, columns, keys and indexes, in dialect-neutral terms. Both migration
// lists (src/store/sqlite/migrations.ts, src/store/postgres/migrations.ts) must arrive at exactly this;
// test/store/schema/parity.test.ts reads both live catalogs and fails on any difference not declared below.
// The code that walks every table of a conversation (moving one, erasing a user) takes its table list from here.

/**
 * `int`: a small count (PostgreSQL INTEGER); `bigint`: times, tokens, ids (BIGINT). SQLite stores both as INTEGER.
 * `blob`: bytes (SQLite BLOB, PostgreSQL BYTEA).
 */
export type ColumnType = "text" | "int" | "bigint" | "blob";

export interface ColumnDescription {
  type: ColumnType;
  notNull?: true;
  /**
   * `rowid`: on SQLite this column is the table's implicit rowid (the insertion order), not a declared column; on
   * PostgreSQL it is a declared identity column. SQLite also ends every index with the rowid, so an index that
   * ends with this column is written without it on SQLite.
   */
  sqlite?: "rowid";
}

export interface IndexDescription {
  /** Columns or expressions, written as the catalogs normalise them (lower case, one space after commas). */
  on: string;
  unique?: true;
  /** The predicate of a partial index. */
  where?: string;
}

export interface TableDescription {
  columns: Record<string, ColumnDescription>;
  /** The primary key and the UNIQUE constraints, each a column list. */
  keys: string[];
  indexes: Record<string, IndexDescription>;
}

export const TABLES = {
  file_blobs: {
    columns: {
      session_key: { type: "text", notNull: true },
      sha256: { type: "text", notNull: true },
      bytes: { type: "blob", notNull: true },
      size: { type: "bigint", notNull: true },
      created_at: { type: "bigint", notNull: true },
    },
    keys: ["session_key, sha256"],
    indexes: { file_blobs_by_age: { on: "created_at" } },
  },
  files: {
    columns: {
      id: { type: "text", notNull: true },
      public_id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      request_id: { type: "text" },
      owner_id: { type: "text", notNull: true },
      sha256: { type: "text", notNull: true },
      name: { type: "text", notNull: true },
      mime: { type: "text", notNull: true },
      kind: { type: "text", notNull: true },
      size: { type: "bigint", notNull: true },
      voice: { type: "int", notNull: true },
      created_at: { type: "bigint", notNull: true },
      expired_at: { type: "bigint" },
    },
    keys: ["id", "public_id"],
    indexes: {
      files_by_request: { on: "request_id" },
      files_by_session: { on: "session_key, created_at" },
    },
  },
  approvals: {
    columns: {
      id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      task_id: { type: "text" },
      frame_id: { type: "text", notNull: true },
      tool_use_id: { type: "text", notNull: true },
      tool_name: { type: "text", notNull: true },
      input: { type: "text", notNull: true },
      input_hash: { type: "text", notNull: true },
      agent: { type: "text", notNull: true },
      owner_id: { type: "text", notNull: true },
      status: { type: "text", notNull: true },
      requested_at: { type: "bigint", notNull: true },
      expires_at: { type: "bigint", notNull: true },
      decided_by: { type: "text" },
      decided_at: { type: "bigint" },
      request_id: { type: "text" },
    },
    keys: ["id"],
    indexes: {
      approvals_by_call: { on: "session_key, coalesce(task_id, ''), tool_use_id, tool_name, input_hash", unique: true },
      approvals_pending: { on: "expires_at", where: "status = 'pending'" },
      approvals_pending_by_session: { on: "session_key, requested_at", where: "status = 'pending'" },
    },
  },
  context_log: {
    columns: {
      seq: { type: "bigint", notNull: true },
      session_key: { type: "text", notNull: true },
      task_id: { type: "text" },
      request_id: { type: "text" },
      frame_id: { type: "text" },
      agent_session_id: { type: "text" },
      type: { type: "text", notNull: true },
      payload: { type: "text", notNull: true },
      created_at: { type: "bigint", notNull: true },
    },
    keys: ["seq"],
    // Each dialect indexes the log its own way (DIALECT_ONLY): the session's rows, and an agent session's.
    indexes: {},
  },
  deliveries: {
    columns: {
      outbound_id: { type: "text", notNull: true },
      chunk: { type: "int", notNull: true },
      platform_message_id: { type: "text", notNull: true },
      sent_at: { type: "bigint", notNull: true },
    },
    keys: ["outbound_id, chunk"],
    indexes: {},
  },
  frames: {
    columns: {
      frame_id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      position: { type: "int", notNull: true },
      data: { type: "text", notNull: true },
    },
    keys: ["session_key, position"],
    indexes: {},
  },
  idempotency_keys: {
    columns: {
      user_id: { type: "text", notNull: true },
      key: { type: "text", notNull: true },
      request_id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      fingerprint: { type: "text", notNull: true },
      response: { type: "text" },
      created_at: { type: "bigint", notNull: true },
    },
    keys: ["user_id, key"],
    indexes: {},
  },
  indicators: {
    columns: {
      seq: { type: "bigint", notNull: true, sqlite: "rowid" },
      session_key: { type: "text", notNull: true },
      data: { type: "text", notNull: true },
      created_at: { type: "bigint", notNull: true },
    },
    keys: ["seq", "session_key"],
    indexes: {},
  },
  workspace_files: {
    columns: {
      session_key: { type: "text", notNull: true },
      path: { type: "text", notNull: true },
      kind: { type: "text", notNull: true },
      mode: { type: "int", notNull: true },
      size: { type: "bigint", notNull: true },
      sha256: { type: "text", notNull: true },
      content: { type: "text", notNull: true },
      updated_at: { type: "bigint", notNull: true },
    },
    keys: ["session_key, path"],
    indexes: {},
  },
  leases: {
    columns: {
      key: { type: "text", notNull: true },
      holder: { type: "text", notNull: true },
      token: { type: "bigint", notNull: true },
      expires_at: { type: "bigint", notNull: true },
    },
    keys: ["key"],
    indexes: {},
  },
  memories: {
    columns: {
      seq: { type: "bigint", notNull: true },
      id: { type: "text", notNull: true },
      user_id: { type: "text", notNull: true },
      text: { type: "text", notNull: true },
      kind: { type: "text" },
      task_id: { type: "text" },
      created_at: { type: "bigint", notNull: true },
      updated_at: { type: "bigint", notNull: true },
    },
    keys: ["id", "seq"],
    indexes: {
      memories_by_task: { on: "task_id", where: "task_id is not null" },
      memories_by_user: { on: "user_id, created_at, seq" },
    },
  },
  memory_jobs: {
    columns: {
      seq: { type: "bigint", notNull: true, sqlite: "rowid" },
      task_id: { type: "text", notNull: true },
      user_id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      status: { type: "text", notNull: true },
      attempts: { type: "int", notNull: true },
      holder: { type: "text" },
      claimed_until: { type: "bigint" },
      next_at: { type: "bigint", notNull: true },
      error: { type: "text" },
      created_at: { type: "bigint", notNull: true },
      updated_at: { type: "bigint", notNull: true },
    },
    keys: ["seq", "task_id"],
    indexes: {
      memory_jobs_by_session: { on: "session_key" },
      memory_jobs_by_user: { on: "user_id" },
      memory_jobs_open: { on: "created_at, seq", where: "status in ('pending', 'running')" },
    },
  },
  outbox: {
    columns: {
      seq: { type: "bigint", notNull: true },
      id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      request_id: { type: "text" },
      task_id: { type: "text" },
      approval_id: { type: "text" },
      file_id: { type: "text" },
      agent: { type: "text", notNull: true },
      depth: { type: "int", notNull: true },
      text: { type: "text", notNull: true },
      kind: { type: "text", notNull: true },
      delivered_at: { type: "bigint" },
      failed_at: { type: "bigint" },
      failure: { type: "text" },
      created_at: { type: "bigint", notNull: true },
    },
    keys: ["id", "seq"],
    indexes: {
      outbox_by_request: { on: "request_id, seq" },
      outbox_failed: { on: "session_key, seq", where: "failed_at is not null" },
      outbox_pending: { on: "session_key, seq", where: "delivered_at is null and failed_at is null" },
    },
  },
  quarantine: {
    columns: {
      seq: { type: "bigint", notNull: true, sqlite: "rowid" },
      kind: { type: "text", notNull: true },
      row_id: { type: "text", notNull: true },
      session_key: { type: "text" },
      reason: { type: "text", notNull: true },
      created_at: { type: "bigint", notNull: true },
    },
    keys: ["kind, row_id", "seq"],
    indexes: {},
  },
  requests: {
    columns: {
      seq: { type: "bigint", notNull: true },
      id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      external_id: { type: "text", notNull: true },
      kind: { type: "text", notNull: true },
      user_id: { type: "text", notNull: true },
      text: { type: "text", notNull: true },
      status: { type: "text", notNull: true },
      task_id: { type: "text" },
      error: { type: "text" },
      input_tokens: { type: "bigint", notNull: true },
      output_tokens: { type: "bigint", notNull: true },
      cache_read_tokens: { type: "bigint", notNull: true },
      cache_write_tokens: { type: "bigint", notNull: true },
      created_at: { type: "bigint", notNull: true },
      updated_at: { type: "bigint", notNull: true },
      cost_nano_usd: { type: "bigint", notNull: true },
      task_expires_at: { type: "bigint" },
      task_metadata: { type: "text" },
      error_code: { type: "text" },
    },
    keys: ["id", "seq", "session_key, external_id"],
    indexes: {
      requests_failed: { on: "session_key, updated_at", where: "error is not null" },
      requests_unfinished: { on: "session_key, seq", where: "status in ('pending', 'running')" },
    },
  },
  schedule_jobs: {
    columns: {
      id: { type: "text", notNull: true },
      owner_id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      instruction: { type: "text", notNull: true },
      schedule: { type: "text", notNull: true },
      timezone: { type: "text", notNull: true },
      next_due: { type: "bigint" },
      status: { type: "text", notNull: true },
      last_due: { type: "bigint" },
      last_result: { type: "text" },
      created_by_task: { type: "text" },
      created_at: { type: "bigint", notNull: true },
      updated_at: { type: "bigint", notNull: true },
      traceparent: { type: "text" },
    },
    keys: ["id"],
    indexes: {
      schedule_jobs_by_owner: { on: "owner_id" },
      schedule_jobs_by_session: { on: "session_key" },
      schedule_jobs_due: { on: "next_due", where: "status = 'active'" },
    },
  },
  sessions: {
    columns: {
      key: { type: "text", notNull: true },
      owner_id: { type: "text" },
      main_agent_session_id: { type: "text", notNull: true },
      input_tokens: { type: "bigint", notNull: true },
      output_tokens: { type: "bigint", notNull: true },
      cache_read_tokens: { type: "bigint", notNull: true },
      cache_write_tokens: { type: "bigint", notNull: true },
      tokens_since_reset: { type: "bigint", notNull: true },
      created_at: { type: "bigint", notNull: true },
      updated_at: { type: "bigint", notNull: true },
      cost_nano_usd: { type: "bigint", notNull: true },
      cost_since_reset_nano_usd: { type: "bigint", notNull: true },
    },
    keys: ["key"],
    indexes: {
      sessions_by_owner: { on: "owner_id", where: "owner_id is not null" },
    },
  },
  tasks: {
    columns: {
      seq: { type: "bigint", notNull: true, sqlite: "rowid" },
      id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      owner_id: { type: "text", notNull: true },
      status: { type: "text", notNull: true },
      request_id: { type: "text" },
      result: { type: "text" },
      error: { type: "text" },
      structured_output: { type: "text" },
      created_at: { type: "bigint", notNull: true },
      updated_at: { type: "bigint", notNull: true },
      expires_at: { type: "bigint" },
      metadata: { type: "text" },
    },
    keys: ["id", "seq"],
    indexes: {
      tasks_active_by_owner: { on: "owner_id", where: "status in ('running', 'waiting_user', 'waiting_approval')" },
      tasks_by_session: { on: "session_key, status" },
    },
  },
  user_timezones: {
    columns: {
      user_id: { type: "text", notNull: true },
      timezone: { type: "text", notNull: true },
      updated_at: { type: "bigint", notNull: true },
    },
    keys: ["user_id"],
    indexes: {},
  },
  usage_daily: {
    columns: {
      scope: { type: "text", notNull: true },
      subject: { type: "text", notNull: true },
      day: { type: "text", notNull: true },
      messages: { type: "bigint", notNull: true },
      cost_nano_usd: { type: "bigint", notNull: true },
      told: { type: "text", notNull: true },
      updated_at: { type: "bigint", notNull: true },
    },
    keys: ["scope, subject, day"],
    indexes: {
      usage_daily_recent: { on: "scope, updated_at" },
    },
  },
  usage_holds: {
    columns: {
      id: { type: "text", notNull: true },
      scope: { type: "text", notNull: true },
      subject: { type: "text", notNull: true },
      day: { type: "text", notNull: true },
      cost_nano_usd: { type: "bigint", notNull: true },
      expires_at: { type: "bigint", notNull: true },
    },
    keys: ["id, scope"],
    indexes: {
      usage_holds_by_counter: { on: "scope, subject, day" },
    },
  },
  quota_refusals: {
    columns: {
      request_id: { type: "text", notNull: true },
      session_key: { type: "text", notNull: true },
      user_id: { type: "text", notNull: true },
      limit_name: { type: "text", notNull: true },
      resets_at: { type: "bigint", notNull: true },
      created_at: { type: "bigint", notNull: true },
    },
    keys: ["request_id"],
    indexes: {
      quota_refusals_by_session: { on: "session_key" },
    },
  },
} as const satisfies Record<string, TableDescription>;

export type TableName = keyof typeof TABLES;

/**
 * What one dialect has beyond the description, on purpose. Each entry says why; the parity test ignores exactly
 * these and nothing else.
 */
export const DIALECT_ONLY = {
  sqlite: {
    tables: {
      memories_fts: "full-text search of memories: an FTS5 virtual table kept by triggers (PostgreSQL: memories.search)",
      memories_fts_config: "FTS5's shadow table",
      memories_fts_data: "FTS5's shadow table",
      memories_fts_docsize: "FTS5's shadow table",
      memories_fts_idx: "FTS5's shadow table",
    },
    columns: {},
    keys: {},
    indexes: {
      // One B-tree for what PostgreSQL's log_by_session and log_by_agent_session serve: a log row wrote both
      // (performance.md, "Fewer B-trees per message"); a history read names its session.
      log_by_session_agent: "a session's log, by agent session (context_log.session_key, agent_session_id, seq)",
    },
  },
  postgres: {
    tables: {
      schema_migrations: "the migrations applied (SQLite keeps the version in PRAGMA user_version)",
      change_feed: "what a NOTIFY names, for other replicas to read (SQLite's feed lives in the process)",
    },
    columns: { "memories.search": "the tsvector full-text search reads (SQLite: memories_fts)" },
    keys: {
      // SQLite finds a step's frames through the session's (session_key, position) key instead: this one was a third
      // B-tree every push, update and pop of a frame wrote (performance.md, "Fewer B-trees per message").
      "frames(frame_id)": "a frame by its id, unique",
    },
    indexes: {
      memories_search: "the GIN index over memories.search",
      // SQLite reads these through the (session_key, external_id) key instead: each would cost every message one
      // more B-tree write there (docs/engineering/performance.md, "What the store split cost").
      requests_by_session: "a session's requests in order (requests.session_key, seq)",
      requests_by_task: "a task's requests (requests.task_id)",
      // SQLite's operator views find a session's last activity through its requests' (session_key, external_id) key
      // instead: every request's status change moved this index (performance.md, "SQLite's physical layout").
      requests_activity: "a session's latest activity (requests.session_key, updated_at), read by the operator's views",
      // SQLite has one index for both instead (log_by_session_agent).
      log_by_session: "a session's log in order (context_log.session_key, seq)",
      log_by_agent_session: "an agent session's history (context_log.agent_session_id, seq)",
    },
  },
} as const;

/** The tables whose rows belong to one conversation, by their `session_key` column (besides `sessions` itself). */
export const SESSION_TABLES = (Object.keys(TABLES) as TableName[]).filter((name) => "session_key" in TABLES[name].columns);
