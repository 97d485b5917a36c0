// What chat providers read about their conversations, asked of the gateway instead of the store: the indicators a
// previous process showed, the replies not yet sent, the requests not yet finished, who owns an approval or a task.
import type { OutboundRecord, RequestRecord, Store } from "../store/store.js";
import { AdminReads } from "./admin-reads.js";
import { ApiReads, type ApiStore } from "./api-reads.js";
import { Leadership, type LeadershipOptions } from "./leadership.js";

export class GatewayReads {
  /** What the HTTP API reads (api-reads.ts). */
  readonly api: ApiReads;
  /** What the operator's /admin page reads (admin-reads.ts). */
  readonly admin: AdminReads;

  constructor(private readonly store: ApiStore & Pick<Store, "indicators" | "leases" | "operations">) {
    this.api = new ApiReads(store);
    this.admin = new AdminReads(store);
  }

  /** The indicators recorded for a provider's sessions (Gateway.rememberIndicator), e.g. "telegram". */
  indicators(prefix: string): Promise<Array<{ sessionKey: string; data: string }>> {
    return this.store.indicators.list(prefix);
  }

  /** The indicator recorded for one session, if any. */
  async indicator(prefix: string, sessionKey: string): Promise<string | null> {
    return (await this.store.indicators.list(prefix)).find((i) => i.sessionKey === sessionKey)?.data ?? null;
  }

  /** Replies committed for `sessionKey` and not yet delivered. */
  pendingReplies(sessionKey: string): Promise<OutboundRecord[]> {
    return this.store.outbox.pending(sessionKey);
  }

  /** The session's requests not yet done or failed, oldest first. */
  unfinishedRequests(sessionKey: string): Promise<RequestRecord[]> {
    return this.store.requests.unfinishedOf(sessionKey);
  }

  /** Who may decide an approval (the owner of its task); null when there is no such approval. */
  async approvalOwner(approvalId: string): Promise<string | null> {
    return (await this.store.approvals.get(approvalId))?.ownerId ?? null;
  }

  /** The owner of the session's latest task, running or ended; null before its first. */
  async lastTaskOwner(sessionKey: string): Promise<string | null> {
    return (await this.store.tasks.ofSession(sessionKey)).at(-1)?.ownerId ?? null;
  }

  /** A job that runs on one replica at a time (e.g. Telegram long polling), taken over when that replica dies. */
  leadership(options: LeadershipOptions): Leadership {
    return new Leadership(this.store, options);
  }
}
