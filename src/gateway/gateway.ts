import type { Logger } from "pino";
import type { Model } from "../llm/model.js";
import type { Ids } from "../runtime/deps.js";
import { cancelTask, describeContext, describeStack, resetSession } from "../runtime/control.js";
import type { Orchestrator, RuntimeDeps } from "../runtime/orchestrator.js";
import { CorruptStateError, type RequestRecord, type Store } from "../store/store.js";
import { ApprovalDecisions } from "./approval-decisions.js";
import { commandArgument, decisionText, parseCommand, skillsText, welcomeText, type ChatCommand } from "./commands.js";
import { Outbox } from "./outbox.js";
import { SerialQueue } from "./serial-queue.js";
import { providerOf } from "./session-key.js";
import type { Decision, DecisionResult, InboundMessage, ProviderSink, SubmitResult } from "./types.js";
import { UnrecordedFailures } from "./unrecorded-failures.js";

export interface GatewayDeps {
  store: Store;
  model: Model;
  orchestrator: Orchestrator;
  runtime: RuntimeDeps;
  ids: Ids;
  log: Logger;
  /** First delay before a failed delivery is retried (doubling each time). Default 2000 ms. */
  retryBaseMs?: number;
  /** Tokens a session may use between /resets before the model is no longer called (0: no limit). */
  sessionTokenBudget?: number;
}

const STORE_FAILING =
  "Sorry, I can't store messages right now (the server's storage is failing), so I could not process that. Please try again later.";

const BUSY =
  "Sorry, I'm in the middle of a task for someone else in this chat. Please wait until it finishes, or ask them to /cancel it.";

/**
 * The provider-neutral edge. Every inbound message is stored before it is processed (a repeated
 * message id is dropped), then handled one at a time per session key; replies are delivered from
 * the outbox after the step that produced them committed. /cancel and /reset do not wait behind a
 * running turn: they abort it and go next.
 */
export class Gateway {
  private readonly sinks = new Map<string, ProviderSink>();
  private readonly queue: SerialQueue;
  private readonly control: SerialQueue;
  private readonly outbox: Outbox;
  private readonly approvals: ApprovalDecisions;
  private readonly shutdown = new AbortController();
  private readonly turns = new Map<string, AbortController>();
  private readonly finished = new Map<string, Array<(outcome: { internalError: boolean }) => void>>();
  private readonly internalErrors = new Set<string>();
  /** Failed requests the store could not yet record as failed (disk full): terminal all the same. */
  private readonly unrecorded: UnrecordedFailures;

  constructor(private readonly deps: GatewayDeps) {
    const onError = (key: string, error: unknown) => deps.log.error({ session: key, err: error }, "session worker failed");
    this.queue = new SerialQueue(onError);
    this.control = new SerialQueue(onError);
    this.outbox = new Outbox({
      store: deps.store,
      log: deps.log,
      sinks: this.sinks,
      ...(deps.retryBaseMs !== undefined ? { retryBaseMs: deps.retryBaseMs } : {}),
      timers: deps.runtime.timers,
      onMoved: (from, to) => this.moveSession(from, to),
    });
    this.unrecorded = new UnrecordedFailures(deps.store, deps.retryBaseMs ?? 2000);
    this.approvals = new ApprovalDecisions({ store: deps.store, ids: deps.ids, log: deps.log, resume: (key, requestId) => this.queue.push(key, () => this.run(requestId)) });
  }

  register(sink: ProviderSink): void {
    this.sinks.set(sink.prefix, sink);
    // Replies committed before a restart but not yet shown go out now.
    this.outbox.deliverAll(sink.prefix);
    // Indicators a previous process showed and never took back ("typing", 👀) come off now.
    if (sink.clearIndicator) {
      for (const { sessionKey, data } of this.deps.store.indicators(sink.prefix)) {
        sink
          .clearIndicator(sessionKey, data)
          .then(() => this.deps.store.deleteIndicator(sessionKey))
          .catch((error: unknown) => this.deps.log.warn({ session: sessionKey, err: error }, "could not clear a stale indicator"));
      }
    }
  }

