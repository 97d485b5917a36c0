import type { Logger } from "pino";
import type { Catalog } from "../catalog/definition.js";
import type { Model } from "../llm/model.js";
import { systemClock, type Ids } from "../runtime/deps.js";
import type { Orchestrator, RuntimeDeps, RuntimeEvent } from "../runtime/orchestrator.js";
import type { Store } from "../store/store.js";
import { ApprovalDecisions } from "./approval-decisions.js";
import { hear } from "./change-feed.js";
import { interrupts, parseCommand } from "./commands.js";
import { pauseUndeliverable } from "./scheduler.js";
import type { Leases } from "./leases.js";
import type { MemoryWorker } from "./memory-worker.js";
import { NO_GATEWAY_OBSERVER, type GatewayObserver } from "./observer.js";
import { Outbox } from "./outbox.js";
import { conversationOf } from "./ownership.js";
import { changeOf } from "./previews.js";
import { FloodGate } from "./flood-gate.js";
import { ProviderRegistration } from "./provider-registration.js";
import { RequestRunner } from "./request-runner.js";
import { SessionWorkers } from "./session-workers.js";
import { holdsBack } from "./held-runs.js";
import { moveConversation } from "./conversation-move.js";
import { steerableMessages } from "./steering.js";
import type { Decision, DecisionResult, InboundMessage, ProviderSink, SubmitResult } from "./types.js";
import type { RequestOutcome } from "./failures.js";
import { Replies } from "./replies.js";
import { Turns } from "./turns.js";
import { Intake } from "./intake.js";
import { GatewayReads } from "./reads.js";
import { RequestBook } from "./request-book.js";
import { VoiceDoor } from "./voice.js";
import type { Transcriber } from "../llm/transcription.js";

export interface GatewayDeps {
  /** The store: reads, inbound requests, approvals, the outbox. A session's state is written only through a lease's writer. */
  store: Store;
  /** This replica's leases: a held one gives the writer the session's turns and replies are committed through. */
  leases: Leases;
  model: Model;
  orchestrator: Orchestrator;
  runtime: RuntimeDeps;
  ids: Ids;
  log: Logger;
  /** First delay before a failed delivery is retried (doubling each time). Default 2000 ms. */
  retryBaseMs?: number;
  /** A message sent while a turn runs waits for it (queue, the default) or joins it (steer; see steerable()). */
  midTurn?: "queue" | "steer";
  /** Memory extraction in the background (MEMORY=on): woken after replies go out, stopped with the gateway. */
  memory?: MemoryWorker;
  /** Traces and metrics (src/telemetry); absent: nothing watches. */
  observer?: GatewayObserver;
  /** USER_MESSAGES_PER_MINUTE: each user's messages at the door (flood.ts); absent or 0: no limit. */
  userMessagesPerMinute?: number;
  /** Speech to text for voice notes and audio files (TRANSCRIPTION_URL); absent: the user is told voice can't be heard. */
  transcriber?: Transcriber;
  /** MAX_SESSION_FILE_BYTES: all the files one conversation may hold; absent or 0: no cap. */
  maxSessionFileBytes?: number;
  /** Scheduled jobs (SCHEDULES, DEFAULT_TIMEZONE): the commands; SCHEDULE_GRACE: how long a run waits behind a task waiting for the user. Absent: off. */
  schedules?: { defaultZone?: string | undefined; graceMs?: number };
}

/**
 * The provider-neutral edge. Every inbound message is stored before it is processed (a repeated message id is
 * dropped); the replica that holds the session's lease then handles its requests one at a time (SessionWorkers),
 * and replies are delivered from the outbox after the step that produced them committed. /cancel and /reset do
 * not wait behind a running turn: they stop it and go next. Any replica may store a message; the others hear of
 * it through the store's change feed.
 */
export class Gateway {
  private readonly sinks = new Map<string, ProviderSink>();
  private readonly workers: SessionWorkers;
  private readonly outbox: Outbox;
  private readonly approvals: ApprovalDecisions;
  private readonly shutdown = new AbortController();
  private readonly book: RequestBook;
  private readonly replies: Replies;
  private readonly turns: Turns;
  private readonly intake: Intake;
  /** What providers read about their conversations (reads.ts). */
  readonly reads: GatewayReads;
  private readonly unwatch: () => void;
  private readonly registration: ProviderRegistration;
  private readonly runner: RequestRunner;

  private readonly observer: GatewayObserver;

