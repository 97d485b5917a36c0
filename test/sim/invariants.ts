import type { ChatMessage } from "../../src/llm/types.js";
import type { AgentStack } from "../../src/runtime/frame.js";
import { toRecord } from "../../src/runtime/frame.js";
import { rebuildHistory } from "../../src/runtime/history.js";
import type { FrameRecord, LogEntry, LogEntryInput, Store } from "../../src/store/store.js";
import type { SimStep } from "./sim-store.js";
import type { Outside } from "./world.js";

/** A stack as comparable text: frame records plus their histories. */
export function serializeStack(frames: ReadonlyArray<FrameRecord & { history: ChatMessage[] }>): string {
  return JSON.stringify(frames.map((f) => ({ ...toRecord(f), history: f.history })));
}

export async function storedStack(store: Store, key: string): Promise<string> {
  const frames = await store.steps.frames(key);
  const histories = await Promise.all(frames.map((r) => store.steps.history(key, r.agentSessionId)));
  return serializeStack(frames.map((r, i) => ({ ...r, history: rebuildHistory(histories[i]!) })));
}

/**
 * The invariants, checked after every committed step and at the end of a scenario. Each returns
 * plain sentences; the runner adds the seed and the replay command.
 */
export class Checker {
  readonly violations: string[] = [];
  /** tool_use ids seen per agent session, and how many results each got. */
  private readonly uses = new Map<string, Map<string, number>>();
  /** The in-memory stack at its last stack-changing commit, per session (compared after a restart). */
  readonly lastStack = new Map<string, string>();
  /** The committed "tool about to run" mark per agent session, and every tool use whose result is committed. */
  private readonly marks = new Map<string, string>();
  private readonly results = new Set<string>();

  constructor(private readonly callDepthMax: number) {}

  private report(message: string): void {
    if (!this.violations.includes(message)) this.violations.push(message);
  }

  async afterCommit(store: Store, cached: AgentStack | undefined, step: SimStep): Promise<void> {
    for (const row of step.log ?? []) this.track(row);
    this.trackMarks(step);
    const changesStack = (step.log?.length ?? 0) > 0 || step.framesPushed?.length || step.framesPopped?.length || step.framesUpdated?.length;
    if (!changesStack) return;
    // The stack in memory as the step left it (the turn waits for this check before it goes on). Recorded
    // before the reads below: if the process dies while they run, the step still committed.
    const memory = cached ? serializeStack(cached.all()) : null;
    // Only a step that touches the stack says what its durable state is: another writer's step (a batch run whose
    // caller gave up, closing itself with its own journal) may land while the turn has changes not yet committed.
    const inMemory = new Set((cached?.all() ?? []).map((f) => f.agentSessionId));
    const touchesMemory =
      step.framesPushed?.length ||
      step.framesPopped?.length ||
      (step.framesUpdated ?? []).some((f) => inMemory.has(f.agentSessionId)) ||
      (step.log ?? []).some((r) => r.agentSessionId !== null && inMemory.has(r.agentSessionId));
    if (memory === null) this.lastStack.delete(step.sessionKey);
    else if (touchesMemory) this.lastStack.set(step.sessionKey, memory);
    const frames = await store.steps.frames(step.sessionKey);
    if (frames.length - 1 > this.callDepthMax) {
      this.report(`stack depth: ${step.sessionKey} has ${frames.length - 1} frames below main, over the limit ${this.callDepthMax}`);
    }
    for (const frame of frames) {
      if (new Set(frame.callChain).size !== frame.callChain.length) {
        this.report(`no agent twice in a chain: ${frame.agentName} in ${step.sessionKey} has the chain ${frame.callChain.join(" → ")}`);
      }
    }
    // A commit that touches neither the stack's frames nor their histories (a batch run whose caller gave up, closing
    // itself in the log while the caller is mid-step) leaves the stack as it was; the caller's own next step is checked.
    const onStack = new Set(frames.map((f) => f.agentSessionId));
    // (A batch frame's own row update is not the stack's: batch frames are never on it.)
    const touchesStack =
      step.framesPushed?.length ||
      step.framesPopped?.length ||
      (step.framesUpdated ?? []).some((f) => onStack.has(f.agentSessionId)) ||
      (step.log ?? []).some((r) => r.agentSessionId !== null && onStack.has(r.agentSessionId));
    if (memory !== null && touchesStack) {
      const durable = await storedStack(store, step.sessionKey);
      if (memory !== durable) this.report(`durability: the stack in memory of ${step.sessionKey} differs from the committed one after a step`);
    }
  }

  /**
   * A frame's "tool about to run" mark may leave the disk only with (or after) that tool's result: a mark
   * cleared alone means a restart would find the call open and unmarked, and run it again.
   */
  private trackMarks(step: SimStep): void {
    for (const row of step.log ?? []) if (row.type === "tool_result") this.results.add((row.payload as { tool_use_id: string }).tool_use_id);
    for (const frame of [...(step.framesPushed ?? []), ...(step.framesUpdated ?? [])]) {
      const marked = this.marks.get(frame.agentSessionId);
      if (marked && frame.runningToolUseId !== marked && !this.results.has(marked)) {
        this.report(`tool mark: the running mark of ${marked} (${frame.agentName} in ${step.sessionKey}) was cleared on disk before its result was written`);
      }
      if (frame.runningToolUseId) this.marks.set(frame.agentSessionId, frame.runningToolUseId);
      else this.marks.delete(frame.agentSessionId);
    }
  }

