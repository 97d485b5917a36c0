import { GrammyError, HttpError } from "grammy";
import type { StartProblem } from "../../src/gateway/index.js";

export const DEFAULT_API_ROOT = "https://api.telegram.org";

/**
 * What a failed start of the Telegram provider means for the admin. The Bot API answers a wrong or revoked token
 * with 401 `{"ok":false,"error_code":401,"description":"Unauthorized"}` (core.telegram.org/bots/api#making-requests);
 * grammY wraps a request that got no answer at all in an HttpError. Its message holds the request URL, and with it
 * the token, so only the network's own reason (ECONNREFUSED, ENOTFOUND, …) is repeated here.
 */
export function telegramStartProblem(error: unknown, apiRoot: string | undefined): StartProblem {
  const root = apiRoot ?? DEFAULT_API_ROOT;
  if (error instanceof GrammyError) {
    if (error.error_code === 401 || error.error_code === 403) {
      return { kind: "refused", text: `refused the bot token (${error.error_code} ${error.description}): check TELEGRAM_BOT_TOKEN` };
    }
    if (error.error_code === 404) {
      return { kind: "refused", text: `does not know this bot token (404 ${error.description}): check TELEGRAM_BOT_TOKEN, and TELEGRAM_API_ROOT if set (${root})` };
    }
    return { kind: "failed", text: `could not start: ${error.method} answered ${error.error_code} ${error.description}` };
  }
  if (error instanceof HttpError) return { kind: "unreachable", text: `is unreachable at ${root} (${networkReason(error.error)})` };
  return { kind: "failed", text: `could not start: ${error instanceof Error ? error.message : String(error)}` };
}

/** "connect ECONNREFUSED 127.0.0.1:8081", "getaddrinfo ENOTFOUND api.telegram.org", or the error's code. */
function networkReason(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  // node-fetch: "request to https://…/bot<token>/getMe failed, reason: connect ECONNREFUSED …"
  const reason = /reason: (.*)$/.exec(message)?.[1];
  if (reason) return reason;
  const code = (cause as { code?: unknown }).code;
  return typeof code === "string" ? code : message.replace(/https?:\/\/\S+/g, "…");
}
