import { ErrorCode, type WebAPIHTTPError, type WebAPIPlatformError, type WebAPIRequestError } from "@slack/web-api";
import type { StartProblem } from "../../src/gateway/index.js";

export const DEFAULT_API_URL = "https://slack.com/api/";

/**
 * Errors Slack answers a token it will not accept with (docs.slack.dev/reference/methods/auth.test: invalid_auth,
 * not_authed, account_inactive, token_revoked, token_expired, …; apps.connections.open: not_allowed_token_type).
 */
const REFUSALS = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "not_allowed_token_type",
  "team_disabled",
  "user_removed_from_team",
]);

/** The Socket Mode connection failed after the bot token was accepted: what failed is the app-level token's part. */
export class SocketModeStartError extends Error {
  override name = "SocketModeStartError";
  constructor(override readonly cause: unknown) {
    super(`Socket Mode could not connect: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** What a failed start of the Slack provider means for the admin. */
export function slackStartProblem(error: unknown, apiUrl: string | undefined): StartProblem {
  const socket = error instanceof SocketModeStartError;
  const cause = socket ? error.cause : error;
  const token = socket ? "app-level token" : "bot token";
  const variable = socket ? "SLACK_APP_TOKEN" : "SLACK_BOT_TOKEN";
  switch ((cause as { code?: unknown }).code) {
    case ErrorCode.PlatformError: {
      const answer = (cause as WebAPIPlatformError).data.error;
      if (REFUSALS.has(answer)) return { kind: "refused", text: `refused the ${token} (${answer}): check ${variable}` };
      return { kind: "failed", text: `could not start: it answered ${answer}` };
    }
    case ErrorCode.RequestError:
      return { kind: "unreachable", text: `is unreachable at ${apiUrl ?? DEFAULT_API_URL} (${networkReason((cause as WebAPIRequestError).original)})` };
    case ErrorCode.HTTPError:
      return { kind: "failed", text: `could not start: its Web API answered HTTP ${(cause as WebAPIHTTPError).statusCode}; check SLACK_API_URL if set` };
  }
  return { kind: "failed", text: `could not start: ${cause instanceof Error ? cause.message : String(cause)}` };
}

/** "connect ECONNREFUSED 127.0.0.1:3000", "getaddrinfo ENOTFOUND slack.com", "The operation was aborted due to timeout". */
function networkReason(original: unknown): string {
  const cause = (original as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.message === "string") return cause.message;
  return original instanceof Error ? original.message : String(original);
}
