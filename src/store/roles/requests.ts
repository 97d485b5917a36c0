// The inbox role: inbound requests (a user message, a command, an approval's resume), deduplicated by (session,
// external id) and by (user, idempotency key). Any replica may store a request, lease or not; only a step of the
// session (written under its lease) moves a request along.
import type { NewStoredFile } from "./files.js";
import type { TaskOptions } from "./tasks.js";

export type RequestStatus = "pending" | "running" | "done" | "failed";
/** `approval`: a decision came in and the waiting turn resumes. */
export type RequestKind = "message" | "command" | "approval";

export interface RequestRecord {
  id: string;
  sessionKey: string;
  externalId: string;
  kind: RequestKind;
  userId: string;
  text: string;
  status: RequestStatus;
  taskId: string | null;
  error: string | null;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** What this request's model calls cost in USD. */
  costUsd: number;
  /** Set when the request asks to start a task with an expiry or metadata; null otherwise. */
  taskOptions: TaskOptions | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewRequest {
  id: string;
  sessionKey: string;
  externalId: string;
  kind: RequestKind;
  userId: string;
  text: string;
  /**
   * The session is private to one user (the HTTP API): claimed for `userId` if it has no owner yet, in the
   * same transaction that stores the request; refused when another user owns it.
   */
  claimSession?: { mainAgentSessionId: string };
  /** A client's Idempotency-Key, per user: a second request with the same key is a duplicate of the first. */
  idempotency?: { key: string; fingerprint: string };
  /** The task this request starts takes these (HTTP API: expires_at, metadata). */
  taskOptions?: TaskOptions;
  /**
   * Who may add this request to a conversation with an owner (RequestStore.conversationOwner), decided in the
   * transaction that stores it, so of two members writing at once exactly one becomes the owner. `mine-or-free`:
   * stored when `userId` owns the conversation or nobody does; `mine`: only when `userId` owns it. Otherwise nothing
   * is stored and the result is `busy`. Absent: no check (commands anyone may send, resumes).
   */
  owner?: OwnerRule;
  /** The message's files, stored with it (in the same transaction) or not at all. */
  files?: NewStoredFile[];
}

export type OwnerRule = "mine-or-free" | "mine";

/** Whether `userId` may add a request under `rule` to a conversation owned by `owner` (null: nobody). */
export function ownerAdmits(rule: OwnerRule, owner: string | null, userId: string): boolean {
  return owner === null ? rule === "mine-or-free" : owner === userId;
}

export type InsertResult =
  | { status: "inserted"; request: RequestRecord }
  /** Seen before (same session and external id, or same user and idempotency key): the first request. */
  | { status: "duplicate"; request: RequestRecord }
  | { status: "forbidden"; ownerId: string }
  /** Refused by NewRequest.owner: the conversation is another user's (`ownerId`), or nobody's under `mine`. */
  | { status: "busy"; ownerId: string | null };

export interface IdempotencyRecord {
  userId: string;
  key: string;
  requestId: string;
  sessionKey: string;
  fingerprint: string;
  /** The response the first request got, once it finished. */
  response: string | null;
}

export interface RequestStore {
  /** Stores an inbound request unless (session, externalId) or (user, idempotency key) was seen before. */
  insert(input: NewRequest): Promise<InsertResult>;
  get(id: string): Promise<RequestRecord | null>;
  /** The request stored for a platform's message id in a session, if any: a cheap look before a message's files are fetched. */
  byExternalId(sessionKey: string, externalId: string): Promise<RequestRecord | null>;
  /** Every request of a session, oldest first. */
  ofSession(sessionKey: string): Promise<RequestRecord[]>;
  /** Requests not yet done, oldest first: the work a restart must pick up. */
  unfinished(): Promise<RequestRecord[]>;
  /** The same for one session (what its worker runs next). */
  unfinishedOf(sessionKey: string): Promise<RequestRecord[]>;
  /** Requests of a session that started but did not finish (a turn in flight or cut off). */
  running(sessionKey: string): Promise<RequestRecord[]>;
  /**
   * Who owns the conversation now: the owner of its active task; with none, the sender of its oldest unfinished
   * message (accepted, its task not started or not yet committed: the task it starts will be theirs). Null when
   * neither exists. A member's message, /cancel or /reset is taken only from this user (NewRequest.owner).
   */
  conversationOwner(sessionKey: string): Promise<string | null>;
  idempotency(userId: string, key: string): Promise<IdempotencyRecord | null>;
  saveIdempotentResponse(userId: string, key: string, response: string): Promise<void>;
}
