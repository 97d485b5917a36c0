import type { ApiReads } from "../../src/gateway/index.js";
import { sessionIdOf } from "./views.js";

// A request a daily quota refused (USER_DAILY_MESSAGES, USER_DAILY_USD, CHAT_DAILY_USD), at the door or before a
// model call of its turn, is answered as a program expects a limit to be: 429 in the API's error shape, naming the
// limit and when it resets, with Retry-After. The refusal is read from the store, so any replica answers it alike,
// and a retry with the same Idempotency-Key gets the same body (its Retry-After counted again from `resets_at`).

export interface Answer {
  status: number;
  body: unknown;
}

/** The 429 for a failed request a quota refused; null for any other request. */
export async function quotaAnswer(store: ApiReads, requestId: string): Promise<Answer | null> {
  const request = await store.request(requestId);
  if (request?.status !== "failed") return null;
  const refusal = await store.quotaRefusal(requestId);
  if (!refusal) return null;
  return {
    status: 429,
    body: {
      type: "error",
      error: {
        type: "rate_limit_error",
        code: "quota_exceeded",
        message: request.error ?? `${refusal.limit} reached`,
        limit: { name: refusal.limit.toLowerCase(), setting: refusal.limit },
        resets_at: new Date(refusal.resetsAt).toISOString(),
      },
      request_id: requestId,
      session_id: sessionIdOf(request.sessionKey),
      task_id: request.taskId,
    },
  };
}

/** Retry-After (whole seconds until the limit resets, at least 1) for a quota's 429; no headers for anything else. */
export function answerHeaders(answer: Answer, now: number): Record<string, string> {
  if (answer.status !== 429) return {};
  const resetsAt = Date.parse((answer.body as { error?: { resets_at?: string } }).error?.resets_at ?? "");
  if (Number.isNaN(resetsAt)) return {};
  return { "retry-after": String(Math.max(1, Math.ceil((resetsAt - now) / 1000))) };
}
