import type { Logger } from "pino";
import type { Model } from "../llm/model.js";
import type { Ids } from "../runtime/deps.js";
import { cancelTask, describeStack, resetSession } from "../runtime/control.js";
import type { Orchestrator, RuntimeDeps } from "../runtime/orchestrator.js";
import { CorruptStateError, type RequestRecord, type Store } from "../store/store.js";
import { parseCommand } from "./commands.js";
import { SerialQueue } from "./serial-queue.js";
import { providerOf } from "./session-key.js";
import type { InboundMessage, ProviderSink } from "./types.js";

export interface GatewayDeps {
  store: Store;
  model: Model;
  orchestrator: Orchestrator;
  runtime: RuntimeDeps;
  ids: Ids;
  log: Logger;
}

/**
 * The provider-neutral edge. Every inbound message is stored before it is processed (a repeated
 * message id is dropped), then handled one at a time per session key; replies are delivered from
 * the outbox after the step that produced them committed.
 */
export class Gateway {
  private readonly sinks = new Map<string, ProviderSink>();
  private readonly queue: SerialQueue;
  private readonly abort = new AbortController();
  private stopping = false;

  constructor(private readonly deps: GatewayDeps) {
    this.queue = new SerialQueue((key, error) => deps.log.error({ session: key, err: error }, "session worker failed"));
  }

  register(sink: ProviderSink): void {
    this.sinks.set(sink.prefix, sink);
    // Replies committed before a restart but not yet shown go out now.
    for (const key of new Set(this.deps.store.pendingOutbound().map((o) => o.sessionKey))) {
      if (providerOf(key) === sink.prefix) this.queue.push(key, () => this.deliverPending(key));
    }
  }

  /** Picks up the requests a restart interrupted, oldest first. */
  recover(): number {
    const unfinished = this.deps.store.unfinishedRequests();
    for (const request of unfinished) this.schedule(request);
    if (unfinished.length > 0) this.deps.log.info({ count: unfinished.length }, "resuming unfinished requests");
    return unfinished.length;
  }

  submit(message: InboundMessage): { requestId: string; duplicate: boolean } {
    if (this.stopping) throw new Error("the gateway is shutting down");
    const { request, duplicate } = this.deps.store.insertRequest({
      id: this.deps.ids.next("req"),
      sessionKey: message.sessionKey,
      externalId: message.messageId,
      kind: "message",
      userId: message.userId,
      text: message.text,
    });
    if (duplicate) {
      this.deps.log.info({ session: message.sessionKey, request: request.id, messageId: message.messageId }, "duplicate message ignored");
    } else {
      this.schedule(request);
    }
    return { requestId: request.id, duplicate };
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Stops taking work, cancels in-flight model calls (their requests resume on the next start) and waits. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    await this.queue.idle();
  }

  private schedule(request: RequestRecord): void {
    this.queue.push(request.sessionKey, async () => {
      await this.process(request.id);
      await this.deliverPending(request.sessionKey);
    });
  }

  private async process(requestId: string): Promise<void> {
    const { store, runtime, orchestrator, model } = this.deps;
    const request = store.request(requestId);
    if (!request || request.status === "done" || request.status === "failed" || this.abort.signal.aborted) return;
    const log = this.deps.log.child({ session: request.sessionKey, request: request.id });
    try {
      const command = request.status === "pending" ? parseCommand(request.text, runtime.stacks.hasActive(request.sessionKey)) : null;
      if (command === "cancel") cancelTask(runtime, orchestrator, request);
      else if (command === "status") describeStack(runtime, orchestrator, request);
      else if (command === "reset") resetSession(runtime, orchestrator, request);
      else if (!model.configured) this.fail(request, model.setupHint);
      else await orchestrator.handleMessage(request, this.abort.signal);
    } catch (error) {
      runtime.stacks.evict(request.sessionKey);
      const corrupt = error instanceof CorruptStateError;
      log.error({ err: error }, corrupt ? "stored state for this session is corrupt" : "request failed");
      this.fail(
        request,
        corrupt
          ? "Sorry, the saved state of this chat is damaged, so I could not continue it. Send /reset to start over."
          : "Sorry, something went wrong while handling that message. Please try again.",
      );
    }
  }

  private fail(request: RequestRecord, text: string): void {
    this.deps.store.commit({
      sessionKey: request.sessionKey,
      request: { id: request.id, status: "failed", error: text },
      outbound: [{ id: this.deps.ids.next("out"), requestId: request.id, taskId: null, agent: "switchboard", depth: 0, text, kind: "error" }],
    });
  }

  private async deliverPending(sessionKey: string): Promise<void> {
    const sink = this.sinks.get(providerOf(sessionKey));
    if (!sink) return;
    for (const out of this.deps.store.pendingOutbound(sessionKey)) {
      try {
        await sink.deliver(out);
      } catch (error) {
        this.deps.log.warn({ session: sessionKey, outbound: out.id, err: error }, "delivery failed; will retry");
        return;
      }
      this.deps.store.markDelivered(out.id);
    }
  }
}
