// Shared bits of the Slack fake: the error every method throws, the failure
// type tests inject, and lenient parameter readers. The Web API takes
// parameters as form fields (strings; complex values JSON-encoded, which is
// what @slack/web-api sends), as a JSON body, or in the query string, so the
// readers accept a value in any of those shapes.

export type Params = Record<string, unknown>;

/** A Web API error: thrown by method handlers, answered as HTTP 200 `{ ok: false, error, ...extra }`. */
export class SlackError extends Error {
  constructor(
    readonly code: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(code);
  }
}

/** Slack's way of saying why a request was rejected (the client logs these). */
export const withMessages = (code: string, ...messages: string[]) => new SlackError(code, { response_metadata: { messages } });

/**
 * A failure to inject:
 * - `{ error }`: HTTP 200 `{ ok: false, error, ...extra }` (e.g. `{ error: "channel_not_found" }`);
 * - `{ status: 429, retryAfter }`: HTTP 429, `Retry-After: <retryAfter>`, body `{ ok: false, error: "ratelimited" }`;
 * - `{ status }` (any other status): that HTTP status with `{ ok: false, error: "fatal_error" }`
 *   (@slack/web-api turns a non-200 into a WebAPIHTTPError).
 */
export type SlackFailure = { error: string; extra?: Record<string, unknown> } | { status: number; retryAfter?: number };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string parameter; numbers and booleans are read as their form spelling. "" counts as absent. */
export function optString(params: Params, name: string): string | undefined {
  const v = params[name];
  if (typeof v === "string") return v === "" ? undefined : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/** Like optString but keeps "" (for fields where empty is meaningful, e.g. a status that clears). */
export function optStringKeepEmpty(params: Params, name: string): string | undefined {
  const v = params[name];
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/** Parameters whose value is JSON (sent JSON-encoded in form bodies); decoded when the body is parsed. */
export const JSON_FIELDS = new Set(["blocks", "attachments", "metadata", "loading_messages", "user_auth_blocks", "prompts", "chunks"]);

/** Decodes the JSON_FIELDS given as strings; an unparseable one stays a string (methods reject it). */
export function decodeJsonFields(params: Params): Params {
  const out: Params = { ...params };
  for (const key of JSON_FIELDS) {
    const v = out[key];
    if (typeof v !== "string" || v === "") continue;
    try {
      out[key] = JSON.parse(v) as unknown;
    } catch {
      // left as the raw string on purpose
    }
  }
  return out;
}
