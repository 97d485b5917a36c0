import { formatUsd } from "../llm/prices.js";
import { CorruptStateError, type FailureCode, type RequestRecord, type SessionWriter, type TaskRecord } from "../store/store.js";
import { contextLimit, contextUsage } from "./compaction.js";
import { systemClock } from "./deps.js";
import { Journal, type StepExtra } from "./journal.js";
import type { Orchestrator, RuntimeDeps } from "./orchestrator.js";
import { closeStack, endPending } from "./stop-task.js";
import { taskEnd } from "./task-end.js";
import { closeOpenSessions, closeUnresolved } from "./transitions.js";

// The chat commands' effects on the stack. Each writes its reply and the request's end in the
// same transaction as the change itself.

const SYSTEM = "switchboard";

/** How a task is ended before it finished: the status it takes, what its open calls are told, its approvals' fate. */
interface Ending {
  status: "cancelled" | "expired";
  /** What the requests it cuts off fail with: the words, and the code. */
  reason: string;
  code: Extract<FailureCode, "cancelled" | "expired">;
  approvals: { status: "denied" | "withdrawn"; by: string };
}

const CANCELLED: Ending = { status: "cancelled", reason: "cancelled by the user", code: "cancelled", approvals: { status: "denied", by: "cancelled" } };

/** Closes every open frame as an error (top first) and ends the task as `end` says; the caller flushes. */
async function unwind(
  deps: RuntimeDeps,
  orchestrator: Orchestrator,
  journal: Journal,
  request: RequestRecord,
  end: Ending = CANCELLED,
): Promise<{ stopped: string[]; commit: StepExtra }> {
  const sessionKey = request.sessionKey;
  const task = await deps.store.tasks.active(sessionKey);
  const loaded = await loadStack(deps, sessionKey);
  if (!loaded.ok) {
    // The stack cannot be read back: it cannot be unwound frame by frame either. Set it aside whole (kept in
    // the quarantine table for the admin) so /cancel and /reset always get the chat going again.
    deps.log.error({ session: sessionKey, task: task?.id, err: loaded.error }, "stack unreadable: quarantined its frames and ended the task");
    await closeWithoutStack(deps, orchestrator, journal, end.reason);
    await endPending(deps.store, sessionKey, end.approvals);
    deps.stacks.invalidate(sessionKey);
    return {
      stopped: [],
      commit: {
        requestsClosed: await interrupted(deps, request, end),
        framesQuarantined: { reason: loaded.error.message },
        ...(task ? { task: { id: task.id, status: end.status, error: "its stored state was unreadable" } } : {}),
      },
    };
  }
  const { popped, stopped } = await closeStack(deps.store, journal, loaded.stack, end.reason, end.approvals);
  deps.stacks.taskEnded(sessionKey);
  if (popped.length > 0) {
    const ended = task ? taskEnd(deps.clock, end.status, task.createdAt) : {};
    deps.log.info({ session: sessionKey, task: task?.id, stopped, depth: 0, ...ended }, `task ${end.status}: stack cleared`);
  }
  return {
    stopped,
    commit: {
      requestsClosed: await interrupted(deps, request, end),
      framesPopped: popped,
      ...(task ? { task: { id: task.id, status: end.status, error: end.reason } } : {}),
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

/** `cutOff`: the /cancel already stopped a turn that had not committed anything yet (a task's very first one). */
export async function cancelTask(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord, writer: SessionWriter, cutOff = false): Promise<string> {
  const key = request.sessionKey;
  const journal = Journal.of(writer, request, (await deps.store.tasks.active(key))?.id ?? null);
  const loaded = await loadStack(deps, key);
  const active = cutOff || !loaded.ok || !loaded.stack.isEmpty;
  const { stopped, commit } = await unwind(deps, orchestrator, journal, request);
  const text = !active ? "Nothing to cancel: no task is running." : stopped.length ? `Cancelled. Stopped: ${stopped.join(", ")}.` : "Cancelled.";
  await journal.flush({
    ...commit,
    request: { id: request.id, status: "done" },
    outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")],
  });
  return text;
}

/** Turns cut off by the cancel: they must not resume after a restart. */
async function interrupted(deps: RuntimeDeps, request: RequestRecord, end: Ending): Promise<StepExtra["requestsClosed"]> {
  return (await deps.store.requests.running(request.sessionKey))
    .filter((r) => r.id !== request.id)
    .map((r) => ({ id: r.id, status: "failed" as const, error: end.reason, errorCode: end.code }));
}

/** What a request for a task past its expiry fails with (the HTTP API answers it with 410). */
export function taskExpiredText(expiresAt: number): string {
  return `This task expired at ${new Date(expiresAt).toISOString()}, so I ended it instead of going on. Send a new message to start a new task.`;
}

/**
 * Whether a new request may carry on `task`: one that comes after the task's expiry ends the task instead
 * (expireTask), and one that asks for a task of its own (an expiry, metadata) does not join a task under way. Returns
 * what answers the request then, or null (decided at once, so a request that carries on waits for nothing).
 */
export function refusalFor(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord, task: TaskRecord, journal: Journal): (() => Promise<unknown>) | null {
  if (request.status !== "pending") return null;
  const expiresAt = task.expiresAt;
  if (expiresAt !== null && expiresAt <= (deps.clock ?? systemClock).now()) return () => expireTask(deps, orchestrator, request, journal.writer, { ...task, expiresAt });
  if (!request.taskOptions) return null;
  const text = `Sorry, this message sets an expiry or metadata for a new task, but task ${task.id} is still under way here. Finish or cancel it first.`;
  return () =>
    journal.flush({
      request: { id: request.id, status: "failed", error: text, errorCode: "task_under_way" },
      outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "error")],
    });
}

/**
 * Ends the session's task as expired: `request` (a message or a decision for it) came after its expiry. The task
 * stops where it was, its pending approvals are withdrawn, and the request fails, saying so.
 */
export async function expireTask(
  deps: RuntimeDeps,
  orchestrator: Orchestrator,
  request: RequestRecord,
  writer: SessionWriter,
  task: TaskRecord & { expiresAt: number },
): Promise<string> {
  const journal = Journal.of(writer, request, task.id);
  const end: Ending = { status: "expired", reason: "the task expired", code: "expired", approvals: { status: "withdrawn", by: "task-expired" } };
  const { commit } = await unwind(deps, orchestrator, journal, request, end);
  const text = taskExpiredText(task.expiresAt);
  await journal.flush({
    ...commit,
    request: { id: request.id, status: "failed", taskId: task.id, error: text, errorCode: "expired" },
    outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "error")],
  });
  deps.log.info({ session: request.sessionKey, task: task.id, request: request.id }, "task expired");
  return text;
}

