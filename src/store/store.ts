// The Store interface: everything the runtime and gateway persist. The runtime sees only this file; app.ts
// picks the backend (SQLite in DATA_DIR, or PostgreSQL when DATABASE_URL is set). Every method is async, because
// a networked database cannot answer synchronously; the SQLite store answers at once underneath.

import type { OperationsQueries } from "./operations.js";

/** `expired`: a message or decision came after the task's `expiresAt`; the task ended there, unfinished. */
export type TaskStatus = "running" | "waiting_user" | "waiting_approval" | "completed" | "failed" | "cancelled" | "expired";
export type RequestStatus = "pending" | "running" | "done" | "failed";
/** `approval`: a decision came in and the waiting turn resumes. */
export type RequestKind = "message" | "command" | "approval";
export type LogType =
  | "message"
  | "tool_use"
  | "tool_result"
  | "compaction"
  | "agent_session"
  | "agent_session_complete"
  | "approval"
  | "session_reset";

export const ACTIVE_TASK_STATUSES: readonly TaskStatus[] = ["running", "waiting_user", "waiting_approval"];

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

/** A task's or a request's token totals and their cost. */
export type Usage = Omit<SessionUsage, "sinceReset" | "costSinceResetUsd">;

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

/** A frame's metadata; its history lives in the context log under agentSessionId. */
export interface FrameRecord {
  frameId: string;
  agentName: string;
  agentType: "main" | "skill" | "agent";
  definitionName: string | null;
  systemPrompt: string;
  model: string;
  environment: Record<string, string>;
  iteration: number;
  maxIterations: number;
  effectiveTools: string[];
  isSkillAgent: boolean;
  parentToolUseId: string | null;
  agentSessionId: string;
  mode: "interactive" | "batch";
  callChain: string[];
  /** Set while a tool with side effects runs, so a restart can tell it was interrupted. */
  runningToolUseId: string | null;
  /** The JSON Schema the frame must report_back with; null when it finishes with complete. */
  outputSchema: Record<string, unknown> | null;
  /** Invalid report_back calls so far (the frame fails at 3). */
  reportAttempts: number;
  /** Tokens the frame's context used at its last model call, as the API reported them. */
  contextTokens: number;
  /** Tools this frame may run only with the owner's approval (from its definition); "*" means all. */
  approvalTools: string[];
  /**
   * The user's long-term memories as this frame was given them (the task owner's, recalled when the task started;
   * children only when their definition says `memory: true`); shown in the volatile part of its system prompt.
   */
  memories?: string | null;
  /**
   * Where the task began in the traces (a W3C traceparent of its first request's span), kept on main's frame so
   * later requests of the task (after a restart, on another replica) link to it. Absent when tracing is off.
   */
  traceparent?: string;
}

export interface LogEntryInput {
  taskId: string | null;
  requestId: string | null;
  frameId: string | null;
  agentSessionId: string | null;
  type: LogType;
  payload: unknown;
}

export interface LogEntry extends LogEntryInput {
  seq: number;
  sessionKey: string;
  createdAt: number;
}

/**
 * `expired`: nobody decided in time (counts as denied). `withdrawn`: its task expired first, so it can no longer be
 * decided. `quarantined`: the stored row could not be read and was taken out of play.
 */
export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "withdrawn" | "quarantined";

/** A stored row that could not be read back: set aside (kept in the quarantine table) so only its session is affected. */
export interface QuarantineRecord {
  kind: "approval" | "task" | "frame" | "log";
  rowId: string;
  sessionKey: string | null;
  reason: string;
  createdAt: number;
}

export interface ApprovalRecord {
  /** Short, so it fits in a Telegram button's callback data. */
  id: string;
  sessionKey: string;
  taskId: string | null;
  /** The request whose turn the approval paused (a client addresses it with GET /v1/requests/{id}). */
  requestId: string | null;
  frameId: string;
  toolUseId: string;
  toolName: string;
  input: Record<string, unknown>;
  agent: string;
  ownerId: string;
  status: ApprovalStatus;
  requestedAt: number;
  expiresAt: number;
  decidedBy: string | null;
  decidedAt: number | null;
}

