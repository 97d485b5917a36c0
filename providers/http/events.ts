import type { ApiReads, StoreChange } from "../../src/gateway/index.js";
import { fileView } from "./file-replies.js";
import { outboundView } from "./request.js";

type Send = (event: string, data: unknown) => void;

/**
 * One request's events for an SSE client, read from the store's change feed: its replies (read back from the
 * outbox, in order, each once) and the session's stack changes. It works the same whichever replica runs the
 * turn. Subscribe before submitting, so nothing is missed; events before `attach` wait in order.
 */
export class RequestEvents {
  private requestId: string | null = null;
  private send: Send | null = null;
  private readonly early: Array<{ event: string; data: unknown }> = [];
  /** Deltas (and resets) heard before the request was bound, with the request they belong to (kept in order with the rest). */
  private readonly unbound: Array<{ event: "delta" | "reset"; requestId: string | null | undefined; data: unknown; at: number }> = [];
  private readonly sent = new Set<string>();
  private pending: Promise<void> = Promise.resolve();
  private readonly unwatch: () => void;

  constructor(
    private readonly store: ApiReads,
    private readonly sessionKey: string,
  ) {
    this.unwatch = store.watch((change) => this.heard(change));
  }

  /** The request whose replies to stream (known once it is stored). */
  bind(requestId: string): void {
    this.requestId = requestId;
    // Deltas of this request heard before it was known take their place among the early events; others' are dropped.
    for (const d of this.unbound.splice(0).reverse()) {
      if (d.requestId == null || d.requestId === requestId) this.early.splice(d.at, 0, { event: d.event, data: d.data });
    }
  }

  attach(send: Send): void {
    this.send = send;
    for (const e of this.early.splice(0)) send(e.event, e.data);
    void this.flush();
  }

  /** Sends the replies committed so far that were not sent yet; resolves when they are written. */
  flush(): Promise<void> {
    this.pending = this.pending.then(async () => {
      if (!this.requestId) return;
      for (const reply of await this.store.replies(this.requestId).catch(() => [])) {
        if (this.sent.has(reply.id)) continue;
        this.sent.add(reply.id);
        if (!reply.fileId) this.emit(reply.approvalId ? "approval" : "message", outboundView(reply));
        else {
          const file = await fileView(this.store, reply).catch(() => null);
          if (file) this.emit("file", file);
        }
      }
    });
    return this.pending;
  }

  close(): void {
    this.unwatch();
  }

  private heard(change: StoreChange): void {
    if (change.sessionKey !== this.sessionKey) return;
    if (change.kind === "stack") this.emit("stack", change.event);
    else if (change.kind === "delta" || change.kind === "reset") {
      // Only this request's pieces: the session may be writing another request's reply first (a message queued
      // behind it). A change without a request id (an older replica) is shown as before. A reset takes back what
      // the deltas of that agent showed so far: its model call failed midway and the reply starts again.
      const event = change.kind;
      if (this.requestId === null) this.unbound.push({ event, requestId: change.requestId, data: change.event, at: this.early.length });
      else if (change.requestId == null || change.requestId === this.requestId) this.emit(event, change.event);
    } else if (change.kind === "outbound" && this.requestId && change.requestIds.includes(this.requestId)) void this.flush();
  }

  private emit(event: string, data: unknown): void {
    if (this.send) this.send(event, data);
    else this.early.push({ event, data });
  }
}
