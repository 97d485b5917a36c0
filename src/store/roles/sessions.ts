// The sessions role: one row per conversation place (session key), with its main agent's history id and its
// running token totals. Opening a session is idempotent and needs no lease (any replica may create it).

export interface SessionRecord {
  key: string;
  /** Set for private sessions (the HTTP API): the user whose first request opened it. Null for shared chats. */
  ownerId: string | null;
  /** The main agent's history spans tasks; /reset starts a new one. */
  mainAgentSessionId: string;
  createdAt: number;
}

export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  sinceReset: number;
  /** What those tokens cost in USD, at the price table in force when each call was made (src/llm/prices.ts). */
  costUsd: number;
  /** The cost since the last /reset (what SESSION_COST_BUDGET_USD counts). */
  costSinceResetUsd: number;
}

export interface SessionStore {
  /** Returns the session, creating it (with a fresh main agent session id) when new. */
  open(key: string, newMainAgentSessionId: () => string): Promise<SessionRecord>;
  /** The session if it exists. */
  find(key: string): Promise<SessionRecord | null>;
  /** Token totals of a session (all time) and since its last /reset (what SESSION_TOKEN_BUDGET counts). */
  usage(key: string): Promise<SessionUsage>;
  /**
   * Moves a conversation (the key and every `<key>:…` sub-key) to another key, every row with it, in one
   * transaction. Refused (nothing moved) when a conversation under the new key is already under way.
   */
  move(from: string, to: string): Promise<{ moved: number } | { refused: string }>;
}
