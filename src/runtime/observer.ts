import type { ToolUseBlock } from "../llm/types.js";
import type { StackFrame } from "./frame.js";

export type Attributes = Record<string, string | number | boolean>;

/**
 * What the runtime tells whoever watches it (traces and metrics, src/telemetry): each frame's turn, each tool
 * call, and what happened to the stack. It only observes: it never changes what runs. NO_OBSERVER costs a call.
 */
export interface TurnObserver {
  /** One turn of one frame: its model calls and tool runs until it has something for the orchestrator. */
  agentTurn<T>(frame: StackFrame, depth: number | undefined, run: () => Promise<T>): Promise<T>;
  /** One tool call; `outcome` says how it ended ("ok", "error", "handoff" when it handed the chat to a child). */
  toolCall<T>(frame: StackFrame, use: ToolUseBlock, run: () => Promise<T>, outcome: (result: T) => ToolOutcome): Promise<T>;
  /** Something that happened in the current request: push, pop, compaction, approval. */
  event(name: string, attributes: Attributes): void;
  /** The current request works on `taskId`, which began where `traceparent` says (absent for a new task). */
  task(taskId: string, traceparent: string | undefined): void;
  /** The current request's place in the traces, to keep with a task it starts; undefined when not tracing. */
  traceparent(): string | undefined;
}

export type ToolOutcome = "ok" | "error" | "handoff";

export const NO_OBSERVER: TurnObserver = {
  agentTurn: (_frame, _depth, run) => run(),
  toolCall: (_frame, _use, run) => run(),
  event: () => {},
  task: () => {},
  traceparent: () => undefined,
};
