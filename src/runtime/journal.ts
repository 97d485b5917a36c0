import type { Usage } from "../llm/types.js";
import type { LogEntryInput, LogType, RequestRecord, SessionWriter, StepCommit } from "../store/store.js";
import { toRecord, type StackFrame } from "./frame.js";

export type StepExtra = Omit<StepCommit, "log" | "framesUpdated" | "framesPushed" | "usage"> & {
  framesPushed?: StackFrame[];
};

/**
 * Collects what one step produces (log rows, frame changes, usage) and writes it with the step's
 * stack/task/request changes in one store transaction, so a crash between steps loses or repeats nothing. It writes
 * through the session's writer, so every step is fenced by the lease the turn runs under.
 */
export class Journal {
  private rows: LogEntryInput[] = [];
  private touched = new Map<string, StackFrame>();
  private staged: StepExtra = {};
  private usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costNanoUsd: 0 };

  constructor(
    readonly writer: SessionWriter,
    readonly requestId: string | null,
    public taskId: string | null,
  ) {}

  /** The journal of `request`'s step, written through `writer` (which must be of the request's session). */
  static of(writer: SessionWriter, request: RequestRecord, taskId: string | null): Journal {
    if (writer.sessionKey !== request.sessionKey) {
      throw new Error(`request ${request.id} of ${request.sessionKey} was handed the writer of ${writer.sessionKey}`);
    }
    return new Journal(writer, request.id, taskId);
  }

  get sessionKey(): string {
    return this.writer.sessionKey;
  }

  /** `frame` may be any frame-like owner of the row (a live frame, or just an agent session id). */
  append(frame: { frameId: string | null; agentSessionId: string | null } | null, type: LogType, payload: unknown): void {
    this.rows.push({
      taskId: this.taskId,
      requestId: this.requestId,
      frameId: frame?.frameId ?? null,
      agentSessionId: frame?.agentSessionId ?? null,
      type,
      // A snapshot: the frame keeps changing the arrays it shares with a payload before the flush writes it.
      payload: structuredClone(payload),
    });
  }

  /** The rows appended since the last flush (not yet in the store). */
  pending(): readonly LogEntryInput[] {
    return this.rows;
  }

  /** The frame's metadata (iteration, running tool) changed; it is saved with the next flush. */
  touch(frame: StackFrame): void {
    this.touched.set(frame.frameId, frame);
  }

  addUsage(usage: Usage): void {
    this.usage.inputTokens += usage.inputTokens;
    this.usage.outputTokens += usage.outputTokens;
    this.usage.cacheReadTokens += usage.cacheReadTokens ?? 0;
    this.usage.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    this.usage.costNanoUsd += usage.costNanoUsd ?? 0;
  }

  /** Changes that must land together with the next flush, whoever triggers it. */
  stage(extra: StepExtra): void {
    this.staged = merge(this.staged, extra);
  }

  /** Files staged for the next flush (made by the tool calls of this step, not yet in the store). */
  stagedFiles(): readonly NonNullable<StepExtra["files"]>[number][] {
    return this.staged.files ?? [];
  }

  /** Whether a staged change already closes request `id` (it must not be closed twice in one step). */
  closes(id: string): boolean {
    return (this.staged.requestsClosed ?? []).some((r) => r.id === id);
  }

  async flush(extra: StepExtra = {}): Promise<void> {
    const all = merge(this.staged, extra);
    // A frame pushed and popped in the same step (main answering at once) never needs a row.
    const popped = new Set(all.framesPopped ?? []);
    const pushed = (all.framesPushed ?? []).filter((f) => !popped.has(f.frameId));
    const transient = new Set((all.framesPushed ?? []).filter((f) => popped.has(f.frameId)).map((f) => f.frameId));
    const step: StepCommit = {
      ...all,
      log: this.rows,
      framesPushed: pushed.map(toRecord),
      framesPopped: [...popped].filter((id) => !transient.has(id)),
      framesUpdated: [...this.touched.values()].filter((f) => !pushed.includes(f) && !popped.has(f.frameId)).map(toRecord),
    };
    if (this.requestId && Object.values(this.usage).some((n) => n > 0)) {
      step.usage = { requestId: this.requestId, ...this.usage };
    }
    // Taken before the commit is awaited: what is appended meanwhile (a batch run closing itself on this journal)
    // belongs to the next flush, and is neither written twice nor lost.
    this.rows = [];
    this.touched.clear();
    this.staged = {};
    this.usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costNanoUsd: 0 };
    await this.writer.commit(step);
  }
}

function merge(a: StepExtra, b: StepExtra): StepExtra {
  return {
    ...a,
    ...b,
    // A later status for the same request or task keeps what was staged earlier (e.g. the request's task id).
    ...(a.request && b.request ? { request: { ...a.request, ...b.request } } : {}),
    ...(a.task && b.task ? { task: { ...a.task, ...b.task } } : {}),
    framesPushed: [...(a.framesPushed ?? []), ...(b.framesPushed ?? [])],
    framesPopped: [...(a.framesPopped ?? []), ...(b.framesPopped ?? [])],
    files: [...(a.files ?? []), ...(b.files ?? [])],
    outbound: [...(a.outbound ?? []), ...(b.outbound ?? [])],
    requestsClosed: [...(a.requestsClosed ?? []), ...(b.requestsClosed ?? [])],
  };
}
