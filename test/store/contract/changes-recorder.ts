// Watches a store's change feed for a test: records every change and resolves waits on the change itself (no
// timers except a deadline that fails the test with what was seen). To show that something was NOT announced,
// announce a marker afterwards and wait for it: a store delivers changes in the order they committed, so
// anything the earlier call announced would have arrived first.
import type { Store, StoreChange } from "../../../src/store/store.js";

type Match = (change: StoreChange) => boolean;

export class ChangeRecorder {
  readonly seen: StoreChange[] = [];
  private readonly waiting: Array<{ match: Match; resolve: (change: StoreChange) => void }> = [];
  private readonly unsubscribe: () => void;
  private markers = 0;

  constructor(
    private readonly store: Store,
    private readonly deadlineMs = 5_000,
  ) {
    this.unsubscribe = store.feed.watch((change) => {
      this.seen.push(change);
      for (const w of [...this.waiting]) {
        if (w.match(change)) {
          this.waiting.splice(this.waiting.indexOf(w), 1);
          w.resolve(change);
        }
      }
    });
  }

  /** The first change from index `from` of `seen` on (already there or still to come) that matches. */
  waitFor(match: Match, from = 0): Promise<StoreChange> {
    const already = this.seen.slice(from).find(match);
    if (already) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no matching change within ${this.deadlineMs} ms; seen: ${JSON.stringify(this.seen)}`));
      }, this.deadlineMs);
      this.waiting.push({
        match,
        resolve: (change) => {
          clearTimeout(timer);
          resolve(change);
        },
      });
    });
  }

  /**
   * Announces a marker and waits for it; returns the changes that arrived before it (from index `from`). Every
   * change committed before this call is among them.
   */
  async settle(from = 0): Promise<StoreChange[]> {
    const requestId = `marker-${++this.markers}`;
    const isMarker: Match = (c) => c.kind === "request" && c.sessionKey === "@marker" && c.requestId === requestId;
    await this.store.feed.announce({ kind: "request", sessionKey: "@marker", requestId });
    const marker = await this.waitFor(isMarker, from);
    return this.seen.slice(from, this.seen.indexOf(marker)).filter((c) => c.sessionKey !== "@marker");
  }

  close(): void {
    this.unsubscribe();
  }
}

export const isRequest =
  (sessionKey: string, requestId: string): Match =>
  (c) =>
    c.kind === "request" && c.sessionKey === sessionKey && c.requestId === requestId;
export const isDone =
  (sessionKey: string, requestId: string): Match =>
  (c) =>
    c.kind === "done" && c.sessionKey === sessionKey && c.requestId === requestId;
export const isOutbound =
  (sessionKey: string): Match =>
  (c) =>
    c.kind === "outbound" && c.sessionKey === sessionKey;
