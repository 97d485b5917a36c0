// One message's turn, as the worker holding the session's lease runs it: the checks at its start (model set up,
// owner, pending approvals, session budget, daily quota), the engine, and the end of a turn a /cancel cut off.
import type { Model } from "../llm/model.js";
import type { Orchestrator, RuntimeDeps } from "../runtime/orchestrator.js";
import type { RequestRecord, SessionWriter, Store } from "../store/store.js";
import { sessionOverBudget } from "./budget-door.js";
import { CANCELLED } from "./failures.js";
import type { HeldLease } from "./leases.js";
import { BUSY, mayRun } from "./ownership.js";
import { admitToQuota } from "./quota-door.js";
import type { Replies } from "./replies.js";
import type { RequestBook } from "./request-book.js";
import { providerOf } from "./session-key.js";
import type { ProviderSink } from "./types.js";

export interface TurnsDeps {
  store: Pick<Store, "requests" | "tasks" | "approvals" | "sessions">;
  model: Model;
  orchestrator: Orchestrator;
  runtime: RuntimeDeps;
  sinks: ReadonlyMap<string, ProviderSink>;
  book: RequestBook;
  replies: Replies;
  now: () => number;
  /** The gateway is stopping: a turn it aborts resumes on the next start, it was not cut off. */
  shutdown: AbortSignal;
}

export class Turns {
  constructor(private readonly deps: TurnsDeps) {}

  /** Runs a message's turn under `lease`, showing the platform's "working" indicator meanwhile. */
  async run(request: RequestRecord, signal: AbortSignal, lease: HeldLease): Promise<void> {
    const { book } = this.deps;
    const key = request.sessionKey;
    const stopWorking = this.deps.sinks.get(providerOf(key))?.working?.(key);
    const writer = book.recording(lease.writer);
    try {
      await this.process(request, signal, writer);
      if (book.isHandedOver(request.id)) lease.lost = true;
      if (lease.lost) book.handOver(request.id);
      // A turn a /cancel or /reset cut off ends here, committed or not, so it never runs again.
      else if (signal.aborted && !this.deps.shutdown.aborted && (await this.cutOff(request.id, writer))) book.cutOff(key);
    } finally {
      stopWorking?.();
    }
  }

  /** `current` was read just now, by the worker that picked it. */
  private async process(current: RequestRecord, signal: AbortSignal, writer: SessionWriter): Promise<void> {
    const { model, orchestrator, store, runtime, replies } = this.deps;
    if (current.status === "done" || current.status === "failed" || signal.aborted) return;
    if (!model.configured) return replies.reply(current, writer, model.setupHint, "setup");
    if (current.kind === "message" && current.status === "pending") {
      if (!(await mayRun(store, current))) return replies.reply(current, writer, BUSY, "busy");
      const pending = await store.approvals.pending(current.sessionKey);
      // A task past its expiry waits for nothing any more: the orchestrator ends it.
      if (pending.length > 0 && !(await this.pastExpiry(current.sessionKey))) {
        const list = pending.map((a) => `${a.toolName} (${a.id})`).join(", ");
        return replies.reply(current, writer, `I'm waiting for your approval of ${list}. Approve or deny it first, or send /cancel.`);
      }
    }
    const over = await sessionOverBudget(store, runtime.settings, current.sessionKey);
    if (over) return replies.reply(current, writer, over, "budget");
    if (current.kind === "message" && current.status === "pending") {
      const refused = await admitToQuota(runtime.quotas, current, writer);
      if (refused) return refused.tell ? replies.reply(current, writer, refused.text, "quota") : undefined;
    }
    await replies.guard(current, writer, () => orchestrator.handleMessage(current, writer, signal));
  }

  private async pastExpiry(sessionKey: string): Promise<boolean> {
    const expiresAt = (await this.deps.store.tasks.active(sessionKey))?.expiresAt ?? null;
    return expiresAt !== null && expiresAt <= this.deps.now();
  }

  /** Ends a turn a /cancel or /reset stopped; true when it was still unfinished (so it was this that ended it). */
  private async cutOff(requestId: string, writer: SessionWriter): Promise<boolean> {
    const request = await this.deps.store.requests.get(requestId);
    if (!request || (request.status !== "pending" && request.status !== "running")) return false;
    await writer.commit({ request: { id: request.id, status: "failed", error: CANCELLED, errorCode: "cancelled" } });
    return true;
  }
}