  /** A provider records an indicator it showed (a reaction, a status) so that a restart can take it back. */
  rememberIndicator(sessionKey: string, data: string): void {
    this.deps.store.saveIndicator(sessionKey, data);
  }

  forgetIndicator(sessionKey: string): void {
    this.deps.store.deleteIndicator(sessionKey);
  }

  /**
   * The chat behind a conversation moved (a Telegram group became a supergroup): its whole conversation, sub-keys
   * included, moves to the new key after the turn in flight (if any) and what was pending is delivered there.
   */
  moveSession(from: string, to: string): void {
    if (from === to) return;
    this.queue.push(from, async () => {
      const result = this.deps.store.moveSession(from, to);
      if ("refused" in result) {
        this.deps.log.warn({ session: from, to, reason: result.refused }, "could not move the conversation");
        return;
      }
      if (result.moved === 0) return;
      for (const key of [from, to]) this.deps.runtime.stacks.evict(key);
      this.deps.log.info({ session: from, to }, "conversation moved");
      await this.outbox.deliver(to);
    });
  }

  /** Picks up the requests a restart interrupted, oldest first. */
  recover(): number {
    const unfinished = this.deps.store.unfinishedRequests().filter((r) => !this.unrecorded.has(r.id));
    for (const request of unfinished) this.queue.push(request.sessionKey, () => this.run(request.id));
    if (unfinished.length > 0) this.deps.log.info({ count: unfinished.length }, "resuming unfinished requests");
    return unfinished.length;
  }

  /**
   * Resolves once a request has been processed and its replies delivered. `internalError` is true when it
   * failed on the server's side (a corrupt state row, a store error), not because of the user or the model.
   */
  whenDone(requestId: string): Promise<{ internalError: boolean }> {
    if (this.unrecorded.has(requestId) && !this.finished.has(requestId)) return Promise.resolve({ internalError: true });
    const request = this.deps.store.request(requestId);
    if (request && (request.status === "done" || request.status === "failed") && !this.finished.has(requestId)) {
      return Promise.resolve({ internalError: this.internalErrors.has(requestId) });
    }
    return new Promise((resolve) => {
      const waiters = this.finished.get(requestId) ?? [];
      waiters.push(resolve);
      this.finished.set(requestId, waiters);
    });
  }

  /** Stack changes reach the provider that serves the session (wired to the runtime's onEvent). */
  emit(sessionKey: string, event: { type: "push" | "pop"; agent: string; depth: number }): void {
    this.sinks.get(providerOf(sessionKey))?.event?.(sessionKey, event);
  }

  /** Read access for API providers. */
  get store(): Store {
    return this.deps.store;
  }

  /** The owner and stack of the running task of a chat, if any (providers use it to address replies). */
  activeTask(sessionKey: string): { ownerId: string } | null {
    const task = this.deps.store.activeTask(sessionKey);
    return task ? { ownerId: task.ownerId } : null;
  }

  /** The session of `userId`'s running task in a place (a channel and its threads), if any. */
  sessionOfActiveTask(keyPrefix: string, userId: string): string | null {
    return this.deps.store.activeTaskOf(keyPrefix, userId)?.sessionKey ?? null;
  }

  submit(message: InboundMessage): SubmitResult {
    if (this.shutdown.signal.aborted) throw new Error("the gateway is shutting down");
    const { store, ids, log } = this.deps;
    const task = store.activeTask(message.sessionKey);
    const command = parseCommand(message.text, task !== null);
    const addressed = message.addressed ?? true;
    const anyone = command === "status" || command === "skills" || command === "context" || command === "approve" || command === "deny";
    if (task && task.ownerId !== message.userId && !anyone) {
      // Someone else's task holds this chat: only its owner may talk to the agents or stop them.
      return addressed || command ? { status: "refused", text: BUSY } : { status: "ignored" };
    }
    if (!task && !addressed && !command) return { status: "ignored" };

    const inserted = store.insertRequest({
      id: ids.next("req"),
      sessionKey: message.sessionKey,
      externalId: message.messageId,
      kind: command ? "command" : "message",
      userId: message.userId,
      text: message.text,
      ...(message.privateSession ? { claimSession: { mainAgentSessionId: ids.next("as") } } : {}),
      ...(message.idempotency ? { idempotency: message.idempotency } : {}),
    });
    if (inserted.status === "forbidden") return { status: "forbidden" };
    const { request } = inserted;
    if (inserted.status === "duplicate") {
      log.info({ session: message.sessionKey, request: request.id, messageId: message.messageId }, "duplicate message ignored");
      return { status: "duplicate", requestId: request.id };
    }
    if (command === "cancel" || command === "reset") {
      this.turns.get(message.sessionKey)?.abort();
      this.queue.pushFront(message.sessionKey, () => this.run(request.id));
    } else if (command) {
      // Read-only commands answer at once, even while a turn runs.
      this.control.push(message.sessionKey, () => this.run(request.id));
    } else {
      this.queue.push(message.sessionKey, () => this.run(request.id));
    }
    return { status: "accepted", requestId: request.id };
  }

