// The SDK's errors as ModelErrors that say what kind of failure each is and how long the API asked to wait, so the
// layers above (keys.ts, fallback.ts) can tell a try worth repeating from one that is not. The status codes and
// error types are the Messages API's (https://platform.claude.com/docs/en/api/errors): 401 authentication_error,
// 429 rate_limit_error (with retry-after), 500 api_error, 529 overloaded_error; during a stream the same types
// arrive in an `event: error` after the 200.
import Anthropic from "@anthropic-ai/sdk";
import { ModelError, type ModelFailure } from "./model.js";

/** No wait the API asks for is taken as longer than this (a wrong header must not park a model for a day). */
const LONGEST_WAIT_MS = 60 * 60 * 1000;

/** What `retry-after-ms` or `retry-after` (seconds, or an HTTP date) asks for, in ms; null when neither says. */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined | null, now: number): number | null {
  if (!headers) return null;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, LONGEST_WAIT_MS);
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value.trim());
  const wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  return Number.isFinite(wait) ? Math.min(Math.max(0, wait), LONGEST_WAIT_MS) : null;
}

/** An error type the API sends in a stream's `event: error` (no HTTP status any more), as a failure. */
function streamFailure(type: string | undefined): ModelFailure {
  if (type === "overloaded_error") return "overloaded";
  if (type === "rate_limit_error") return "rate_limited";
  if (type === "authentication_error") return "auth";
  if (type === "invalid_request_error" || type === "permission_error" || type === "not_found_error") return "refused";
  return "server"; // api_error, and whatever else breaks a stream that had started
}

/**
 * The SDK's error as a ModelError. `streamed`: the answer had begun to arrive, so an error the SDK does not
 * classify (undici's "terminated") is the connection dropping mid-answer.
 */
export function toModelError(error: unknown, options: { streamed: boolean; now: number }): ModelError {
  if (error instanceof ModelError) return error;
  if (error instanceof Anthropic.APIUserAbortError) return new ModelError("the model call was cancelled", null, true);
  if (error instanceof Anthropic.APIConnectionTimeoutError) return new ModelError("the Anthropic API did not answer in time", null, false, { failure: "timeout" });
  if (error instanceof Anthropic.APIConnectionError) {
    return new ModelError(`cannot reach the Anthropic API (${error.message}); check ANTHROPIC_BASE_URL and the network`, null, false, { failure: "connection" });
  }
  if (error instanceof Anthropic.APIError) {
    const body = error.error as { error?: { message?: string; type?: string } } | undefined;
    const detail = body?.error?.message ?? error.message;
    const wait = retryAfterMs(error.headers, options.now);
    if (error.status === undefined) {
      // An `event: error` in a stream: the 200 went out long ago; the body's type says what happened.
      return new ModelError(`Anthropic API error during the answer: ${detail}`, null, false, { failure: streamFailure(body?.error?.type), retryAfterMs: wait });
    }
    return new ModelError(`Anthropic API error ${error.status}: ${detail}`, error.status, false, { retryAfterMs: wait });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (options.streamed) return new ModelError(`the connection to the Anthropic API dropped mid-answer (${message})`, null, false, { failure: "connection" });
  return new ModelError(message);
}
