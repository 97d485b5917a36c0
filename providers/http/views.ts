import { available, type Catalog, type Definition } from "../../src/gateway/index.js";
import { splitReplies } from "./file-replies.js";
import type { ApiReads, ApprovalRecord, MemoryRecord, RequestRecord, TaskRecord } from "../../src/gateway/index.js";
import { outboundView } from "./request.js";

/** What GET /v1/tasks/{id} returns: status, the stack now, and the task's conversation. */
export async function taskView(store: ApiReads, task: TaskRecord) {
  const active = (await store.activeTask(task.sessionKey))?.id === task.id;
  const stack = active
    ? (await store.frames(task.sessionKey)).map((f, i) => ({ agent: f.agentName, depth: i + 1, iteration: f.iteration, max_iterations: f.maxIterations }))
    : [];
  const log = await store.log(task.sessionKey);
  const agentOf = new Map(log.filter((e) => e.type === "agent_session").map((e) => [e.agentSessionId, (e.payload as { agent_name: string }).agent_name]));
  const history = log
    .filter((e) => e.taskId === task.id && (e.type === "message" || e.type === "agent_session" || e.type === "agent_session_complete"))
    .map((e) => {
      const p = e.payload as { role?: string; content?: Array<{ type: string; text?: string; name?: string }>; agent_name?: string; result?: string; is_error?: boolean };
      if (e.type === "message") {
        return {
          type: "message",
          agent: agentOf.get(e.agentSessionId) ?? "main",
          role: p.role,
          text: (p.content ?? [])
            .filter((b) => b.type === "text")
            .map((b) => b.text)
            .join("\n"),
          tool_calls: (p.content ?? []).filter((b) => b.type === "tool_use").map((b) => b.name),
          at: new Date(e.createdAt).toISOString(),
        };
      }
      return {
        type: e.type,
        agent: p.agent_name,
        ...(e.type === "agent_session_complete" ? { result: p.result, is_error: p.is_error } : {}),
        at: new Date(e.createdAt).toISOString(),
      };
    });
  return {
    task_id: task.id,
    session_id: sessionIdOf(task.sessionKey),
    status: task.status,
    owner: task.ownerId,
    result: task.result,
    error: task.error,
    structured_output: task.structuredOutput ?? null,
    expires_at: task.expiresAt === null ? null : new Date(task.expiresAt).toISOString(),
    metadata: task.metadata,
    stack,
    pending_approvals: (await store.pendingApprovals(task.sessionKey)).filter((a) => a.taskId === task.id).map(approvalView),
    usage: await store.taskUsage(task.id),
    history,
    created_at: new Date(task.createdAt).toISOString(),
    updated_at: new Date(task.updatedAt).toISOString(),
  };
}

/** An approval as the API shows it: the call, who asks, until when, and the request whose turn it paused. */
export function approvalView(a: Pick<ApprovalRecord, "id" | "toolName" | "input" | "agent" | "expiresAt" | "requestId" | "taskId">) {
  return {
    approval_id: a.id,
    tool: a.toolName,
    input: a.input,
    agent: a.agent,
    expires_at: new Date(a.expiresAt).toISOString(),
    request_id: a.requestId,
    task_id: a.taskId,
  };
}

/** A request's own model calls: tokens and their cost. */
export function requestUsage(r: RequestRecord) {
  return { inputTokens: r.inputTokens, outputTokens: r.outputTokens, cacheReadTokens: r.cacheReadTokens, cacheWriteTokens: r.cacheWriteTokens, costUsd: r.costUsd };
}

export function sessionIdOf(sessionKey: string): string {
  return sessionKey.slice("http:".length);
}

/** What POST /v1/messages answers: the request's replies and its task's state, read from the store (so a retry after a restart gets the same). */
export async function requestSummary(store: ApiReads, sessionId: string, requestId: string) {
  const request = (await store.request(requestId))!;
  const task = request.taskId ? await store.task(request.taskId) : null;
  const { texts: replies, files } = await splitReplies(store, await store.replies(requestId));
  const last = [...replies].reverse().find((r) => r.kind === "message") ?? replies.at(-1);
  return {
    session_id: sessionId,
    task_id: task?.id ?? null,
    request_id: requestId,
    status: task?.status ?? request.status,
    agent: last?.agent ?? null,
    text: last?.text ?? null,
    structured_output: task?.structuredOutput ?? null,
    messages: replies.map(outboundView),
    // Files the agents sent (send_file), each downloadable by this user at its url.
    files,
    pending_approvals: task ? (await store.pendingApprovals(task.sessionKey)).filter((a) => a.taskId === task.id).map(approvalView) : [],
    // What this request's model calls used and cost (the task's and session's totals: GET /v1/tasks, /v1/sessions).
    usage: requestUsage(request),
  };
}

/** The skills and agents the model may be offered now (unavailable ones, e.g. missing a variable, are left out). */
export function catalogView(catalog: Catalog) {
  const list = (defs: ReadonlyMap<string, Definition>) =>
    available(defs)
      .map((d) => ({ name: d.name, description: d.description }))
      .sort((a, b) => a.name.localeCompare(b.name));
  return { skills: list(catalog.skills), agents: list(catalog.agents) };
}

/** One memory as GET /v1/memories lists it. */
export function memoryView(m: MemoryRecord) {
  return { id: m.id, text: m.text, kind: m.kind, created_at: new Date(m.createdAt).toISOString(), updated_at: new Date(m.updatedAt).toISOString() };
}
