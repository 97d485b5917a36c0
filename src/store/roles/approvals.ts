// The approvals role: a tool call waiting for its owner's decision. A step creates approvals (StepStore); a decision
// is a compare-and-set on the row, taken by whichever replica hears it, so it needs no lease.
import type { NewRequest } from "./requests.js";

/**
 * `expired`: nobody decided in time (counts as denied). `withdrawn`: its task expired first, so it can no longer be
 * decided. `quarantined`: the stored row could not be read and was taken out of play.
 */
export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "withdrawn" | "quarantined";

/** What a decision may set: any final status but the store's own `quarantined`. */
export type ApprovalDecision = Exclude<ApprovalStatus, "pending" | "quarantined">;

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

export interface ApprovalStore {
  /** The approval asked for exactly this call (id, tool and input) in this session and task, if any. */
  forCall(call: ToolCallRef, scope: ApprovalScope): Promise<ApprovalRecord | null>;
  get(id: string): Promise<ApprovalRecord | null>;
  pending(sessionKey: string): Promise<ApprovalRecord[]>;
  /**
   * Moves a pending approval to `status`: an atomic compare-and-set, so of two racing decisions exactly one
   * wins. Returns false when it was no longer pending.
   */
  decide(id: string, status: ApprovalDecision, decidedBy: string): Promise<boolean>;
  /**
   * The same compare-and-set, and — only if it wins — the request that resumes the waiting turn, in one
   * transaction: a crash can never leave a decided approval without its resume.
   */
  decideAndResume(id: string, status: ApprovalDecision, decidedBy: string, resume: NewRequest): Promise<boolean>;
  /** Pending approvals whose time is up (expires_at ≤ now). */
  due(now: number): Promise<ApprovalRecord[]>;
}
