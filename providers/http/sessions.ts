import { z } from "zod";
import { fileView } from "./file-replies.js";
import type { ApiReads, RequestKind } from "../../src/gateway/index.js";
import { HttpError, outboundView } from "./request.js";
import { scheduledView } from "./session-events.js";
import { approvalView } from "./views.js";

// A session read back: GET /v1/sessions/{id} (its tasks and usage) and GET /v1/sessions/{id}/messages (the
// conversation, for a client to show it again).

const uuid = z.uuid();

/** The session's key, once it is known to exist and to be `user`'s (400 bad id, 404 unknown, 403 someone else's). */
export async function ownedSession(store: ApiReads, sessionId: string, user: string): Promise<string> {
  if (!uuid.safeParse(sessionId).success) throw new HttpError(400, "invalid_request_error", "session_id must be a UUID");
  const key = `http:${sessionId}`;
  const session = await store.session(key);
  const tasks = await store.tasksOf(key);
  if (!session || tasks.length === 0) throw new HttpError(404, "not_found_error", `no session ${sessionId}`);
  if ((session.ownerId ?? tasks[0]!.ownerId) !== user) throw new HttpError(403, "permission_error", "this session belongs to another user");
  return key;
}

/**
 * What GET /v1/sessions/{id} returns: the session's tasks and its token usage. A task a scheduled job's run started
 * (its first request is the run) says so: `scheduled` names the job and the due time; null for the others.
 */
export async function sessionView(store: ApiReads, sessionId: string, key: string) {
  const started = new Map<string, ReturnType<typeof scheduledView>>();
  for (const r of await store.requestsOf(key)) if (r.taskId && !started.has(r.taskId)) started.set(r.taskId, scheduledView(r));
  return {
    session_id: sessionId,
    tasks: (await store.tasksOf(key)).map((t) => ({ task_id: t.id, status: t.status, created_at: iso(t.createdAt), scheduled: started.get(t.id) ?? null })),
    usage: await store.sessionUsage(key),
  };
}

export const HISTORY_DEFAULT_LIMIT = 200;
export const HISTORY_MAX_LIMIT = 1000;

/** `?limit=` of the history: absent → 200; else one whole number 1–1000, written plainly (no sign, no exponent). */
export function historyLimit(query: URLSearchParams): number {
  const given = query.getAll("limit");
  if (given.length === 0) return HISTORY_DEFAULT_LIMIT;
  if (given.length > 1) throw new HttpError(400, "invalid_request_error", "limit must be given once");
  const raw = given[0]!;
  if (!/^[1-9][0-9]{0,3}$/.test(raw) || Number(raw) > HISTORY_MAX_LIMIT) {
    throw new HttpError(400, "invalid_request_error", `limit must be a whole number from 1 to ${HISTORY_MAX_LIMIT}, got ${JSON.stringify(raw.slice(0, 32))}`);
  }
  return Number(raw);
}

/** Whether a request's text is something the user wrote (an approval's resume is the gateway's own bookkeeping). */
function saidByUser(kind: RequestKind): boolean {
  switch (kind) {
    case "message":
    case "command":
      return true;
    case "approval":
      return false;
    default: {
      const unknown: never = kind;
      throw new Error(`unknown request kind ${String(unknown)}`);
    }
  }
}

type Entry =
  | { role: "user"; text: string; request_id: string; at: string; scheduled?: { job_id: string; due_at: string } }
  | (ReturnType<typeof outboundView> & { role: "assistant"; request_id: string; at: string; approval?: ReturnType<typeof approvalView> & { status: string } });

/**
 * The session's conversation, oldest first: what the user wrote and every reply to it, the newest `limit`
 * entries. Requests are read newest first, so a long session costs about `limit` entries' reads.
 */
export async function sessionMessages(store: ApiReads, sessionKey: string, limit: number): Promise<{ messages: Entry[]; has_more: boolean }> {
  const requests = await store.requestsOf(sessionKey);
  const chunks: Entry[][] = [];
  let count = 0;
  let next = requests.length - 1;
  for (; next >= 0 && count < limit; next--) {
    const request = requests[next]!;
    const chunk: Entry[] = [];
    if (saidByUser(request.kind)) {
      // A scheduled job's run is the owner's request, sent by the scheduler: marked, so a client can show it apart.
      const scheduled = scheduledView(request);
      chunk.push({ role: "user", text: request.text, request_id: request.id, at: iso(request.createdAt), ...(scheduled ? { scheduled } : {}) });
    }
    for (const reply of await store.replies(request.id)) {
      const file = await fileView(store, reply);
      chunk.push({ role: "assistant", ...outboundView(reply), ...(file ? { file } : {}), request_id: request.id, at: iso(reply.createdAt) });
    }
    chunks.unshift(chunk);
    count += chunk.length;
  }
  const all = chunks.flat();
  const messages = all.slice(Math.max(0, all.length - limit));
  // An approval is shown with its state now, so a client offers Approve/Deny only while it can still be decided.
  for (const entry of messages) {
    if (entry.role !== "assistant" || !entry.approval_id) continue;
    const approval = await store.approval(entry.approval_id);
    if (approval) entry.approval = { ...approvalView(approval), status: approval.status };
  }
  // A session's first request is always the user's, so unread requests mean older entries exist.
  return { messages, has_more: all.length > messages.length || next >= 0 };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
