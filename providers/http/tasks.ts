import { z } from "zod";
import { splitReplies } from "./file-replies.js";
import type { ApiReads, TaskRecord } from "../../src/gateway/index.js";
import { HttpError, outboundView } from "./request.js";
import { approvalView, requestUsage, sessionIdOf } from "./views.js";

// Tasks and requests as their owner addresses them: ids checked before the store is asked, a task past its expiry
// answered with 410, and GET /v1/requests/{id}.

const uuid = z.uuid();

/** A task of the HTTP API that belongs to `user` (400 for an id that is not a UUID, 404 unknown, 403 someone else's). */
export async function ownedTask(store: ApiReads, taskId: string, user: string): Promise<TaskRecord> {
  if (!uuid.safeParse(taskId).success) throw new HttpError(400, "invalid_request_error", `the task id in the path must be a UUID; got ${quoted(taskId)}`);
  const task = await store.task(taskId);
  if (!task || !task.sessionKey.startsWith("http:")) throw new HttpError(404, "not_found_error", `no task ${taskId}`);
  if (task.ownerId !== user) throw new HttpError(403, "permission_error", "this task belongs to another user");
  return task;
}

/**
 * A message that sets a new task's expiry or metadata, to a session whose task is still under way: 409. A task past its
 * expiry does not stand in the way (the message ends it, with a 410).
 */
export async function refuseTaskUnderWay(store: ApiReads, sessionKey: string, now: number): Promise<void> {
  const active = await store.activeTask(sessionKey);
  if (!active || (active.expiresAt !== null && active.expiresAt <= now)) return;
  throw new HttpError(
    409,
    "conflict_error",
    `task ${active.id} is still under way in this session; expires_at and metadata start a new task, so finish or cancel it first`,
  );
}

/** The answer to a message or decision that came after its task's expiry: 410, naming the task and when it expired. */
export function taskExpired(taskId: string, expiresAt: number, requestId: string) {
  const message = `task ${taskId} expired at ${new Date(expiresAt).toISOString()} and has ended; send a message without task_id to start a new task`;
  return { status: 410, body: { type: "error", error: { type: "task_expired_error", message }, request_id: requestId, task_id: taskId } };
}

/** The 410 for a stored request that failed because its task had expired; null for any other request. */
export async function expiredAnswer(store: ApiReads, requestId: string): Promise<{ status: number; body: unknown } | null> {
  const request = await store.request(requestId);
  const task = request?.status === "failed" && request.taskId ? await store.task(request.taskId) : null;
  return task?.status === "expired" && task.expiresAt !== null ? taskExpired(task.id, task.expiresAt, requestId) : null;
}

/**
 * What GET /v1/requests/{id} returns: one request's state, its replies, and the approvals its turn asked for (each
 * with its state now). Only for the user who sent it: anyone else's request is as unknown as a made-up id (404).
 */
export async function requestView(store: ApiReads, requestId: string, user: string) {
  if (!uuid.safeParse(requestId).success) throw new HttpError(400, "invalid_request_error", `the request id in the path must be a UUID; got ${quoted(requestId)}`);
  const request = await store.request(requestId);
  if (!request || !request.sessionKey.startsWith("http:") || request.userId !== user) throw new HttpError(404, "not_found_error", `no request ${requestId}`);
  const task = request.taskId ? await store.task(request.taskId) : null;
  const { texts: replies, files } = await splitReplies(store, await store.replies(request.id));
  const approvals = [];
  for (const reply of replies) {
    const approval = reply.approvalId ? await store.approval(reply.approvalId) : null;
    if (approval) approvals.push({ ...approvalView(approval), status: approval.status });
  }
  return {
    request_id: request.id,
    session_id: sessionIdOf(request.sessionKey),
    task_id: request.taskId,
    kind: request.kind,
    status: request.status,
    error: request.error,
    error_code: request.errorCode,
    task_status: task?.status ?? null,
    messages: replies.map(outboundView),
    files,
    approvals,
    usage: requestUsage(request),
    created_at: new Date(request.createdAt).toISOString(),
    updated_at: new Date(request.updatedAt).toISOString(),
  };
}

function quoted(id: string): string {
  return JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id);
}
