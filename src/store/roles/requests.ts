// The inbox role: inbound requests (a user message, a command, an approval's resume), deduplicated by (session,
// external id) and by (user, idempotency key). Any replica may store a request, lease or not; only a step of the
// session (written under its lease) moves a request along.
import type { NewStoredFile } from "./files.js";
import type { TaskOptions } from "./tasks.js";

export type RequestStatus = "pending" | "running" | "done" | "failed";

/**
 * Why a request failed, stored with it (`requests.error_code`) beside the words the user was told (`error`), so
 * whoever reads it back (a waiter on another replica, the HTTP API) decides by the code, never by the words.
 */
export const FAILURE_CODES = [
  /** Someone else's task runs in this chat (the gateway's ownership check). */
  "busy",
  /** No model is configured: the user is given the setup hint. */
  "setup",
  /** SESSION_TOKEN_BUDGET or SESSION_COST_BUDGET_USD is spent (at the door, or mid-turn). */
  "budget",
  /** USER_DAILY_MESSAGES, USER_DAILY_USD or CHAT_DAILY_USD is reached (at the door, or by a model call mid-turn). */
  "quota",
  /** A /cancel or /reset cut the turn off. */
  "cancelled",
  /** The request came after its task's expiry (expires_at), or the expiry cut its turn off. */
  "expired",
  /** The request asks for a task of its own (an expiry, metadata) while another task is under way. */
  "task_under_way",
  /** The engine stopped the task before it finished: the model's own error, or the iteration limit. */
  "engine",
  /** The session's stored state is damaged. */
  "corrupt",
  /** The store could not take the reply (disk full, I/O error). */
  "store_failing",
  /** Anything else that went wrong on the server's side. */
  "internal",
] as const;

export type FailureCode = (typeof FAILURE_CODES)[number];

const KNOWN: ReadonlySet<string> = new Set(FAILURE_CODES);

/** A stored `error_code` read back: null when absent, or a code this version does not know (written by a newer one). */
export function failureCodeOf(stored: unknown): FailureCode | null {
  return typeof stored === "string" && KNOWN.has(stored) ? (stored as FailureCode) : null;
}
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
  /** What the user was told when the request failed. */
  error: string | null;
  /** Why it failed; null unless failed, and for a request failed before the code was stored (schema 24 / 16). */
  errorCode: FailureCode | null;
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

/** RequestStore.atDoor: the request already stored for a message, if any, and the conversation's owner now. */
export interface DoorLook {
  seen: RequestRecord | null;
  owner: string | null;
}

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
  /** byExternalId and conversationOwner in one look (one round trip on PostgreSQL): what a message's admission asks first. */
  atDoor(sessionKey: string, externalId: string): Promise<DoorLook>;
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