  constructor(private readonly deps: GatewayDeps) {
    this.observer = deps.observer ?? NO_GATEWAY_OBSERVER;
    this.outbox = new Outbox({
      store: deps.store,
      log: deps.log,
      sinks: this.sinks,
      ...(deps.retryBaseMs !== undefined ? { retryBaseMs: deps.retryBaseMs } : {}),
      timers: deps.runtime.timers,
      observer: this.observer,
      onMoved: (from, to) => void this.moveSession(from, to),
      onUndeliverable: (requestId, reason) =>
        void pauseUndeliverable(deps.store, deps.log, requestId, reason).catch((error: unknown) => deps.log.error({ err: error }, "could not pause a scheduled job")),
    });
    this.book = new RequestBook(deps.store, deps.retryBaseMs ?? 2000);
    this.replies = new Replies({ ids: deps.ids, log: deps.log, stacks: deps.runtime.stacks, sinks: this.sinks, book: this.book });
    const { store, model, orchestrator, runtime } = deps;
    const now = () => this.now();
    this.turns = new Turns({ store, model, orchestrator, runtime, sinks: this.sinks, book: this.book, replies: this.replies, now, shutdown: this.shutdown.signal });
    this.approvals = new ApprovalDecisions({ store: deps.store, ids: deps.ids, log: deps.log, now: () => this.now(), resume: (key) => this.workers.wake(key) });
    this.registration = new ProviderRegistration({ store, log: deps.log, sinks: this.sinks, deliverAll: (prefix) => this.outbox.deliverAll(prefix) });
    this.runner = new RequestRunner({
      store,
      ids: deps.ids,
      runtime,
      orchestrator,
      observer: this.observer,
      book: this.book,
      replies: this.replies,
      turns: this.turns,
      workers: () => this.workers,
      now,
      decide: (id, userId, decision) => this.decide(id, userId, decision),
      midTurn: deps.midTurn,
      schedules: deps.schedules,
      shutdown: this.shutdown.signal,
    });
    this.workers = new SessionWorkers({
      store: deps.store,
      leases: deps.leases,
      stacks: deps.runtime.stacks,
      log: deps.log,
      shutdown: this.shutdown.signal,
      isSide: (r) => r.kind === "command" && !interrupts(parseCommand(r.text, true)!),
      interrupts: (r) => r.kind === "command" && interrupts(parseCommand(r.text, true)!),
      settled: (id) => this.book.unrecorded.has(id),
      holdsBack: (r, writer) => holdsBack({ store, replies: this.replies, now, graceMs: deps.schedules?.graceMs ?? 3_600_000 }, r, writer),
      runTurn: (request, signal, lease) => this.runner.turn(request, signal, lease),
      runSide: (request, writer) => this.runner.side(request, writer),
      tellQueued: (_request, writer) => this.runner.tellQueued(writer),
      // A finished task's memories are extracted once its answer went out.
      deliver: (key) => this.outbox.deliver(key).finally(() => deps.memory?.wake()),
    });
    this.reads = new GatewayReads(store);
    this.intake = new Intake({
      store,
      ids: deps.ids,
      log: deps.log,
      book: this.book,
      workers: this.workers,
      observer: this.observer,
      flood: deps.userMessagesPerMinute ? new FloodGate(deps.userMessagesPerMinute, () => this.now(), deps.log, this.observer) : null,
      // Voice notes are heard at the door (voice.ts).
      voice: new VoiceDoor(deps.transcriber, deps.log),
      maxSessionFileBytes: deps.maxSessionFileBytes ?? 0,
      notify: (key, text) => this.notify(key, text),
      shutdown: this.shutdown.signal,
    });
    this.unwatch = deps.store.feed.watch((change) => hear({ book: this.book, workers: this.workers, sinks: this.sinks }, change));
    deps.memory?.start();
  }

  register(sink: ProviderSink): void {
    this.registration.register(sink);
  }

  /** A provider records an indicator it showed (a reaction, a status) so that a restart can take it back. */
  rememberIndicator(sessionKey: string, data: string): Promise<void> {
    return this.deps.store.indicators.save(sessionKey, data);
  }

  forgetIndicator(sessionKey: string): Promise<void> {
    return this.deps.store.indicators.delete(sessionKey);
  }

  /** The chat behind a conversation moved (a Telegram group became a supergroup): conversation-move.ts. */
  moveSession(from: string, to: string): Promise<void> {
    const { store, log, runtime } = this.deps;
    return moveConversation({ store, log, stacks: runtime.stacks, wake: (key) => this.workers.wake(key) }, from, to);
  }

