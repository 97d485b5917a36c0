import { formatUsd } from "../llm/prices.js";
import { CorruptStateError, type RequestRecord } from "../store/store.js";
import { contextLimit, contextUsage } from "./compaction.js";
import { Journal, type StepExtra } from "./journal.js";
import type { Orchestrator, RuntimeDeps } from "./orchestrator.js";
import { closeOpenSessions, closeUnresolved, finishFrame } from "./transitions.js";

// The chat commands' effects on the stack. Each writes its reply and the request's end in the
// same transaction as the change itself.

const SYSTEM = "switchboard";

/** Closes every open frame as an error (top first) and cancels the task; the caller flushes. */
async function unwind(deps: RuntimeDeps, orchestrator: Orchestrator, journal: Journal, request: RequestRecord): Promise<{ stopped: string[]; commit: StepExtra }> {
  const sessionKey = request.sessionKey;
  const task = await deps.store.activeTask(sessionKey);
  const loaded = await loadStack(deps, sessionKey);
  if (!loaded.ok) {
    // The stack cannot be read back: it cannot be unwound frame by frame either. Set it aside whole (kept in
    // the quarantine table for the admin) so /cancel and /reset always get the chat going again.
    deps.log.error({ session: sessionKey, task: task?.id, err: loaded.error }, "stack unreadable: quarantined its frames and ended the task");
    await closeWithoutStack(deps, orchestrator, journal, "cancelled by the user");
    await denyPending(deps, sessionKey);
    deps.stacks.evict(sessionKey);
    return {
      stopped: [],
      commit: {
        requestsClosed: await interrupted(deps, request),
        framesQuarantined: { reason: loaded.error.message },
        ...(task ? { task: { id: task.id, status: "cancelled" as const, error: "its stored state was unreadable" } } : {}),
      },
    };
  }
  const stack = loaded.stack;
  const frames = [...stack.all()];
  const stopped: string[] = [];
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i]!;
    // What this frame waits on will never answer; keep its history well-formed for next time.
    closeUnresolved(frame, journal, "cancelled by the user");
    if (frame.agentType !== "main") {
      finishFrame(journal, frame, "cancelled by the user", true);
      stopped.push(frame.agentName);
    }
  }
  await denyPending(deps, sessionKey);
  // Batch runs cut off by the cancel were never on the stack: close them too.
  await closeOpenSessions(deps.store, journal, new Set(frames.map((f) => f.agentSessionId)), "cancelled by the user");
  deps.stacks.clear(sessionKey);
  if (frames.length > 0) {
    deps.log.info({ session: sessionKey, task: task?.id, stopped, depth: 0 }, "task cancelled: stack cleared");
  }
  return {
    stopped: stopped.reverse(),
    commit: {
      requestsClosed: await interrupted(deps, request),
      framesPopped: frames.map((f) => f.frameId),
      ...(task ? { task: { id: task.id, status: "cancelled" as const, error: "cancelled by the user" } } : {}),
    },
  };
}

/**
 * What unwinding does for frames it cannot read: main's calls still waiting are answered (or main would run
 * them again on the next message) and every agent session still open is closed, as far as the log can be read.
 */
async function closeWithoutStack(deps: RuntimeDeps, orchestrator: Orchestrator, journal: Journal, reason: string): Promise<void> {
  try {
    const main = await orchestrator.idleMainFrame(journal.sessionKey);
    closeUnresolved(main, journal, reason);
    await closeOpenSessions(deps.store, journal, new Set([main.agentSessionId]), reason);
  } catch (error) {
    if (!(error instanceof CorruptStateError)) throw error;
    // The log itself is damaged: /reset starts a history that does not read it.
  }
}

async function loadStack(deps: RuntimeDeps, sessionKey: string) {
  try {
    return { ok: true as const, stack: await deps.stacks.getOrLoad(sessionKey) };
  } catch (error) {
    if (error instanceof CorruptStateError) return { ok: false as const, error };
    throw error;
  }
}

export async function cancelTask(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord): Promise<string> {
  const key = request.sessionKey;
  const journal = new Journal(deps.store, key, request.id, (await deps.store.activeTask(key))?.id ?? null);
  const loaded = await loadStack(deps, key);
  const active = !loaded.ok || !loaded.stack.isEmpty;
  const { stopped, commit } = await unwind(deps, orchestrator, journal, request);
  const text = !active
    ? "Nothing to cancel: no task is running."
    : stopped.length
      ? `Cancelled. Stopped: ${stopped.join(", ")}.`
      : "Cancelled.";
  await journal.flush({
    ...commit,
    request: { id: request.id, status: "done" },
    outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")],
  });
  return text;
}