  /**
   * The owner's decision on a pending approval: a compare-and-set, so of two clicks exactly one decides and
   * the waiting turn resumes once (the tool runs at most once).
   */
  decide(approvalId: string, userId: string, decision: Decision): DecisionResult {
    return this.approvals.decide(approvalId, userId, decision);
  }

  /** Approvals nobody answered in time count as denied (startup and a timer; never throws). */
  expireApprovals(now: number): number {
    return this.approvals.expire(now);
  }

  /**
   * A notice from the gateway itself (a refusal, "text only, please") that belongs to no request: committed to
   * the outbox and delivered from there, so a webhook handler never waits on the platform's API.
   */
  notify(sessionKey: string, text: string): void {
    this.deps.store.commit({
      sessionKey,
      outbound: [{ id: this.deps.ids.next("out"), requestId: null, taskId: null, agent: "switchboard", depth: 0, text, kind: "notice" }],
    });
    void this.outbox.deliver(sessionKey);
  }

  async idle(): Promise<void> {
    await this.queue.idle();
    await this.control.idle();
    await this.outbox.idle();
  }

  /** Stops taking work, cancels in-flight model calls (their requests resume on the next start) and waits. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    this.unrecorded.record();
    this.unrecorded.stop();
    this.outbox.stop();
    await this.idle();
  }

  private async run(requestId: string): Promise<void> {
    try {
      await this.runRequest(requestId);
    } finally {
      const waiters = this.finished.get(requestId) ?? [];
      this.finished.delete(requestId);
      for (const resolve of waiters) resolve({ internalError: this.internalErrors.has(requestId) });
      this.internalErrors.delete(requestId);
    }
  }

  private async runRequest(requestId: string): Promise<void> {
    if (this.unrecorded.has(requestId)) return;
    const request = this.deps.store.request(requestId);
    if (!request || request.status === "done" || request.status === "failed" || this.shutdown.signal.aborted) return;
    const key = request.sessionKey;
    const command = request.kind === "command" ? parseCommand(request.text, true) : null;
    if (command === "approve" || command === "deny") {
      const id = commandArgument(request.text);
      this.reply(request, decisionText(this.decide(id, request.userId, command), id));
    } else if (command === "context") {
      const { runtime, orchestrator } = this.deps;
      await this.guardAsync(request, () => describeContext(runtime, orchestrator, request, this.deps.sessionTokenBudget ?? 0).then(() => {}));
    } else if (command) {
      this.command(request, command);
    } else {
      const turn = new AbortController();
      this.turns.set(key, turn);
      const stopWorking = this.sinks.get(providerOf(key))?.working?.(key);
      try {
        await this.process(request, AbortSignal.any([this.shutdown.signal, turn.signal]));
        if (turn.signal.aborted && !this.shutdown.signal.aborted) this.cutOff(request.id);
      } finally {
        stopWorking?.();
        if (this.turns.get(key) === turn) this.turns.delete(key);
      }
    }
    await this.outbox.deliver(key);
  }

  /** A turn a /cancel or /reset cut off ends here, committed or not, so a restart never runs it again. */
  private cutOff(requestId: string): void {
    const request = this.deps.store.request(requestId);
    if (request && (request.status === "pending" || request.status === "running")) {
      this.deps.store.commit({ sessionKey: request.sessionKey, request: { id: request.id, status: "failed", error: "cancelled by the user" } });
    }
  }

