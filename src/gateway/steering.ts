// MID_TURN=steer: a message sent while a turn runs joins that turn instead of waiting behind it, when its sender owns
// the running task; the running frame reads it at its next model call.
import type { Store } from "../store/store.js";
import { isScheduledRun } from "./held-runs.js";
import type { RequestBook } from "./request-book.js";

/**
 * The messages (not commands) that the running task's owner sent behind `runningRequestId`, oldest first. Others'
 * messages keep waiting, and so do scheduled runs (never the user's own words).
 */
export async function steerableMessages(
  { store, book }: { store: Pick<Store, "requests">; book: Pick<RequestBook, "unrecorded"> },
  sessionKey: string,
  runningRequestId: string,
): Promise<Array<{ id: string; text: string }>> {
  const waiting = (await store.requests.unfinishedOf(sessionKey)).filter(
    (r) => r.kind === "message" && r.status === "pending" && r.id !== runningRequestId && !book.unrecorded.has(r.id) && !isScheduledRun(r),
  );
  if (waiting.length === 0) return [];
  const owner = await store.requests.conversationOwner(sessionKey);
  return waiting.filter((r) => r.userId === owner).map((r) => ({ id: r.id, text: r.text }));
}
