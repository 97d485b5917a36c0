// How a replica reacts to the store's change feed: a change any replica committed is work to pick up, replies to
// send, the end of a request someone here waits for, or a stack change or reply text to show.
import type { StoreChange } from "../store/store.js";
import type { RequestBook } from "./request-book.js";
import type { SessionWorkers } from "./session-workers.js";
import { providerOf } from "./session-key.js";
import type { ProviderSink } from "./types.js";

export interface ChangeListeners {
  book: RequestBook;
  workers: SessionWorkers;
  sinks: ReadonlyMap<string, ProviderSink>;
}

/** A change any replica committed: work to pick up, or the end of a request someone here waits for. */
export function hear({ book, workers, sinks }: ChangeListeners, change: StoreChange): void {
  if (change.kind === "request" && !book.isStoring(change.requestId)) workers.wake(change.sessionKey);
  else if (change.kind === "outbound") workers.replies(change.sessionKey);
  else if (change.kind === "done" && book.awaitedFromElsewhere(change.requestId)) {
    void book.settleIfDone(change.requestId).catch(() => {});
  } else if (change.kind === "stack") sinks.get(providerOf(change.sessionKey))?.event?.(change.sessionKey, change.event);
  else if (change.kind === "delta" && workers.holds(change.sessionKey)) {
    // Chat platforms are shown the stream by the replica running the turn (the one holding the lease).
    sinks.get(providerOf(change.sessionKey))?.stream?.(change.sessionKey, change.event);
  } else if (change.kind === "reset" && workers.holds(change.sessionKey)) sinks.get(providerOf(change.sessionKey))?.resetStream?.(change.sessionKey, change.event);
}
