import type { ChatMessage } from "../llm/types.js";
import type { FrameRecord } from "../store/store.js";

export type AgentType = FrameRecord["agentType"];

/** One agent's paused-or-running state on the stack: its metadata plus its model history. */
export interface StackFrame extends FrameRecord {
  history: ChatMessage[];
}

export function toRecord(frame: StackFrame): FrameRecord {
  const { history: _history, ...record } = frame;
  return record;
}

export class AgentStack {
  private readonly frames: StackFrame[];

  constructor(frames: StackFrame[] = []) {
    this.frames = [...frames];
  }
  push(frame: StackFrame): void {
    this.frames.push(frame);
  }
  pop(): StackFrame {
    const frame = this.frames.pop();
    if (!frame) throw new Error("pop on an empty agent stack");
    return frame;
  }
  get top(): StackFrame | undefined {
    return this.frames[this.frames.length - 1];
  }
  get depth(): number {
    return this.frames.length;
  }
  get isEmpty(): boolean {
    return this.frames.length === 0;
  }
  /** Bottom (main) first. */
  all(): readonly StackFrame[] {
    return this.frames;
  }
  clear(): void {
    this.frames.length = 0;
  }
}

export const TurnAction = {
  SEND_TEXT: "SEND_TEXT",
  COMPLETE: "COMPLETE",
  CHILD_ACTIVATED: "CHILD_ACTIVATED",
  /** Reserved for approvals (human in the loop). */
  INTERRUPT: "INTERRUPT",
  MAX_ITERATIONS: "MAX_ITERATIONS",
  ERROR: "ERROR",
} as const;
export type TurnAction = (typeof TurnAction)[keyof typeof TurnAction];

export type TurnResult =
  | { action: "SEND_TEXT"; text: string }
  /** `structured` is the validated report_back value; `text` is then its JSON. */
  | { action: "COMPLETE"; text: string; structured?: Record<string, unknown> }
  | { action: "CHILD_ACTIVATED"; child: StackFrame }
  /** Tool calls wait for the owner's approval; `approvals` are the ones asked for the first time. */
  | { action: "INTERRUPT"; text: string; approvals: Array<{ id: string; toolUseId: string; toolName: string; input: Record<string, unknown> }> }
  | { action: "MAX_ITERATIONS"; text: string }
  | { action: "ERROR"; text: string };

/**
 * Thrown by a tool that hands the conversation to a child. Tool code in TypeScript can catch
 * anything, so the tool runner also remembers the activation and re-throws it (see tools/runner.ts).
 */
export class ChildActivated extends Error {
  override name = "ChildActivated";
  constructor(readonly child: StackFrame) {
    super(`child ${child.agentName} activated`);
  }
}