/** `main → skill:research (iteration 3/25)` */
export async function describeStack(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord, writer: SessionWriter): Promise<string> {
  const { store, stacks } = deps;
  const stack = await stacks.getOrLoad(request.sessionKey);
  const task = await store.tasks.active(request.sessionKey);
  const journal = Journal.of(writer, request, task?.id ?? null);
  let text: string;
  if (stack.isEmpty) {
    text = "Idle: no task is running. Send a message to start one.";
  } else {
    const top = stack.top!;
    text = `${stack
      .all()
      .map((f) => f.agentName)
      .join(" → ")} (iteration ${top.iteration}/${top.maxIterations})`;
    if (task) text += `\ntask ${task.id}: ${task.status.replace("_", " ")}`;
  }
  const lost = await store.outbox.undeliverable(request.sessionKey);
  if (lost.length > 0) {
    text += `\n${lost.length} ${lost.length === 1 ? "reply" : "replies"} could not be delivered (last: ${lost.at(-1)!.failure}).`;
  }
  await journal.flush({ request: { id: request.id, status: "done" }, outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")] });
  return text;
}

/** Cancels what runs and starts a fresh main-agent history for the session. */
export async function resetSession(deps: RuntimeDeps, orchestrator: Orchestrator, request: RequestRecord, writer: SessionWriter): Promise<string> {
  const key = request.sessionKey;
  await deps.store.sessions.open(key, () => deps.ids.next("as"));
  const journal = Journal.of(writer, request, (await deps.store.tasks.active(key))?.id ?? null);
  const { stopped, commit } = await unwind(deps, orchestrator, journal, request);
  const fresh = deps.ids.next("as");
  journal.append(null, "session_reset", { main_agent_session_id: fresh });
  const text = (stopped.length ? `Stopped: ${stopped.join(", ")}. ` : "") + "Started a fresh conversation: earlier messages are forgotten.";
  await journal.flush({
    ...commit,
    newMainAgentSessionId: fresh,
    request: { id: request.id, status: "done" },
    outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")],
  });
  return text;
}

/** `/context`: the current frame's tokens against its window, compactions so far, and the session's totals. */
export async function describeContext(
  deps: RuntimeDeps,
  orchestrator: Orchestrator,
  request: RequestRecord,
  writer: SessionWriter,
  budgets: { tokens: number; usd: number },
): Promise<string> {
  const key = request.sessionKey;
  const stack = await deps.stacks.getOrLoad(key);
  const frame = stack.top ?? (await orchestrator.idleMainFrame(key));
  const view = { ...deps, catalog: deps.catalog() };
  const used = contextUsage(frame, view);
  const limit = await contextLimit(frame, deps);
  const compactions = (await deps.store.steps.log(key)).filter((e) => e.type === "compaction").length;
  const u = await deps.store.sessions.usage(key);
  const task = await deps.store.tasks.active(key);
  const n = (x: number) => x.toLocaleString("en-US");
  const lines = [
    `Context (${frame.agentName}): ${n(used)} of ${n(limit)} tokens (${Math.round((used / limit) * 100)}%); compacts at ${Math.round(deps.settings.compactionThreshold * 100)}%.`,
    `Compactions in this conversation: ${compactions}.`,
    `Tokens used: ${n(u.inputTokens)} input, ${n(u.outputTokens)} output, ${n(u.cacheReadTokens)} cache read, ${n(u.cacheWriteTokens)} cache write.`,
    budgets.tokens > 0 ? `Since the last /reset: ${n(u.sinceReset)} of a ${n(budgets.tokens)}-token budget.` : `Since the last /reset: ${n(u.sinceReset)} tokens.`,
    `Cost: ${formatUsd(u.costUsd)} in all; ${formatUsd(u.costSinceResetUsd)} since the last /reset${budgets.usd > 0 ? ` of a ${formatUsd(budgets.usd)} budget` : ""}${task ? `; ${formatUsd((await deps.store.tasks.usage(task.id)).costUsd)} for the current task` : ""}.`,
  ];
  const text = lines.join("\n");
  const journal = Journal.of(writer, request, task?.id ?? null);
  await journal.flush({ request: { id: request.id, status: "done" }, outbound: [orchestrator.outbound(journal, SYSTEM, 0, text, "notice")] });
  return text;
}
