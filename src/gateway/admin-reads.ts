// What the operator's /admin page reads (src/admin/report.ts's views), asked of the gateway instead of the store.
import { approvalsView, sessionsView, sessionView, snapshot, stuckView, usageView, type ReportStore } from "../admin/report.js";
import type { Store, StoreChange } from "../store/store.js";

export type { Snapshot } from "../admin/report.js";

export class AdminReads {
  constructor(private readonly store: ReportStore & Pick<Store, "feed">) {}

  sessions(options: { limit: number }) {
    return sessionsView(this.store, options);
  }

  /** One session in detail; null when there is no such session. */
  session(key: string, options: { now?: number }) {
    return sessionView(this.store, key, options);
  }

  approvals(options: { now?: number }) {
    return approvalsView(this.store, options);
  }

  usage(options: { now?: number; limit?: number }) {
    return usageView(this.store, options);
  }

  stuck(options: { olderThanMs: number; now?: number }) {
    return stuckView(this.store, options);
  }

  /** Everything the page shows at once. */
  snapshot(options: { limit: number; stuckAfterMs: number; now?: number }) {
    return snapshot(this.store, options);
  }

  /** Every change the store announces, until the returned function is called. */
  watch(listener: (change: StoreChange) => void): () => void {
    return this.store.feed.watch(listener);
  }
}
