// The tasks role: reads of the tasks a session's steps created and ended (a task is written only by a step).

/** `expired`: a message or decision came after the task's `expiresAt`; the task ended there, unfinished. */
export type TaskStatus = "running" | "waiting_user" | "waiting_approval" | "completed" | "failed" | "cancelled" | "expired";

export const ACTIVE_TASK_STATUSES: readonly TaskStatus[] = ["running", "waiting_user", "waiting_approval"];

export interface TaskRecord {
  id: string;
  sessionKey: string;
  ownerId: string;
  status: TaskStatus;
  requestId: string | null;
  result: string | null;
  error: string | null;
  /** The last structured result a child reported back in this task (for API clients). */
  structuredOutput: unknown;
  /** After this time the task takes no more messages or decisions (set by its first request); null: never. */
  expiresAt: number | null;
  /** The caller's own JSON object, given with the task's first request (HTTP API); null when none was. */
  metadata: Record<string, unknown> | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * What a request that starts a task gives that task: its expiry and its metadata, the metadata as the JSON text the
 * API validated (the task parses it when read back).
 */
export interface TaskOptions {
  expiresAt: number | null;
  metadataJson: string | null;
}

/** A task's or a request's token totals and their cost. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
}

export interface TaskStore {
  get(id: string): Promise<TaskRecord | null>;
  /** Every task of a session, oldest first. */
  ofSession(sessionKey: string): Promise<TaskRecord[]>;
  /** The session's newest task that is still running or waiting. */
  active(sessionKey: string): Promise<TaskRecord | null>;
  /** The newest active task of `ownerId` in the session `keyPrefix` or any session below it (`<prefix>:…`). */
  activeOf(keyPrefix: string, ownerId: string): Promise<TaskRecord | null>;
  /** Token totals of one task and their cost: the sum over its requests. */
  usage(taskId: string): Promise<Usage>;
}
