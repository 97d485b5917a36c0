// What an operator asks of the store (npm run admin, the /admin page, the metrics gauges): read-only views across
// sessions. Every query is bounded and indexed; none of them is on a conversation's hot path.

import type { ApprovalRecord } from "./approvals.js";
import type { OutboundRecord } from "./outbox.js";
import type { RequestRecord } from "./requests.js";
import type { TaskStatus } from "./tasks.js";

/** A stored row that could not be read back: set aside (kept in the quarantine table) so only its session is affected. */
export interface QuarantineRecord {
  kind: "approval" | "task" | "frame" | "log";
  rowId: string;
  sessionKey: string | null;
  reason: string;
  createdAt: number;
}

/** One line of `npm run admin -- sessions`. */
export interface SessionSummary {
  key: string;
  /** The key's first part: telegram, slack, http, console, … */
  provider: string;
  /** The user who owns the session (private sessions), else the owner of its newest task; null when it has none. */
  ownerId: string | null;
  /** Agent names on the stack, bottom first (["main", "skill:interview"]); empty when idle. */
  stack: string[];
  /** The active task's status, or "idle" when there is none. */
  status: TaskStatus | "idle";
  taskId: string | null;
  /** The newest change to one of its requests (epoch ms), else when the session was created. */
  lastActivity: number;
  costUsd: number;
  /** Input + output + cache tokens, all time. */
  tokens: number;
  pendingApprovals: number;
}

/** A failure an operator should see, newest first. */
export interface SessionError {
  at: number;
  source: "request" | "task" | "delivery";
  /** The request, task or outbox row id. */
  id: string;
  error: string;
}

/** Work that has not moved for longer than a threshold. */
export interface StuckWork {
  /** Requests pending or running, not updated since the threshold (oldest first). */
  requests: RequestRecord[];
  /** Replies not delivered (nor given up) since the threshold (oldest first). */
  outbound: OutboundRecord[];
  /** Approvals still pending since the threshold (oldest first). */
  approvals: ApprovalRecord[];
}

/** The gauges of GET /metrics, read in one go at scrape time. */
export interface OperationalCounts {
  /** Sessions with frames on their stack. */
  activeStacks: number;
  /** Requests waiting to run (pending). */
  queuedMessages: number;
  pendingApprovals: number;
  /** Replies the platform refused for good. */
  undeliverable: number;
  /** Replies committed but not yet delivered. */
  outboxBacklog: number;
}

export interface OperationsStore {
  /** Up to `limit` sessions, the most recently active first. */
  recentSessions(limit: number): Promise<SessionSummary[]>;
  /** The summary of one session; null when it does not exist. */
  sessionSummary(sessionKey: string): Promise<SessionSummary | null>;
  /** Pending approvals of every session, oldest first. */
  allPendingApprovals(): Promise<ApprovalRecord[]>;
  /** What has not progressed since `before` (epoch ms), at most `limit` of each kind. */
  stuckWork(before: number, limit: number): Promise<StuckWork>;
  /** The session's newest failures (failed requests and tasks, undeliverable replies), at most `limit`. */
  recentErrors(sessionKey: string, limit: number): Promise<SessionError[]>;
  operationalCounts(): Promise<OperationalCounts>;
  /** Rows set aside because they could not be read, newest first. */
  quarantined(): Promise<QuarantineRecord[]>;
}