/** Turns cut off by the cancel: they must not resume after a restart. */
async function interrupted(deps: RuntimeDeps, request: RequestRecord): Promise<StepExtra["requestsClosed"]> {
  return (await deps.store.runningRequests(request.sessionKey))
    .filter((r) => r.id !== request.id)
    .map((r) => ({ id: r.id, status: "failed" as const, error: "cancelled by the user" }));
}

/** `main → skill:research (iteration 3/25)` */
export async function describeStack(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord): Promise<string> {
  const { store, stacks } = deps;
  const stack = await stacks.getOrLoad(request.sessionKey);
  const task = await store.activeTask(request.sessionKey);
  const journal = new Journal(store, request.sessionKey, request.id, task?.id ?? null);
  let text: string;
  if (stack.isEmpty) {
    text = "Idle: no task is running. Send a message to start one.";
  } else {
    const top = stack.top!;
    text = `${stack.all().map((f) => f.agentName).join(" → ")} (iteration ${top.iteration}/${top.maxIterations})`;
    if (task) text += `\ntask ${task.id}: ${task.status.replace("_", " ")}`;
  }
  const lost = await store.undeliverable(request.sessionKey);
  if (lost.length > 0) {
    text += `\n${lost.length} ${lost.length === 1 ? "reply" : "replies"} could not be delivered (last: ${lost.at(-1)!.failure}).`;
  }
  await journal.flush({ request: { id: request.id, status: "done" }, outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")] });
  return text;
}

/** Cancels what runs and starts a fresh main-agent history for the session. */
export async function resetSession(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord): Promise<string> {
  const key = request.sessionKey;
  await deps.store.session(key, () => deps.ids.next("as"));
  const journal = new Journal(deps.store, key, request.id, (await deps.store.activeTask(key))?.id ?? null);
  const { stopped, commit } = await unwind(deps, orchestrator, journal, request);
  const fresh = deps.ids.next("as");
  journal.append(null, "session_reset", { main_agent_session_id: fresh });
  const text =
    (stopped.length ? `Stopped: ${stopped.join(", ")}. ` : "") +
    "Started a fresh conversation: earlier messages are forgotten.";
  await journal.flush({
    ...commit,
    newMainAgentSessionId: fresh,
    request: { id: request.id, status: "done" },
    outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")],
  });
  return text;
}

/** `/context`: the current frame's tokens against its window, compactions so far, and the session's totals. */
export async function describeContext(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord, budgets: { tokens: number; usd: number }): Promise<string> {
  const key = request.sessionKey;
  const stack = await deps.stacks.getOrLoad(key);
  const frame = stack.top ?? (await orchestrator.idleMainFrame(key));
  const view = { ...deps, catalog: deps.catalog() };
  const used = contextUsage(frame, view);
  const limit = await contextLimit(frame, deps);
  const compactions = (await deps.store.sessionLog(key)).filter((e) => e.type === "compaction").length;
  const u = await deps.store.sessionUsage(key);
  const task = await deps.store.activeTask(key);
  const n = (x: number) => x.toLocaleString("en-US");
  const lines = [
    `Context (${frame.agentName}): ${n(used)} of ${n(limit)} tokens (${Math.round((used / limit) * 100)}%); compacts at ${Math.round(deps.settings.compactionThreshold * 100)}%.`,
    `Compactions in this conversation: ${compactions}.`,
    `Tokens used: ${n(u.inputTokens)} input, ${n(u.outputTokens)} output, ${n(u.cacheReadTokens)} cache read, ${n(u.cacheWriteTokens)} cache write.`,
    budgets.tokens > 0 ? `Since the last /reset: ${n(u.sinceReset)} of a ${n(budgets.tokens)}-token budget.` : `Since the last /reset: ${n(u.sinceReset)} tokens.`,
    `Cost: ${formatUsd(u.costUsd)} in all; ${formatUsd(u.costSinceResetUsd)} since the last /reset${budgets.usd > 0 ? ` of a ${formatUsd(budgets.usd)} budget` : ""}${task ? `; ${formatUsd((await deps.store.taskUsage(task.id)).costUsd)} for the current task` : ""}.`,
  ];
  const text = lines.join("\n");
  const journal = new Journal(deps.store, key, request.id, task?.id ?? null);
  await journal.flush({ request: { id: request.id, status: "done" }, outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")] });
  return text;
}

/** Approvals still waiting can no longer be used: a late click is told it was already decided. */
async function denyPending(deps: RuntimeDeps, sessionKey: string): Promise<void> {
  for (const approval of await deps.store.pendingApprovals(sessionKey)) await deps.store.decideApproval(approval.id, "denied", "cancelled");
}
