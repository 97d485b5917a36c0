// The memories role: long-term facts per user identity (never shared between users), and the queue of extraction
// jobs a finished task leaves (queued by its step, claimed by one replica at a time).

/** A fact the bot keeps about one user (their identity, e.g. `telegram:4242`), across conversations. */
export interface MemoryRecord {
  id: string;
  userId: string;
  text: string;
  /** What sort of fact ("preference", "project", "identity", …), as the extraction named it; null when none. */
  kind: string | null;
  /** The task it was learnt in; null when the user said "remember…" outside one, or after the task was erased. */
  taskId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewMemory {
  id: string;
  text: string;
  kind?: string | null;
}

/** Changes to one user's memories, written in one transaction. */
export interface MemoryChanges {
  add?: NewMemory[];
  /** Memories to delete (a newer fact replaces them); ids of other users' memories are ignored. */
  remove?: string[];
  /** Tokens spent finding them, added to the session's usage (and its budget). */
  usage?: { sessionKey: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; costNanoUsd: number };
}

/**
 * The extraction of memories from a finished task: queued with the task's end (StepCommit.memoryJob), claimed by
 * one replica at a time, retried with a delay when it fails, claimable again when its claim expires (a crash).
 */
export interface MemoryJob {
  taskId: string;
  userId: string;
  sessionKey: string;
  /** Claims so far, including this one. */
  attempts: number;
}

/** A job as the admin view lists it. */
export type MemoryJobStatus = MemoryJob & { status: string; nextAt: number; error: string | null };

export interface MemoryStore {
  /** All of a user's memories, oldest first (the order /memory numbers them in). */
  list(userId: string): Promise<MemoryRecord[]>;
  /**
   * Up to `limit` of the user's memories most relevant to `query` (full-text: SQLite FTS5 / PostgreSQL tsvector),
   * ties and near-ties going to the most recently updated; an empty or wordless query gives the most recent ones.
   * Query text is never interpreted as search syntax.
   */
  search(userId: string, query: string, limit: number): Promise<MemoryRecord[]>;
  /** Adds and removes the user's memories in one transaction. */
  save(userId: string, changes: MemoryChanges): Promise<void>;
  /** Deletes the user's memories with these ids (all of them when `ids` is omitted); returns how many went. */
  delete(userId: string, ids?: string[]): Promise<number>;
  /**
   * Claims the oldest due extraction job (pending, or claimed but expired) for `holder` until `now + claimMs`;
   * null when none is due. A job claimed `maxAttempts` times already is marked failed instead.
   */
  claimJob(holder: string, now: number, claimMs: number, maxAttempts: number): Promise<MemoryJob | null>;
  /**
   * Ends a claimed job: its memory changes (if any) are written in the same transaction, and only if `holder`
   * still holds the claim (else nothing is written and false is returned: another replica took it over).
   */
  finishJob(taskId: string, holder: string, changes: MemoryChanges | null): Promise<boolean>;
  /** Gives a claimed job back to be retried at `retryAt` (the error is kept for operators). */
  retryJob(taskId: string, holder: string, error: string, retryAt: number): Promise<void>;
  /** Jobs not finished or failed yet (for tests and the admin view). */
  pendingJobs(): Promise<MemoryJobStatus[]>;
}
