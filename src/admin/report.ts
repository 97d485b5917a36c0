// The operator's views (npm run admin, the /admin page): plain JSON-able objects read from the store only. Both
// the terminal and the page render these; neither asks the store anything else.

import type { ApprovalRecord, OutboundRecord, RequestRecord, Store, TaskStatus } from "../store/store.js";
import { CorruptStateError } from "../store/store.js";
import type { OperationalCounts, SessionError, SessionSummary } from "../store/store.js";
import { clip } from "./text.js";
import { usageView, type UserUsageItem } from "./usage.js";

export { formatApprovals, formatSession, formatSessions, formatStuck } from "./format.js";
export { usageView, type UserUsageItem } from "./usage.js";

/** How much of a tool's input a view carries: enough to recognise the call, not a whole document. */
const INPUT_CHARS = 200;

export interface SessionRow {
  key: string;
  provider: string;
  owner: string | null;
  /** Agent names on the stack, bottom first. */
  stack: string[];
  status: TaskStatus | "idle";
  taskId: string | null;
  lastActivity: number;
  costUsd: number;
  tokens: number;
  pendingApprovals: number;
}

export interface ApprovalItem {
  id: string;
  sessionKey: string;
  /** The task the call belongs to, and the request whose turn it paused. */
  taskId: string | null;
  requestId: string | null;
  tool: string;
  agent: string;
  owner: string;
  /** The tool's input as JSON, clipped. */
  input: string;
  requestedAt: number;
  expiresAt: number;
  ageMs: number;
}

export interface FrameItem {
  agent: string;
  type: "main" | "skill" | "agent";
  model: string;
  iteration: number;
  maxIterations: number;
  /** 1 for the main agent, 2 for what it handed over to, … */
  depth: number;
}

export interface TaskItem {
  id: string;
  status: TaskStatus;
  owner: string;
  createdAt: number;
  updatedAt: number;
  costUsd: number;
  tokens: number;
}

export interface SessionDetail {
  session: SessionRow;
  frames: FrameItem[];
  /** Why the stack could not be read, when it could not. */
  framesProblem: string | null;
  task: TaskItem | null;
  approvals: ApprovalItem[];
  errors: SessionError[];
}

export interface StuckRequestItem {
  id: string;
  sessionKey: string;
  kind: RequestRecord["kind"];
  status: RequestRecord["status"];
  user: string;
  updatedAt: number;
  ageMs: number;
}

export interface StuckReplyItem {
  id: string;
  sessionKey: string;
  agent: string;
  kind: OutboundRecord["kind"];
  createdAt: number;
  ageMs: number;
}

export interface StuckView {
  olderThanMs: number;
  requests: StuckRequestItem[];
  outbound: StuckReplyItem[];
  approvals: ApprovalItem[];
}

/** Everything the live page shows at once. */
export interface Snapshot {
  at: number;
  counts: OperationalCounts;
  sessions: SessionRow[];
  approvals: ApprovalItem[];
  stuck: StuckView;
  /** Each user's use on their current day (the daily quotas' counters). */
  usage: UserUsageItem[];
}

/** The roles the operator views read. */
export type ReportStore = Pick<Store, "operations" | "approvals" | "steps" | "tasks" | "usage">;

export async function sessionsView(store: ReportStore, options: { limit: number }): Promise<{ sessions: SessionRow[] }> {
  return { sessions: (await store.operations.recentSessions(options.limit)).map(sessionRow) };
}