/** What an approval is bound to: the call's id, its tool and (hashed by the store) its exact input. */
export interface ToolCallRef {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/**
 * Where a call was made: an approval answers only the call of its own session and task, so the same call (same
 * tool_use id, tool and input) in another session or another task is asked again.
 */
export interface ApprovalScope {
  sessionKey: string;
  taskId: string | null;
}

export type NewApproval = Omit<ApprovalRecord, "status" | "requestedAt" | "expiresAt" | "decidedBy" | "decidedAt" | "sessionKey"> & {
  timeoutMs: number;
};

export interface OutboundInput {
  /** When set, the message asks the owner to approve or deny this approval (providers add buttons). */
  approvalId?: string | null;
  id: string;
  requestId: string | null;
  taskId: string | null;
  agent: string;
  depth: number;
  text: string;
  kind: "message" | "notice" | "error";
}

export interface OutboundRecord extends OutboundInput {
  sessionKey: string;
  createdAt: number;
}

/** A reply the platform refused for good (blocked, kicked, chat gone): kept, never sent again. */
export interface UndeliverableRecord extends OutboundRecord {
  failure: string;
  failedAt: number;
}

/** Everything one orchestration step changes; written in one transaction. */
export interface StepCommit {
  sessionKey: string;
  log?: LogEntryInput[];
  framesPushed?: FrameRecord[];
  framesUpdated?: FrameRecord[];
  framesPopped?: string[];
  /** A new task; `options` are its first request's (an expiry, metadata). */
  taskCreated?: { id: string; ownerId: string; requestId: string; options?: TaskOptions | null };
  task?: { id: string; status: TaskStatus; result?: string; error?: string; structuredOutput?: unknown };
  request?: { id: string; status: RequestStatus; taskId?: string | null; error?: string };
  /** Other requests ended by this step (a turn that a /cancel interrupted; messages that joined a running turn). */
  requestsClosed?: { id: string; status: RequestStatus; taskId?: string | null; error?: string }[];
  /** Tokens and cost (in whole nano-USD, so sums are exact) added to the request and its session. */
  usage?: { requestId: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; costNanoUsd: number };
  outbound?: OutboundInput[];
  newMainAgentSessionId?: string;
  approvalsCreated?: NewApproval[];
  /** The session's frames cannot be read: move them all to the quarantine table (what /reset does then). */
  framesQuarantined?: { reason: string };
  /**
   * A task ended with an answer: queue the extraction of long-term memories from it (run in the background, after
   * the answer is delivered; see MemoryJob). One job per task; a second one for the same task is ignored.
   */
  memoryJob?: { taskId: string; userId: string };
  /**
   * The lease this step was computed under. The commit checks, in its transaction, that the session's lease still
   * carries this fencing token, and throws FencedError (writing nothing) when another replica has taken it over.
   */
  fence?: Fence;
}

/** A replica's hold on a session (or on a singleton job such as `@telegram-polling`). */
export interface Lease {
  key: string;
  holder: string;
  /** The fencing token: grows by one each time a different holder takes the lease; never goes back. */
  token: number;
  expiresAt: number;
}

export interface Fence {
  holder: string;
  token: number;
}

/**
 * What a replica tells the others through the store (PostgreSQL: LISTEN/NOTIFY; SQLite: in the process). The
 * store announces the first three itself when the change commits; `stack` is announced by the runtime.
 */
export type StoreChange =
  /** A request was stored (a message, a command, an approval's resume): there is work for the session. */
  | { kind: "request"; sessionKey: string; requestId: string }
  /** A request finished (done or failed). */
  | { kind: "done"; sessionKey: string; requestId: string }
  /** Replies were committed to the outbox. */
  | { kind: "outbound"; sessionKey: string; requestIds: (string | null)[] }
  /** The agent stack changed (a child took over or returned). */
  | { kind: "stack"; sessionKey: string; event: { type: "push" | "pop"; agent: string; depth: number } }
  /** A piece of a reply as the model writes it (a preview; never stored): whoever shows the chat may show it. */
  | { kind: "delta"; sessionKey: string; requestId?: string | null; event: { agent: string; depth: number; text: string } }
  /** The pieces of that agent's reply shown so far are void: its model call failed and starts over (a preview too). */
  | { kind: "reset"; sessionKey: string; requestId?: string | null; event: { agent: string; depth: number } };

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

/**
 * What one user keeps on the server, for the HTTP API's per-user caps: the sessions they own, and the bytes of their
 * owned sessions' context logs (every message, reply, tool call and result: the bulk of what a session stores)
 * plus their memories.
 */
export interface UserFootprint {
  sessions: number;
  bytes: number;
}

export interface UserExport {
  userId: string;
  exportedAt: string;
  memories: MemoryRecord[];
  /** One entry per session the user owns or wrote in. */
  sessions: Array<{
    sessionKey: string;
    owned: boolean;
    requests: RequestRecord[];
    tasks: TaskRecord[];
    log: LogEntry[];
    outbound: Array<{ id: string; requestId: string | null; agent: string; text: string; kind: string; createdAt: number }>;
  }>;
  approvals: ApprovalRecord[];
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
   * Who may add this request to a conversation with an owner (Store.conversationOwner), decided in the transaction
   * that stores it, so of two members writing at once exactly one becomes the owner. `mine-or-free`: stored when
   * `userId` owns the conversation or nobody does; `mine`: only when `userId` owns it. Otherwise nothing is stored
   * and the result is `busy`. Absent: no check (commands anyone may send, resumes).
   */
  owner?: OwnerRule;
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

export interface Store extends OperationsQueries {
  commit(step: StepCommit): Promise<void>;
  /** Returns the session, creating it (with a fresh main agent session id) when new. */
  session(key: string, newMainAgentSessionId: () => string): Promise<SessionRecord>;
  /** The session if it exists. */
  findSession(key: string): Promise<SessionRecord | null>;
  /** Stores an inbound request unless (session, externalId) or (user, idempotency key) was seen before. */
  insertRequest(input: NewRequest): Promise<InsertResult>;
  idempotency(userId: string, key: string): Promise<IdempotencyRecord | null>;
  saveIdempotentResponse(userId: string, key: string, response: string): Promise<void>;
  request(id: string): Promise<RequestRecord | null>;
  /** Every request of a session, oldest first. */
  requests(sessionKey: string): Promise<RequestRecord[]>;
  /** Requests not yet done, oldest first: the work a restart must pick up. */
  unfinishedRequests(): Promise<RequestRecord[]>;
  /** The same for one session (what its worker runs next). */
  unfinishedRequestsOf(sessionKey: string): Promise<RequestRecord[]>;
  task(id: string): Promise<TaskRecord | null>;
  activeTask(sessionKey: string): Promise<TaskRecord | null>;
  /**
   * Who owns the conversation now: the owner of its active task; with none, the sender of its oldest unfinished
   * message (accepted, its task not started or not yet committed: the task it starts will be theirs). Null when
   * neither exists. A member's message, /cancel or /reset is taken only from this user (NewRequest.owner).
   */
  conversationOwner(sessionKey: string): Promise<string | null>;
  /** Every task of a session, oldest first. */
  tasks(sessionKey: string): Promise<TaskRecord[]>;
  /** The newest active task of `ownerId` in the session `keyPrefix` or any session below it (`<prefix>:…`). */
  activeTaskOf(keyPrefix: string, ownerId: string): Promise<TaskRecord | null>;
  /** The stack, bottom first. Throws CorruptStateError when a stored frame does not parse. */
  frames(sessionKey: string): Promise<FrameRecord[]>;
  /** Message and tool_result rows of one agent session, in order. */
  history(agentSessionId: string): Promise<LogEntry[]>;
  sessionLog(sessionKey: string): Promise<LogEntry[]>;
  /** Token totals of a session (all time) and since its last /reset (what SESSION_TOKEN_BUDGET counts). */
  sessionUsage(sessionKey: string): Promise<SessionUsage>;
  /** Token totals of one task and their cost: the sum over its requests. */
  taskUsage(taskId: string): Promise<Usage>;
  /** Agent sessions of a chat that were started (agent_session) and never closed (agent_session_complete). */
  openAgentSessions(sessionKey: string): Promise<Array<{ agentSessionId: string; agentName: string }>>;
  /** Requests of a session that started but did not finish (a turn in flight or cut off). */
  runningRequests(sessionKey: string): Promise<RequestRecord[]>;
  pendingOutbound(sessionKey?: string): Promise<OutboundRecord[]>;
  /** Every outbound message a request produced, in order. */
  outboundFor(requestId: string): Promise<OutboundRecord[]>;
  markDelivered(outboundId: string): Promise<void>;
  /** Takes back a delivery mark when the send failed, so it is tried again. */
  markUndelivered(outboundId: string): Promise<void>;
  /** Marks a reply undeliverable for good; false when it already was (so it is logged once). */
  markUndeliverable(outboundId: string, reason: string): Promise<boolean>;
  undeliverable(sessionKey: string): Promise<UndeliverableRecord[]>;
  /**
   * Moves a conversation (the key and every `<key>:…` sub-key) to another key, every row with it, in one
   * transaction. Refused (nothing moved) when a conversation under the new key is already under way.
   */
  moveSession(from: string, to: string): Promise<{ moved: number } | { refused: string }>;
  /** An indicator a provider showed (a reaction, a status), so a restart can take it back. */
  saveIndicator(sessionKey: string, data: string): Promise<void>;
  deleteIndicator(sessionKey: string): Promise<void>;
  /** Indicators of one provider (`slack`), oldest first. */
  indicators(provider: string): Promise<Array<{ sessionKey: string; data: string }>>;
  /** Chunks of an outbound message already sent to the platform. */
  deliveredChunks(outboundId: string): Promise<number[]>;
  recordChunk(outboundId: string, chunk: number, platformMessageId: string): Promise<void>;
  /** The approval asked for exactly this call (id, tool and input) in this session and task, if any. */
  approvalFor(call: ToolCallRef, scope: ApprovalScope): Promise<ApprovalRecord | null>;
  approval(id: string): Promise<ApprovalRecord | null>;
  pendingApprovals(sessionKey: string): Promise<ApprovalRecord[]>;
  /**
   * Moves a pending approval to `status`: an atomic compare-and-set, so of two racing decisions exactly one
   * wins. Returns false when it was no longer pending.
   */
  decideApproval(id: string, status: Exclude<ApprovalStatus, "pending" | "quarantined">, decidedBy: string): Promise<boolean>;
  /**
   * The same compare-and-set, and — only if it wins — the request that resumes the waiting turn, in one
   * transaction: a crash can never leave a decided approval without its resume.
   */
  decideApprovalAndResume(id: string, status: Exclude<ApprovalStatus, "pending" | "quarantined">, decidedBy: string, resume: NewRequest): Promise<boolean>;
  /** Pending approvals whose time is up (expires_at ≤ now). */
  dueApprovals(now: number): Promise<ApprovalRecord[]>;
  /**
   * Claims the session's oldest undelivered reply for sending (marks it delivered, so it is never sent twice, even
   * by two replicas at once: PostgreSQL claims with FOR UPDATE SKIP LOCKED). Null when nothing is left to send.
   */
  claimNextOutbound(sessionKey: string): Promise<OutboundRecord | null>;
  /**
   * Takes the lease on `key` for `holder` for `ttlMs`: granted when nobody holds it, when it expired, or when
   * `holder` holds it already (then only extended). A grant to a different holder than the last one increments
   * the fencing token. Null when another holder's lease is still live.
   */
  acquireLease(key: string, holder: string, ttlMs: number): Promise<Lease | null>;
  /**
   * Extends the lease if it still carries `token` (it may have expired, as long as nobody took it over: the fence,
   * too, checks only the token, so a holder whose lease ran out but was not taken over still commits).
   */
  renewLease(key: string, holder: string, token: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up at once (so any replica may take the session's next message): expiresAt 0, token kept. */
  releaseLease(key: string, holder: string, token: number): Promise<void>;
  lease(key: string): Promise<Lease | null>;
  /**
   * Sessions with work nobody is doing: unfinished requests or undelivered replies, and no live lease. What a
   * replica polls for when a notification was missed, and what it takes over when another replica died.
   */
  orphanedSessions(): Promise<string[]>;
  /**
   * Calls `listener` for every change any replica commits or announces (this one included). Returns unsubscribe.
   * On PostgreSQL changes arrive asynchronously, one outbound commit may arrive as several changes, and changes
   * made while the listening connection reconnects are lost: treat them as hints and read the store (the poll for
   * orphaned sessions covers what is missed).
   */
  watch(listener: (change: StoreChange) => void): () => void;
  /** The sessions `userId` owns and the bytes stored for them (see UserFootprint); indexed by owner. */
  userFootprint(userId: string): Promise<UserFootprint>;
  announce(change: StoreChange): Promise<void>;
  /** Resolves when the database answers (a readiness probe); rejects with the reason otherwise. */
  ping(): Promise<void>;
  /** Rows set aside because they could not be read, newest first. */
  quarantined(): Promise<QuarantineRecord[]>;

  // ── long-term memory (per user identity; never shared between users) ──
  /** All of a user's memories, oldest first (the order /memory numbers them in). */
  memories(userId: string): Promise<MemoryRecord[]>;
  /**
   * Up to `limit` of the user's memories most relevant to `query` (full-text: SQLite FTS5 / PostgreSQL tsvector),
   * ties and near-ties going to the most recently updated; an empty or wordless query gives the most recent ones.
   * Query text is never interpreted as search syntax.
   */
  searchMemories(userId: string, query: string, limit: number): Promise<MemoryRecord[]>;
  /** Adds and removes the user's memories in one transaction. */
  saveMemories(userId: string, changes: MemoryChanges): Promise<void>;
  /** Deletes the user's memories with these ids (all of them when `ids` is omitted); returns how many went. */
  deleteMemories(userId: string, ids?: string[]): Promise<number>;
  /**
   * Claims the oldest due extraction job (pending, or claimed but expired) for `holder` until `now + claimMs`;
   * null when none is due. A job claimed `maxAttempts` times already is marked failed instead.
   */
  claimMemoryJob(holder: string, now: number, claimMs: number, maxAttempts: number): Promise<MemoryJob | null>;
  /**
   * Ends a claimed job: its memory changes (if any) are written in the same transaction, and only if `holder`
   * still holds the claim (else nothing is written and false is returned: another replica took it over).
   */
  finishMemoryJob(taskId: string, holder: string, changes: MemoryChanges | null): Promise<boolean>;
  /** Gives a claimed job back to be retried at `retryAt` (the error is kept for operators). */
  retryMemoryJob(taskId: string, holder: string, error: string, retryAt: number): Promise<void>;
  /** Jobs not finished or failed yet (for tests and the admin view). */
  pendingMemoryJobs(): Promise<Array<MemoryJob & { status: string; nextAt: number; error: string | null }>>;

  // ── a user's data (npm run user) ──
  /**
   * Everything stored about a user: the sessions they own or wrote in, with their requests, tasks, context log and
   * outbox rows, their approvals, idempotency records and memories. Plain JSON-able data.
   */
  exportUser(userId: string): Promise<UserExport>;
  /** Erases all of it (sessions they own entirely; their requests in others' sessions); returns counts per table. */
  deleteUser(userId: string): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** A commit under a lease another replica has since taken over: nothing was written; the turn must stop. */
export class FencedError extends Error {
  override name = "FencedError";
  constructor(
    readonly sessionKey: string,
    readonly token: number,
    readonly current: number | null,
  ) {
    super(`the lease on ${sessionKey} was taken over (fencing token ${token}, now ${current ?? "none"}); this step was not committed`);
  }
}

/** A stored row that cannot be read back; the request fails with a clear message, the gateway carries on. */
export class CorruptStateError extends Error {
  override name = "CorruptStateError";
}