  private command(request: RequestRecord, command: ChatCommand): void {
    const { runtime, orchestrator } = this.deps;
    this.guard(request, () => {
      if (command === "cancel") cancelTask(runtime, orchestrator, request);
      else if (command === "status") describeStack(runtime, orchestrator, request);
      else if (command === "reset") resetSession(runtime, orchestrator, request);
      else this.reply(request, command === "skills" ? skillsText(runtime.catalog()) : welcomeText(runtime.catalog()));
    });
  }

  private async process(request: RequestRecord, signal: AbortSignal): Promise<void> {
    const { model, orchestrator } = this.deps;
    if (!model.configured) return this.reply(request, model.setupHint, "failed");
    if (request.kind === "message" && request.status === "pending") {
      const pending = this.deps.store.pendingApprovals(request.sessionKey);
      if (pending.length > 0) {
        const list = pending.map((a) => `${a.toolName} (${a.id})`).join(", ");
        return this.reply(request, `I'm waiting for your approval of ${list}. Approve or deny it first, or send /cancel.`);
      }
    }
    const budget = this.deps.sessionTokenBudget ?? 0;
    const used = budget > 0 ? this.deps.store.sessionUsage(request.sessionKey).sinceReset : 0;
    if (budget > 0 && used >= budget) {
      const n = (x: number) => x.toLocaleString("en-US");
      return this.reply(
        request,
        `This conversation has used ${n(used)} tokens, over its budget of ${n(budget)}. Send /reset to start a fresh one, or ask the admin to raise SESSION_TOKEN_BUDGET.`,
        "failed",
      );
    }
    await this.guardAsync(request, () => orchestrator.handleMessage(request, signal));
  }

  private guard(request: RequestRecord, work: () => void): void {
    try {
      work();
    } catch (error) {
      this.failed(request, error);
    }
  }

  private async guardAsync(request: RequestRecord, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.failed(request, error);
    }
  }

  private failed(request: RequestRecord, error: unknown): void {
    this.internalErrors.add(request.id);
    this.deps.runtime.stacks.evict(request.sessionKey);
    const corrupt = error instanceof CorruptStateError;
    this.deps.log.error(
      { session: request.sessionKey, request: request.id, err: error },
      corrupt ? "stored state for this session is corrupt" : "request failed",
    );
    this.reply(
      request,
      corrupt
        ? "Sorry, the saved state of this chat is damaged, so I could not continue it. Send /reset to start over."
        : "Sorry, something went wrong while handling that message. Please try again.",
      "failed",
    );
  }

  /** Ends a request with a message from the gateway itself, in one commit. */
  private reply(request: RequestRecord, text: string, status: "done" | "failed" = "done"): void {
    try {
      this.commitReply(request, text, status);
    } catch (error) {
      // The store cannot take the reply (disk full, I/O error): tell the user directly that it was not
      // processed, and from then on the request is failed, here and (once the store can write) on disk: a
      // message the user was told had failed must not run later, after newer ones.
      this.deps.log.error({ err: error, request: request.id }, "could not record a reply; sending it directly");
      this.internalErrors.add(request.id);
      this.unrecorded.add(request.id, request.sessionKey, "the store could not write");
      const sink = this.sinks.get(providerOf(request.sessionKey));
      void sink
        ?.deliver(
          { id: this.deps.ids.next("out"), sessionKey: request.sessionKey, requestId: request.id, agent: "switchboard", depth: 0, text: STORE_FAILING, kind: "error" },
          { sentChunks: new Set(), chunkSent: () => {} },
        )
        .catch(() => {});
    }
  }

  private commitReply(request: RequestRecord, text: string, status: "done" | "failed"): void {
    this.deps.store.commit({
      sessionKey: request.sessionKey,
      request: { id: request.id, status, ...(status === "failed" ? { error: text } : {}) },
      outbound: [
        {
          id: this.deps.ids.next("out"),
          requestId: request.id,
          taskId: null,
          agent: "switchboard",
          depth: 0,
          text,
          kind: status === "failed" ? "error" : "notice",
        },
      ],
    });
  }
}
