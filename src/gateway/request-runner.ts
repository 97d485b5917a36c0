// What this replica does with a request once its session's worker picks it up: a message runs its turn (turns.ts),
// a command its entry of the command table; then what it produced is delivered and its waiters are told. A message
// that arrives while a turn runs gets a notice that it waits (or joins the turn, MID_TURN=steer).
import type { Ids } from "../runtime/deps.js";
import type { Orchestrator, RuntimeDeps } from "../runtime/orchestrator.js";
import type { RequestRecord, SessionWriter, Store } from "../store/store.js";
import { CHAT_COMMANDS } from "./command-table.js";
import { interrupts, parseCommand } from "./commands.js";
import type { HeldLease } from "./leases.js";
import type { GatewayObserver } from "./observer.js";
import { BUSY, mayRun } from "./ownership.js";
import type { Replies } from "./replies.js";
import type { RequestBook } from "./request-book.js";
import type { SessionWorkers } from "./session-workers.js";
import type { Turns } from "./turns.js";
import type { Decision, DecisionResult } from "./types.js";

export interface RequestRunnerDeps {
  store: Pick<Store, "requests" | "tasks" | "memories" | "schedules">;
  ids: Ids;
  runtime: RuntimeDeps;
  orchestrator: Orchestrator;
  observer: GatewayObserver;
  book: RequestBook;
  replies: Replies;
  turns: Turns;
  /** The session workers that run the requests (created after this runner: they call it). */
  workers: () => SessionWorkers;
  now: () => number;
  decide: (approvalId: string, userId: string, decision: Decision) => Promise<DecisionResult>;
  midTurn?: "queue" | "steer" | undefined;
  schedules?: { defaultZone?: string | undefined; graceMs?: number } | undefined;
  shutdown: AbortSignal;
}

const QUEUED = "Got it. I'm still working on your previous message; I'll read this one as soon as I'm done.";
const STEERED = "Got it. I'm still working on your previous message; I'll take this into account at my next step.";

export class RequestRunner {
  constructor(private readonly deps: RequestRunnerDeps) {}

  /** A request the worker runs in turn, under the session's lease. */
  turn(request: RequestRecord, signal: AbortSignal, lease: HeldLease): Promise<void> {
    return this.deps.observer.request(request, () => this.run(request, () => this.runTurn(request, signal, lease)));
  }

  /** A read-only command, run beside the turn under the same lease. */
  side(request: RequestRecord, writer: SessionWriter): Promise<void> {
    return this.deps.observer.request(request, () => this.run(request, () => this.runCommand(request, writer)));
  }

  /** A message waits behind the running turn: its sender is told (once; the worker keeps count). */
  tellQueued(writer: SessionWriter): Promise<void> {
    return writer.commit({
      // Not one of the request's replies (those come when it runs): a notice to the chat.
      outbound: [
        {
          id: this.deps.ids.next("out"),
          requestId: null,
          taskId: null,
          agent: "switchboard",
          depth: 0,
          text: this.deps.midTurn === "steer" ? STEERED : QUEUED,
          kind: "notice",
        },
      ],
    });
  }

  /** Runs one request here and delivers what it produced; then its waiters are told. */
  private run(request: RequestRecord, work: () => Promise<void>): Promise<void> {
    return this.deps.book.running(request, async () => {
      await work();
      this.deps.workers().ended(request.sessionKey, request.id);
      await this.deps.workers().deliver(request.sessionKey);
    });
  }

  private async runTurn(request: RequestRecord, signal: AbortSignal, lease: HeldLease): Promise<void> {
    if (request.kind === "command") return this.runCommand(request, lease.writer);
    await this.deps.turns.run(request, signal, lease);
  }

  private async runCommand(request: RequestRecord, writer: SessionWriter): Promise<void> {
    const current = await this.deps.store.requests.get(request.id);
    if (!current || current.status === "done" || current.status === "failed" || this.deps.shutdown.aborted) return;
    const command = parseCommand(request.text, true);
    if (!command) return;
    const { runtime, orchestrator, store, schedules } = this.deps;
    if (interrupts(command) && !(await mayRun(store, request))) return this.deps.replies.reply(request, writer, BUSY, "busy");
    // What the /cancel or /reset interrupted: a turn cut off before its first commit left nothing on the stack.
    const cut = interrupts(command) ? this.deps.book.takeCut(request.sessionKey) : false;
    await CHAT_COMMANDS[command].run({
      request,
      writer,
      cut,
      runtime,
      orchestrator,
      store,
      now: () => this.deps.now(),
      schedules,
      decide: (id, userId, decision) => this.deps.decide(id, userId, decision),
      reply: (text) => this.deps.replies.reply(request, writer, text),
      guard: (work) => this.deps.replies.guard(request, writer, work),
    });
  }
}
