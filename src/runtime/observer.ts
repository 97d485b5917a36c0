import type { ModelRequest, ModelResponse, ToolUseBlock } from "../llm/types.js";
import type { StackFrame } from "./frame.js";

export type Attributes = Record<string, string | number | boolean>;

/**
 * What the runtime tells whoever watches it (traces and metrics, src/telemetry): each frame's turn, model call and
 * tool call, and what happened to the stack, always naming the session it is for (a session runs one request at
 * a time in a process, so that is enough to place it; no async context is needed). It only observes: it never
 * changes what runs. NO_OBSERVER costs a call.
 */
export interface TurnObserver {
  /** One turn of one frame: its model calls and tool runs until it has something for the orchestrator. */
  agentTurn<T>(sessionKey: string, frame: StackFrame, depth: number | undefined, run: () => Promise<T>): Promise<T>;
  /** One model call made for `frame` (the agent's own, or a compaction of its history). */
  modelCall(sessionKey: string, frame: StackFrame, request: ModelRequest, run: () => Promise<ModelResponse>): Promise<ModelResponse>;
  /** One tool call; `outcome` says how it ended ("ok", "error", "handoff" when it handed the chat to a child). */
  toolCall<T>(sessionKey: string, frame: StackFrame, use: ToolUseBlock, run: () => Promise<T>, outcome: (result: T) => ToolOutcome): Promise<T>;
  /** Something that happened in the session's current request: push, pop, compaction, approval, failure. */
  event(sessionKey: string, name: string, attributes: Attributes): void;
  /** The session's current request works on `taskId`, which began where `traceparent` says (absent for a new task). */
  task(sessionKey: string, taskId: string, traceparent: string | undefined): void;
  /** The session's current request's place in the traces, to keep with a task it starts; undefined when not tracing. */
  traceparent(sessionKey: string): string | undefined;
}

export type ToolOutcome = "ok" | "error" | "handoff";

export const NO_OBSERVER: TurnObserver = {
  agentTurn: (_key, _frame, _depth, run) => run(),
  modelCall: (_key, _frame, _request, run) => run(),
  toolCall: (_key, _frame, _use, run) => run(),
  event: () => {},
  task: () => {},
  traceparent: () => undefined,
};
