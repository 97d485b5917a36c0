import type { FailureCode, Store } from "../store/store.js";
import type { AgentStack } from "./frame.js";
import type { Journal } from "./journal.js";
import type { RuntimeDeps } from "./orchestrator.js";
import { closeOpenSessions, closeUnresolved, finishFrame } from "./transitions.js";

/**
 * Ends every frame of a task at once (a /cancel, a /reset, a spent budget): top first, what each frame waits on gets
 * `reason` as an error result (so main's history stays well-formed for the next task), each child's agent session
 * ends as an error, the batch runs cut off with them (never on the stack) are closed, and approvals still waiting can
 * no longer be used. Only the journal is written: the caller commits it with the task's end, and then clears the stack.
 * Returns the frames to pop and the agents stopped, outermost first.
 */
export async function closeStack(
  store: Pick<Store, "approvals" | "steps">,
  journal: Journal,
  stack: AgentStack,
  reason: string,
  approvals: PendingEnd = DENIED,
): Promise<{ popped: string[]; stopped: string[] }> {
  const frames = [...stack.all()];
  const stopped: string[] = [];
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i]!;
    closeUnresolved(frame, journal, reason);
    if (frame.agentType !== "main") {
      finishFrame(journal, frame, reason, true);
      stopped.push(frame.agentName);
    }
  }
  await endPending(store, journal.sessionKey, approvals);
  await closeOpenSessions(store, journal, new Set(frames.map((f) => f.agentSessionId)), reason);
  return { popped: frames.map((f) => f.frameId), stopped: stopped.reverse() };
}

/** What becomes of the approvals still waiting when a task ends early: denied by a cancel, withdrawn at expiry. */
export interface PendingEnd {
  status: "denied" | "withdrawn";
  by: string;
}

const DENIED: PendingEnd = { status: "denied", by: "cancelled" };

/** Approvals still waiting can no longer be used: a late click is told it was already decided. */
export async function endPending(store: Pick<Store, "approvals">, sessionKey: string, end: PendingEnd = DENIED): Promise<void> {
  for (const approval of await store.approvals.pending(sessionKey)) await store.approvals.decide(approval.id, end.status, end.by);
}

/**
 * The session's budget ran out in the middle of a request (a model call was refused): the task ends here, failed,
 * every frame closed as closeStack does, and the user is told why and what to do. Returns the agents stopped.
 */
export async function endOverBudget(
  deps: Pick<RuntimeDeps, "store" | "stacks" | "ids">,
  journal: Journal,
  stack: AgentStack,
  reason: string,
  code: Extract<FailureCode, "budget" | "quota">,
  closing = "stopped: this conversation's budget is spent",
): Promise<string[]> {
  const { popped, stopped } = await closeStack(deps.store, journal, stack, closing);
  const text = `I had to stop before finishing. ${reason}`;
  try {
    await journal.flush({
      framesPopped: popped,
      ...(journal.taskId ? { task: { id: journal.taskId, status: "failed" as const, error: reason } } : {}),
      ...(journal.requestId ? { request: { id: journal.requestId, status: "failed" as const, error: reason, errorCode: code } } : {}),
      outbound: [{ id: deps.ids.next("out"), requestId: journal.requestId, taskId: journal.taskId, agent: "switchboard", depth: 0, text, kind: "error" }],
    });
  } finally {
    // After the commit: a reader (/status) that loads the stack meanwhile must not cache the one being ended.
    deps.stacks.taskEnded(journal.sessionKey);
  }
  return stopped;
}
