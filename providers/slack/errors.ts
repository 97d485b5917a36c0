// What a failed Web API call means for Switchboard. @slack/web-api throws a platform error
// (`{ ok: false, error }` with HTTP 200) as code slack_webapi_platform_error with `data.error`, and a 429
// (with rejectRateLimitedCalls) as slack_webapi_rate_limited_error with `retryAfter` in seconds.
import { DeliveryError } from "../../src/gateway/index.js";

/** The whole retry budget the Web API client is given (its retryConfig.maxRetryTime). */
export const RETRY_BUDGET_MS = 60_000;

/**
 * chat.postMessage errors after which the same reply can never arrive: the channel or thread is gone, closed to the
 * bot, or the reply itself is malformed. `account_inactive` is the deleted workspace or deactivated bot user.
 * `invalid_auth` and `token_revoked` are not here on purpose: they are about the token, not this reply — the admin
 * replaces SLACK_BOT_TOKEN and restarts, and the replies waiting in the outbox then go out.
 */
export const PERMANENT_DELIVERY_ERRORS: ReadonlySet<string> = new Set([
  "not_in_channel",
  "channel_not_found",
  "is_archived",
  "account_inactive",
  "thread_not_found",
  "cannot_reply_to_message",
  "restricted_action",
  "restricted_action_read_only_channel",
  "restricted_action_thread_only_channel",
  "restricted_action_non_threadable_channel",
  "msg_too_long",
  "no_text",
  "too_many_attachments",
  "invalid_blocks",
  "invalid_blocks_format",
]);

/** Errors that say the token or the app lacks something: true for every conversation, not just this one. */
const APP_WIDE_ERRORS: ReadonlySet<string> = new Set([
  "missing_scope",
  "not_allowed_token_type",
  "no_permission",
  "access_denied",
  "unknown_method",
  "method_deprecated",
  "invalid_auth",
  "token_revoked",
  "account_inactive",
]);

/** Slack's own word for a passing trouble: worth trying again next time. */
const TRANSIENT_ERRORS: ReadonlySet<string> = new Set([
  "ratelimited",
  "rate_limited",
  "internal_error",
  "fatal_error",
  "request_timeout",
  "service_unavailable",
  "team_added_to_org",
]);

/** The `error` of a `{ ok: false }` answer, or "ratelimited" for a 429; undefined for HTTP and network failures. */
export function slackErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { code?: unknown; data?: { error?: unknown } };
  if (e.code === "slack_webapi_rate_limited_error") return "ratelimited";
  if (e.code === "slack_webapi_platform_error" && typeof e.data?.error === "string") return e.data.error;
  return undefined;
}

/** Seconds Slack asked to wait (Retry-After) when the call was rate limited, else null. */
export function retryAfterSeconds(error: unknown): number | null {
  if (typeof error !== "object" || error === null) return null;
  const e = error as { code?: unknown; retryAfter?: unknown };
  return e.code === "slack_webapi_rate_limited_error" && typeof e.retryAfter === "number" ? e.retryAfter : null;
}

/**
 * How far a failed `assistant.threads.setStatus` reaches: a missing scope holds for the whole app, a thread that
 * is not an assistant thread (or is gone) only for that conversation, a rate limit or server error for nothing.
 */
export function statusFailureScope(error: unknown): "app" | "conversation" | "transient" {
  const code = slackErrorCode(error);
  if (code === undefined || TRANSIENT_ERRORS.has(code)) return "transient";
  return APP_WIDE_ERRORS.has(code) ? "app" : "conversation";
}

/** A failed delivery as the gateway must treat it: DeliveryError for permanent failures, the error itself otherwise. */
export function deliveryFailure(error: unknown, where: string): unknown {
  if (error instanceof DeliveryError) return error;
  const code = slackErrorCode(error);
  if (code !== undefined && PERMANENT_DELIVERY_ERRORS.has(code)) {
    return new DeliveryError(`Slack refused the reply in ${where} for good: ${code}`, { kind: "permanent", reason: code });
  }
  return error;
}

export interface RateLimitPolicy {
  /** Rate-limited attempts repeated after waiting (the client's `retries`). */
  retries: number;
  /** Total waiting allowed for one call, ms. */
  budgetMs: number;
  sleep: (ms: number) => Promise<void>;
}

/**
 * Runs a Web API call, waiting out a 429's Retry-After while it fits the retry budget. A wait beyond the budget
 * becomes DeliveryError retry_after at once, so the gateway's outbox waits (durably) instead of this process.
 */
export async function withinRateLimit<T>(call: () => Promise<T>, policy: RateLimitPolicy): Promise<T> {
  let waited = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const seconds = retryAfterSeconds(error);
      if (seconds === null) throw error;
      const ms = seconds * 1000;
      if (attempt >= policy.retries || waited + ms > policy.budgetMs) {
        throw new DeliveryError(`Slack rate limited the reply and asked to wait ${seconds} s`, { kind: "retry_after", ms });
      }
      waited += ms;
      await policy.sleep(ms);
    }
  }
}