/** One session in full; null when there is no such session. */
export async function sessionView(store: ReportStore, key: string, options: { now?: number } = {}): Promise<SessionDetail | null> {
  const now = options.now ?? Date.now();
  const summary = await store.operations.sessionSummary(key);
  if (!summary) return null;
  let frames: FrameItem[] = [];
  let framesProblem: string | null = null;
  try {
    frames = (await store.steps.frames(key)).map((f, i) => ({
      agent: f.agentName,
      type: f.agentType,
      model: f.model,
      iteration: f.iteration,
      maxIterations: f.maxIterations,
      depth: i + 1,
    }));
  } catch (error) {
    if (!(error instanceof CorruptStateError)) throw error;
    framesProblem = error.message;
  }
  const active = await store.tasks.active(key);
  let task: TaskItem | null = null;
  if (active) {
    const usage = await store.tasks.usage(active.id);
    task = {
      id: active.id,
      status: active.status,
      owner: active.ownerId,
      createdAt: active.createdAt,
      updatedAt: active.updatedAt,
      costUsd: usage.costUsd,
      tokens: usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
    };
  }
  const approvals = (await store.approvals.pending(key)).map((a) => approvalItem(a, now));
  return { session: sessionRow(summary), frames, framesProblem, task, approvals, errors: await store.operations.recentErrors(key, 10) };
}

/** Every pending approval, oldest first. */
export async function approvalsView(store: ReportStore, options: { now?: number } = {}): Promise<{ approvals: ApprovalItem[] }> {
  const now = options.now ?? Date.now();
  const approvals = (await store.operations.allPendingApprovals()).sort((a, b) => a.requestedAt - b.requestedAt);
  return { approvals: approvals.map((a) => approvalItem(a, now)) };
}

/** Requests, replies and approvals that have not moved for `olderThanMs`. */
export async function stuckView(store: ReportStore, options: { olderThanMs: number; now?: number }): Promise<StuckView> {
  const now = options.now ?? Date.now();
  const stuck = await store.operations.stuckWork(now - options.olderThanMs, 100);
  return {
    olderThanMs: options.olderThanMs,
    requests: stuck.requests.map((r) => ({
      id: r.id,
      sessionKey: r.sessionKey,
      kind: r.kind,
      status: r.status,
      user: r.userId,
      updatedAt: r.updatedAt,
      ageMs: now - r.updatedAt,
    })),
    outbound: stuck.outbound.map((o) => ({ id: o.id, sessionKey: o.sessionKey, agent: o.agent, kind: o.kind, createdAt: o.createdAt, ageMs: now - o.createdAt })),
    approvals: stuck.approvals.map((a) => approvalItem(a, now)),
  };
}

export async function snapshot(store: ReportStore, options: { limit: number; stuckAfterMs: number; now?: number }): Promise<Snapshot> {
  const now = options.now ?? Date.now();
  const [counts, sessions, approvals, stuck, usage] = await Promise.all([
    store.operations.operationalCounts(),
    sessionsView(store, { limit: options.limit }),
    approvalsView(store, { now }),
    stuckView(store, { olderThanMs: options.stuckAfterMs, now }),
    usageView(store, { now, limit: options.limit }),
  ]);
  return { at: now, counts, sessions: sessions.sessions, approvals: approvals.approvals, stuck, usage: usage.users };
}

function sessionRow(s: SessionSummary): SessionRow {
  return {
    key: s.key,
    provider: s.provider,
    owner: s.ownerId,
    stack: s.stack,
    status: s.status,
    taskId: s.taskId,
    lastActivity: s.lastActivity,
    costUsd: s.costUsd,
    tokens: s.tokens,
    pendingApprovals: s.pendingApprovals,
  };
}

function approvalItem(a: ApprovalRecord, now: number): ApprovalItem {
  return {
    id: a.id,
    sessionKey: a.sessionKey,
    taskId: a.taskId,
    requestId: a.requestId,
    tool: a.toolName,
    agent: a.agent,
    owner: a.ownerId,
    input: summarise(a.input),
    requestedAt: a.requestedAt,
    expiresAt: a.expiresAt,
    ageMs: now - a.requestedAt,
  };
}

/** A tool's input in one line of JSON, clipped. */
function summarise(input: Record<string, unknown>): string {
  let json: string;
  try {
    json = JSON.stringify(input) ?? "";
  } catch {
    json = "(not JSON)";
  }
  return clip(json, INPUT_CHARS);
}
