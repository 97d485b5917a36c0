// The steps role: the journal of turns. A step is everything one orchestration step changes (log rows, the stack,
// the task, requests, usage, replies, approvals), written in one transaction; the only way to write one is through
// a SessionWriter, and the only way to get a writer is from a lease the store granted (LeaseStore.acquire). The
// reads are what the runtime needs to rebuild a session's stack.
import type { NewApproval } from "./approvals.js";
import type { NewAgentFile } from "./files.js";
import type { Fence, Lease } from "./leases.js";
import type { OutboundInput } from "./outbox.js";
import type { FailureCode, RequestStatus } from "./requests.js";
import type { TaskOptions, TaskStatus } from "./tasks.js";

export type LogType = "message" | "tool_use" | "tool_result" | "compaction" | "agent_session" | "agent_session_complete" | "approval" | "session_reset";

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

/** A request moved along; one that fails says why, in words for the user and as a code. */
export type RequestChange =
  | { id: string; status: Exclude<RequestStatus, "failed">; taskId?: string | null }
  | { id: string; status: "failed"; taskId?: string | null; error: string; errorCode: FailureCode };

/** Everything one orchestration step of a session changes; written in one transaction by its SessionWriter. */
export interface StepCommit {
  log?: LogEntryInput[];
  framesPushed?: FrameRecord[];
  framesUpdated?: FrameRecord[];
  framesPopped?: string[];
  /** A new task; `options` are its first request's (an expiry, metadata). */
  taskCreated?: { id: string; ownerId: string; requestId: string; options?: TaskOptions | null };
  task?: { id: string; status: TaskStatus; result?: string; error?: string; structuredOutput?: unknown };
  request?: RequestChange;
  /** Other requests ended by this step (a turn that a /cancel interrupted; messages that joined a running turn). */
  requestsClosed?: RequestChange[];
  /** Tokens and cost (in whole nano-USD, so sums are exact) added to the request and its session. */
  usage?: { requestId: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; costNanoUsd: number };
  /**
   * Files a tool made in this step (send_file, an MCP image), stored before `outbound` (which may name them): a
   * crash before the commit leaves neither the file nor the tool result that names it.
   */
  files?: NewAgentFile[];
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
}

/**
 * The right to write one session's state, obtained from a held lease (StepStore.writer). Every step it commits is
 * fenced: the commit checks, in its transaction, that the session's lease still carries this writer's token, and
 * throws FencedError (writing nothing) when another replica has taken it over since.
 */
export interface SessionWriter {
  readonly sessionKey: string;
  readonly fence: Fence;
  commit(step: StepCommit): Promise<void>;
}

export interface StepStore {
  /** The writer for the session `lease` is on. */
  writer(lease: Lease): SessionWriter;
  /** The stack, bottom first. Throws CorruptStateError when a stored frame does not parse. */
  frames(sessionKey: string): Promise<FrameRecord[]>;
  /** Message and tool_result rows of one agent session of the session `sessionKey`, in order. */
  history(sessionKey: string, agentSessionId: string): Promise<LogEntry[]>;
  /** The session's context log, in order. */
  log(sessionKey: string): Promise<LogEntry[]>;
  /** Agent sessions of a chat that were started (agent_session) and never closed (agent_session_complete). */
  openAgentSessions(sessionKey: string): Promise<Array<{ agentSessionId: string; agentName: string }>>;
}

/** The requests a step moves along: its own, then the others it closes. */
export function requestChanges(step: Pick<StepCommit, "request" | "requestsClosed">): RequestChange[] {
  return [...(step.request ? [step.request] : []), ...(step.requestsClosed ?? [])];
}