  private track(row: LogEntryInput): void {
    const session = row.agentSessionId ?? "(none)";
    const uses = this.uses.get(session) ?? new Map<string, number>();
    this.uses.set(session, uses);
    if (row.type === "message") {
      const payload = row.payload as { role: string; content: Array<{ type: string; id?: string }> };
      if (payload.role === "assistant") for (const b of payload.content) if (b.type === "tool_use") uses.set(b.id!, uses.get(b.id!) ?? 0);
    } else if (row.type === "tool_result") {
      const id = (row.payload as { tool_use_id: string }).tool_use_id;
      const count = uses.get(id);
      if (count === undefined) this.report(`tool pairing: a tool_result for ${id} in ${session} has no tool_use`);
      else if (count >= 1) this.report(`tool pairing: ${id} in ${session} got more than one tool_result`);
      uses.set(id, (count ?? 0) + 1);
    }
  }

  /** After a restart, before anything runs: each rebuilt stack equals the last one in memory. */
  async afterRestart(store: Store, load: (key: string) => Promise<AgentStack>): Promise<void> {
    for (const [key, before] of this.lastStack) {
      const after = serializeStack((await load(key)).all());
      if (after !== before) this.report(`restart: the rebuilt stack of ${key} differs from the stack before the crash`);
    }
  }

  /** Once everything is idle. */
  async atEnd(store: Store, sessions: string[], outside: Outside, messages: ReadonlyArray<{ text: string; accepted: boolean }>): Promise<void> {
    const allRows: LogEntry[] = (await Promise.all(sessions.map((key) => store.steps.log(key)))).flat();
    const requests = (await Promise.all(sessions.map((key) => requestsOf(store, key)))).flat();
    for (const r of requests) {
      if (r.status !== "done" && r.status !== "failed") this.report(`no hang: request ${r.id} is still ${r.status}`);
    }
    for (const key of sessions) {
      const task = await store.tasks.active(key);
      const waitsForApproval = task?.status === "waiting_approval" && (await store.approvals.pending(key)).length > 0;
      if (task && task.status !== "waiting_user" && !waitsForApproval) this.report(`no hang: task ${task.id} of ${key} was left ${task.status}`);
      if (task && (await store.steps.frames(key)).length === 0) this.report(`no hang: task ${task.id} of ${key} waits with an empty stack`);
    }
    for (const m of messages) {
      const stored = requests.filter((r) => r.text === m.text).length;
      const processed = allRows.filter(
        (e) =>
          e.type === "message" &&
          (e.payload as { role: string; content: Array<{ text?: string }> }).role === "user" &&
          (e.payload as { content: Array<{ text?: string }> }).content[0]?.text === m.text,
      ).length;
      if (m.accepted && stored !== 1) this.report(`exactly once: the message "${m.text}" became ${stored} requests`);
      if (processed > 1) this.report(`exactly once: the message "${m.text}" reached an agent ${processed} times`);
    }
    for (const [use, count] of outside.runs) {
      if (count > 1) this.report(`side effects: the tool call ${use} ran ${count} times`);
    }
    const seen = new Set<string>();
    for (const d of outside.delivered) {
      if (seen.has(d.id)) this.report(`no reply twice: ${d.id} ("${d.text}") was delivered more than once`);
      seen.add(d.id);
    }
    for (const key of sessions) {
      const live = await store.steps.frames(key);
      // A frame below the top waits for its child: its spawning tool use and any after it are answered later.
      const waiting = new Set(live.slice(0, -1).map((f) => f.agentSessionId));
      const liveSessions = new Set(live.map((f) => f.agentSessionId));
      const rows = await store.steps.log(key);
      const used = new Map<string, { session: string; task: string | null; name: string; input: Record<string, unknown> }>();
      const answered = new Set<string>();
      for (const row of rows) {
        if (row.type === "message" && (row.payload as { role: string }).role === "assistant") {
          for (const b of (row.payload as { content: Array<{ type: string; id?: string; name?: string; input?: Record<string, unknown> }> }).content) {
            if (b.type === "tool_use") used.set(b.id!, { session: row.agentSessionId ?? "", task: row.taskId, name: b.name!, input: b.input ?? {} });
          }
        }
        if (row.type === "tool_result") answered.add((row.payload as { tool_use_id: string }).tool_use_id);
      }
      for (const [id, { session, task, name, input }] of used) {
        // Open while its owner has not decided (approval pending), or while its frame waits for a child.
        const awaitingDecision = (await store.approvals.forCall({ id, name, input }, { sessionKey: key, taskId: task }))?.status === "pending";
        if (!answered.has(id) && !waiting.has(session) && !awaitingDecision) this.report(`tool pairing: ${id} in ${key} never got a tool_result`);
      }
      const started = rows.filter((r) => r.type === "agent_session").map((r) => r.agentSessionId!);
      const ended = new Set(rows.filter((r) => r.type === "agent_session_complete").map((r) => r.agentSessionId!));
      for (const id of started) {
        if (!ended.has(id) && !liveSessions.has(id)) this.report(`agent sessions: ${id} in ${key} was started and never ended`);
      }
    }
  }
}

function requestsOf(store: Store, key: string) {
  return store.requests.ofSession(key);
}
