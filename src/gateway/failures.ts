// Why the gateway ended a request as failed, as a code: the HTTP API maps codes to statuses (`quota` → 429,
// the server's own failures → 500) and nothing compares the words a user was shown.
import type { RequestRecord } from "../store/store.js";

export type FailureCode =
  /** Someone else's task runs in this chat (ownership.ts). */
  | "busy"
  /** No model is configured: the user is given the setup hint. */
  | "setup"
  /** SESSION_TOKEN_BUDGET or SESSION_COST_BUDGET_USD is spent. */
  | "budget"
  /** USER_DAILY_MESSAGES, USER_DAILY_USD or CHAT_DAILY_USD is reached (quota-door.ts). */
  | "quota"
  /** A /cancel or /reset cut the turn off. */
  | "cancelled"
  /** The session's stored state is damaged. */
  | "corrupt"
  /** The store could not take the reply (disk full, I/O error). */
  | "store_failing"
  /** Anything else that went wrong on the server's side. */
  | "internal";

/**
 * A request's end, as whoever waits for it is told (Gateway.whenDone): failed by the gateway, with why, or
 * finished: processed by the engine, whose answer (or its own failure, e.g. the model's) is in the store.
 */
export type RequestOutcome = { status: "finished" } | { status: "failed"; code: FailureCode };

const CORRUPT = "Sorry, the saved state of this chat is damaged, so I could not continue it. Send /reset to start over.";
const INTERNAL = "Sorry, something went wrong while handling that message. Please try again.";
export const STORE_FAILING = "Sorry, I can't store messages right now (the server's storage is failing), so I could not process that. Please try again later.";
export const CANCELLED = "cancelled by the user";

/** What the user is told for the failures whose words are the gateway's own. */
export const FAILURE_TEXT = { corrupt: CORRUPT, internal: INTERNAL, store_failing: STORE_FAILING } as const satisfies Partial<Record<FailureCode, string>>;

/** Failures on the server's side (not because of the user or the model): the HTTP API answers 500. */
const SERVER_SIDE: ReadonlySet<FailureCode> = new Set(["corrupt", "store_failing", "internal"]);

export function isInternal(outcome: RequestOutcome): boolean {
  return outcome.status === "failed" && SERVER_SIDE.has(outcome.code);
}

/**
 * The outcome of a request another process ended, read back from the store. The store keeps the words the user was
 * told, not a code, so only the server-side failures (whose words are the gateway's own and fixed) are known again
 * by them, in this one place; any other end reads as finished.
 */
export function storedOutcome(request: RequestRecord): RequestOutcome {
  if (request.status !== "failed") return { status: "finished" };
  const code = (Object.keys(FAILURE_TEXT) as Array<keyof typeof FAILURE_TEXT>).find((c) => FAILURE_TEXT[c] === request.error);
  return code ? { status: "failed", code } : { status: "finished" };
}