  /** Picks up the work nobody is doing: requests a restart interrupted, replies not yet sent. */
  async recover(): Promise<number> {
    const count = await this.workers.poll();
    if (count > 0) this.deps.log.info({ sessions: count }, "resuming unfinished work");
    return count;
  }

  /**
   * What a replica does on a timer: takes over the sessions whose replica died (their leases ran out), catches a
   * notification it missed, and tells waiters of requests another replica finished.
   */
  async poll(): Promise<void> {
    await this.workers.poll();
    await this.book.settleEnded();
  }

  /**
   * Resolves once a request has been processed and its replies delivered (or, when another replica ran it,
   * committed), with how it ended: isInternal(outcome) when it failed on the server's side (a corrupt state row, a
   * store error), not because of the user or the model.
   */
  whenDone(requestId: string): Promise<RequestOutcome> {
    return this.book.whenDone(requestId);
  }

  /**
   * Stack changes and reply text as it is written reach whoever shows the session, on every replica (wired to the
   * runtime's onEvent): announced through the store, so an HTTP client on another replica sees them too.
   */
  emit(sessionKey: string, event: RuntimeEvent): void {
    void this.deps.store.feed.announce(changeOf(sessionKey, event)).catch(() => {});
  }

  /** The runtime's time, which task expiries are judged by (providers check an `expires_at` they are given against it). */
  now(): number {
    return (this.deps.runtime.clock ?? systemClock).now();
  }

  /** MID_TURN=steer: the messages that join the running turn (steering.ts). */
  steerable(sessionKey: string, runningRequestId: string): Promise<Array<{ id: string; text: string }>> {
    return steerableMessages({ store: this.deps.store, book: this.book }, sessionKey, runningRequestId);
  }

  /** The skills and agents loaded now (for a provider's welcome or menu). */
  catalog(): Catalog {
    return this.deps.runtime.catalog();
  }

  /** This replica's name and lease lifetime (for jobs that run on one replica only, e.g. Telegram long polling). */
  get replica(): { id: string; leaseMs: number } {
    return { id: this.deps.leases.replica, leaseMs: this.deps.leases.ttlMs };
  }

  /**
   * The owner of the chat's conversation, if someone owns it: their task runs, or their first message was accepted
   * and its task is starting (providers use it to address replies and to tell who is talking to the bot).
   */
  async activeTask(sessionKey: string): Promise<{ ownerId: string } | null> {
    const owner = await this.deps.store.requests.conversationOwner(sessionKey);
    return owner === null ? null : { ownerId: owner };
  }

  /** The session of the conversation `userId` owns in a place (a channel and its threads), if any. */
  sessionOfActiveTask(keyPrefix: string, userId: string): Promise<string | null> {
    return conversationOf(this.deps.store, keyPrefix, userId);
  }

  /** Admits a message from a provider: stored once, then processed by the session's worker (intake.ts). */
  submit(message: InboundMessage): Promise<SubmitResult> {
    return this.intake.submit(message);
  }

  /**
   * The owner's decision on a pending approval: a compare-and-set, so of two clicks exactly one decides and
   * the waiting turn resumes once (the tool runs at most once).
   */
  decide(approvalId: string, userId: string, decision: Decision): Promise<DecisionResult> {
    return this.approvals.decide(approvalId, userId, decision);
  }

  /** Approvals nobody answered in time count as denied (startup and a timer; never throws). */
  expireApprovals(now: number): Promise<number> {
    return this.approvals.expire(now);
  }

  /**
   * A notice from the gateway itself (a refusal, "text only, please") that belongs to no request: committed to
   * the outbox and delivered from there, so a webhook handler never waits on the platform's API.
   */
  async notify(sessionKey: string, text: string): Promise<void> {
    await this.deps.store.outbox.enqueue(sessionKey, [
      { id: this.deps.ids.next("out"), requestId: null, taskId: null, agent: "switchboard", depth: 0, text, kind: "notice" },
    ]);
    this.workers.wake(sessionKey);
  }

  async idle(): Promise<void> {
    await this.registration.idle();
    await this.workers.idle();
    await this.outbox.idle();
    await this.deps.memory?.idle();
  }

  /** Stops taking work, cancels in-flight model calls (their requests resume on the next start, here or on another replica) and waits. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    this.unwatch();
    await this.book.unrecorded.record();
    this.book.unrecorded.stop();
    this.outbox.stop();
    await this.deps.memory?.stop();
    await this.idle();
  }
}
