// Why the gateway ended a request as failed, as a code: the HTTP API maps codes to statuses (`quota` → 429,
// the server's own failures → 500) and nothing compares the words a user was shown.
import type { FailureCode, RequestRecord } from "../store/store.js";

/** The codes and what each means: src/store/roles/requests.ts (they are stored with the request). */
export type { FailureCode };

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
 * The outcome of a request another process ended, read back from the store by its code. A request failed before
 * the code was stored (schema 24 on SQLite, 16 on PostgreSQL) got the code of its words by that migration when they
 * were a server-side failure's, and none otherwise: it reads as finished, as every other failure did then.
 */
export function storedOutcome(request: RequestRecord): RequestOutcome {
  if (request.status !== "failed" || request.errorCode === null) return { status: "finished" };
  return { status: "failed", code: request.errorCode };
}
