// The Messages API's failures as its errors page documents them (https://platform.claude.com/docs/en/api/errors):
// every error body is {"type":"error","error":{"type","message"},"request_id"} (the server adds request_id);
// 429 rate_limit_error comes with a `retry-after` header in seconds (https://platform.claude.com/docs/en/api/rate-limits);
// 500 api_error and 529 overloaded_error are the API's own trouble. The messages are the ones the API sends.
import type { FakeError } from "./server.js";

/** 529: the API is overloaded for everyone. */
export function overloaded(): FakeError {
  return { error: { status: 529, type: "overloaded_error", message: "Overloaded" } };
}

/** 429 with `retry-after: <seconds>` (omitted when undefined: a spend-limit 429 carries none). */
export function rateLimited(retryAfterSeconds?: number): FakeError {
  return {
    error: {
      status: 429,
      type: "rate_limit_error",
      message:
        "Number of request tokens has exceeded your per-minute rate limit (https://docs.claude.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
      ...(retryAfterSeconds !== undefined ? { retryAfter: retryAfterSeconds } : {}),
    },
  };
}

/** 500: an unexpected error inside the API. */
export function serverError(): FakeError {
  return { error: { status: 500, type: "api_error", message: "Internal server error" } };
}
