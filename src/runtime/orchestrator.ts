import type { Logger } from "pino";
import type { Catalog } from "../catalog/definition.js";
import { approvalPrompt } from "./approval-prompt.js";
import type { Model } from "../llm/model.js";
import type { OutboundInput, RequestRecord, SessionWriter, Store } from "../store/store.js";
import { runToCompletion } from "./batch.js";
import { budgetOf, BudgetExceeded, limited, requestBudget } from "./budget.js";
import type { SchemaChecker } from "../catalog/schema-checker.js";
import type { CallLimiter } from "./call-limiter.js";
import { systemClock, type Clock, type Ids, type RuntimeSettings, type Timers } from "./deps.js";
import { compactIfNeeded } from "./compaction.js";
import { refusalFor } from "./control.js";
import { FileBlockCache, fileRefs } from "./file-blocks.js";
import { placeReceived, type PlaceFile } from "./received-files.js";
import { executeTurn, type PreviewEvent, type TurnDeps, type TurnInput } from "./executor.js";
import { type AgentStack, type StackFrame } from "./frame.js";
import { Journal } from "./journal.js";
import { agentLabel } from "./labels.js";
import { hidesResults, privateTo } from "./memory/private-results.js";
import { recallFor } from "./memory/recall.js";
import { NO_OBSERVER, type TurnObserver } from "./observer.js";
import { mainSystemPrompt } from "./prompts.js";
import { resultChars } from "./result-bound.js";
import type { AgentStackManager } from "./stack-manager.js";
import type { Quotas } from "./quota.js";
import { QuotaExceeded, quotaModel } from "./quota-model.js";
import { endOverBudget } from "./stop-task.js";
import { taskEnd, type TaskOutcome } from "./task-end.js";
import { effectiveToolsFor } from "./tools/registry.js";
import type { ToolRegistry } from "./tools/registry.js";
import { closeOpenSessions, pushChild, returnToParent } from "./transitions.js";

/**
 * The roles the runtime holds: it reads stacks, logs, tasks, requests and approvals, opens sessions, recalls and
 * saves memories and queues notices. It holds no leases: its steps are written through the writer it is handed.
 */
export type RuntimeStore = Pick<Store, "sessions" | "steps" | "tasks" | "requests" | "approvals" | "outbox" | "memories" | "files">;

export interface RuntimeDeps {
  store: RuntimeStore;
  stacks: AgentStackManager;
  model: Model;
  tools: ToolRegistry;
  catalog: () => Catalog;
  settings: RuntimeSettings;
  ids: Ids;
  log: Logger;
  limiter: CallLimiter;
  timers: Timers;
  /** Output schemas: compiled and checked on a worker thread with a time limit (catalog/schema-checker.ts). */
  schemas: SchemaChecker;
  /** MID_TURN=steer: the owner's messages waiting behind a running request, to join its frame (executor.ts). */
  steering?: TurnDeps["steering"];
  /** Traces and metrics (src/telemetry): turns, tool calls, stack changes. */
  observer?: TurnObserver;
  /** Told of stack changes after they are committed, and of reply text as the model writes it. */
  onEvent?: (sessionKey: string, event: RuntimeEvent) => void;
  /** What task expiries are judged and tasks timed by. Default: the system clock. */
  clock?: Clock;
  /** The daily quotas (USER_DAILY_USD, CHAT_DAILY_USD), checked before every model call a request makes. */
  quotas?: Quotas;
  /** WORKSPACE=on: puts a message's files in the session's workspace when its turn starts (received-files.ts). */
  placeFile?: PlaceFile;
}

export type StackEvent = { type: "push" | "pop"; agent: string; depth: number };
/** A piece of a reply being written (`text` is the new piece only). A preview: the committed reply is the truth. */
export type DeltaEvent = Extract<PreviewEvent, { type: "delta" }>;
export type RuntimeEvent = StackEvent | PreviewEvent;

/**
 * Runs one inbound message through the session's stack: a flat loop over TurnResults (push on
 * CHILD_ACTIVATED, pop + inject on COMPLETE / MAX_ITERATIONS / ERROR, return on SEND_TEXT). No recursion.
 */
export class Orchestrator {
  /** Files prepared for the model, kept between calls of every session this runtime runs. */
  private readonly fileBlocks = new FileBlockCache();
  constructor(private readonly deps: RuntimeDeps) {}

  private get observer(): TurnObserver {
    return this.deps.observer ?? NO_OBSERVER;
  }

  /** Runs `request`, writing its steps through `writer` (of the lease its session is held under). */
  async handleMessage(request: RequestRecord, writer: SessionWriter, signal: AbortSignal): Promise<void> {
    const { store, stacks, ids } = this.deps;
    const key = request.sessionKey;
    const journal = Journal.of(writer, request, null);
    const session = await store.sessions.open(key, () => ids.next("as"));
    const stack = await stacks.getOrLoad(key);
    // One child logger per request, made once its task is known: `session`, `request` and `task` on every line.
    const bound = (task: string) => this.deps.log.child({ session: key, request: request.id, task });
    let log: Logger;
    let input: TurnInput;
    // A new task is owned by the sender of its first message; an existing one keeps its owner.
    let owner = request.userId;
    // When the task began (for the line its end writes): now for a new one, else when its first request made it.
    let startedAt = (this.deps.clock ?? systemClock).now();

    if (request.status === "running" || request.kind === "approval") {
      // Started before a restart: its input is already in the log; continue from there.
      const task = await store.tasks.active(key);
      if (stack.isEmpty || !task) {
        this.deps.log.warn({ session: key, request: request.id, depth: stack.depth, task: task?.id }, "resumed request found no active stack; closing it");
        await journal.flush({ request: { id: request.id, status: "done" } });
        return;
      }
      const refusal = refusalFor(this.deps, this, request, task, journal);
      if (refusal) return void (await refusal());
      journal.taskId = task.id;
      log = bound(task.id);
      owner = task.ownerId;
      startedAt = task.createdAt;
      this.observer.task(key, task.id, stack.all()[0]?.traceparent);
      input = { kind: "resume" };
      if (request.kind === "approval") {
        journal.stage({ task: { id: task.id, status: "running" }, request: { id: request.id, status: "running", taskId: task.id } });
      }
      stacks.firstTask(key); // closeOrphans does that check now
      await this.closeOrphans(stack, journal);
      log.info({ depth: stack.depth }, "resuming a request interrupted by a restart");
    } else if (stack.isEmpty) {
      const taskId = ids.next("task");
      journal.taskId = taskId;
      log = bound(taskId);
      const main = await this.mainFrame(key, session.mainAgentSessionId);
      // The history earlier tasks left: what memory tools gave someone else is not this owner's to read.
      main.history = await privateTo(store, key, main.agentSessionId, main.history, request.userId);
      // A process that died while an abandoned call_agent callee was closing itself left that run open.
      if (stacks.firstTask(key)) await closeOpenSessions(store, journal, new Set([main.agentSessionId]), "interrupted by a restart");
      const traceparent = this.observer.traceparent(key);
      if (traceparent) main.traceparent = traceparent;
      this.observer.task(key, taskId, undefined);
      stack.push(main);
      journal.stage({
        taskCreated: { id: taskId, ownerId: request.userId, requestId: request.id, options: request.taskOptions },
        framesPushed: [main],
        request: { id: request.id, status: "running", taskId },
      });
      input = await this.userInput(request, writer, log);
      const memories = this.deps.settings.memory ? await this.recall(request, log) : null;
      if (memories) main.memories = memories;
      // Debug only: the task's end writes its one info line (taskEnd), so a message costs one formatted line, not two.
      log.debug({ frame: main.frameId, depth: stack.depth }, "task started: pushed main");
    } else {
      const task = await store.tasks.active(key);
      if (!task) throw new Error(`session ${key} has frames on its stack but no active task`);
      const refusal = refusalFor(this.deps, this, request, task, journal);
      if (refusal) return void (await refusal());
      journal.taskId = task.id;
      log = bound(task.id);
      owner = task.ownerId;
      startedAt = task.createdAt;
      this.observer.task(key, task.id, stack.all()[0]?.traceparent);
      journal.stage({ task: { id: task.id, status: "running" }, request: { id: request.id, status: "running", taskId: task.id } });
      input = await this.userInput(request, writer, log);
    }
    // The request's run is stopped by the worker (a /cancel, a shutdown: `signal`) and, when the session has a budget
    // or the owner a quota, by a model call over it. Only then does the run need a controller of its own, following
    // the worker's: without either, the worker's signal is the run's (one controller and one listener fewer a request).
    const budget = budgetOf(this.deps.settings);
    const quotas = this.deps.quotas?.enabled ? this.deps.quotas : null;
    if (!quotas && !limited(budget)) return this.loop(stack, journal, input, signal, log, owner, this.deps.model, startedAt);
    const run = new AbortController();
    const follow = () => run.abort(signal.reason);
    signal.addEventListener("abort", follow, { once: true });
    if (signal.aborted) follow();
    try {
      const stop = (reason: BudgetExceeded) => run.abort(reason);
      const spending = await requestBudget(() => store.sessions.usage(key), budget, stop);
      const budgeted = spending ? spending.model(this.deps.model) : this.deps.model;
      const model = quotas ? quotaModel(budgeted, quotas, owner, key, stop, request.id) : budgeted;
      await this.loop(stack, journal, input, run.signal, log, owner, model, startedAt);
    } finally {
      signal.removeEventListener("abort", follow);
    }
  }

  /** A message as its turn takes it: its text and its files (placed in the workspace when there is one). */
  private async userInput(request: RequestRecord, writer: SessionWriter, log: Logger): Promise<TurnInput> {
    const files = await placeReceived({ ...this.deps, log }, writer, await fileRefs(this.deps.store, request.id));
    return { kind: "user", text: request.text, files };
  }

  /**
   * Batch frames live only in memory: after a restart, the ones that were running are gone. Close them in
   * the log, so every started agent session ends; their caller's tool use is reported as interrupted.
   */
  private closeOrphans(stack: AgentStack, journal: Journal): Promise<void> {
    return closeOpenSessions(this.deps.store, journal, new Set(stack.all().map((f) => f.agentSessionId)), "interrupted by a restart");
  }

  /** The task owner's memories that matter for its first message; a store that cannot say gives none (logged). */
  private async recall(request: RequestRecord, log: Logger): Promise<string | null> {
    try {
      return await recallFor(this.deps.store, request.userId, request.text);
    } catch (error) {
      log.warn({ err: error }, "could not recall the user's memories; the task starts without them");
      return null;
    }
  }

  /** The main agent's frame as it would start now (for /context while idle). */
  async idleMainFrame(sessionKey: string): Promise<StackFrame> {
    return this.mainFrame(sessionKey, (await this.deps.store.sessions.open(sessionKey, () => this.deps.ids.next("as"))).mainAgentSessionId, false);
  }

  private async mainFrame(sessionKey: string, mainAgentSessionId: string, take = true): Promise<StackFrame> {
    const { settings, ids, tools, model } = this.deps;
    const catalog = this.deps.catalog();
    // The API's count for the last call carries over: a task's first call is measured like any other.
    const { history, contextTokens } = await this.deps.stacks.mainHistory(sessionKey, mainAgentSessionId, take);
    return {
      frameId: ids.next("frame"),
      agentName: "main",
      agentType: "main",
      definitionName: null,
      systemPrompt: mainSystemPrompt(catalog),
      model: settings.defaultModel || model.defaultModel,
      environment: {},
      iteration: 0,
      maxIterations: settings.maxIterations,
      effectiveTools: effectiveToolsFor("main", tools.names(), null),
      isSkillAgent: false,
      parentToolUseId: null,
      agentSessionId: mainAgentSessionId,
      mode: "interactive",
      callChain: ["main"],
      runningToolUseId: null,
      outputSchema: null,
      reportAttempts: 0,
      contextTokens,
      approvalTools: [],
      history,
    };
  }

  private async loop(
    stack: AgentStack,
    journal: Journal,
    first: TurnInput,
    signal: AbortSignal,
    log: Logger,
    owner: string,
    model: Model,
    startedAt: number,
  ): Promise<void> {
    const requestId = journal.requestId!;
    const taskId = journal.taskId!;
    let input = first;
    for (;;) {
      const frame = stack.top;
      if (!frame) throw new Error("the stack emptied while a request was running");
      const deps: TurnDeps = {
        ...this.deps,
        model,
        catalog: this.deps.catalog(),
        journal,
        signal,
        depth: stack.depth,
        owner,
        log: log.child({ frame: frame.frameId }),
        runBatch: runToCompletion,
        fileBlocks: this.fileBlocks,
      };
      const result = await executeTurn(frame, input, deps);
      input = { kind: "resume" };
      if (signal.aborted) {
        if (signal.reason instanceof BudgetExceeded) {
          const quota = signal.reason instanceof QuotaExceeded ? signal.reason.limit : null;
          const stopped = await endOverBudget(
            this.deps,
            journal,
            stack,
            signal.reason.message,
            quota ? "quota" : "budget",
            quota ? `stopped: ${quota} reached` : undefined,
          );
          this.observer.event(journal.sessionKey, "switchboard.task.failed", {
            "gen_ai.agent.name": frame.agentName,
            "error.type": quota ? "QUOTA" : "BUDGET",
            "error.message": signal.reason.message,
          });
          log.warn(
            { frame: frame.frameId, stopped, ...(quota ? { limit: quota } : {}), ...this.taskEnd(stack, quota ? "quota" : "budget", startedAt) },
            quota ? `${quota} reached mid-request: task ended` : "the session's budget ran out mid-request: task ended",
          );
          return;
        }
        // Shutting down: keep what is committed; the request resumes from there on the next start.
        this.deps.stacks.invalidate(journal.sessionKey);
        log.info({ frame: frame.frameId }, "turn aborted; the request will resume after restart");
        return;
      }
      switch (result.action) {
        case "SEND_TEXT":
        case "COMPLETE": {
          if (frame.agentType === "main") {
            stack.pop();
            await journal.flush({
              framesPopped: [frame.frameId],
              task: { id: taskId, status: "completed", result: result.text },
              request: { id: requestId, status: "done" },
              outbound: [this.outbound(journal, frame.agentName, 1, result.text, "message")],
              // What the user told in this task may be worth keeping: extracted in the background (MEMORY).
              ...(this.deps.settings.memory ? { memoryJob: { taskId, userId: owner } } : {}),
            });
            log.info({ frame: frame.frameId, ...this.taskEnd(stack, "completed", startedAt) }, "task completed");
            this.deps.stacks.invalidate(journal.sessionKey); // idle sessions keep no stack in memory
            // One with others' results hidden is read again from the log by the next task, as that task's owner may see it.
            if (!hidesResults(frame.history))
              this.deps.stacks.keepMainHistory(journal.sessionKey, frame.agentSessionId, { history: frame.history, contextTokens: frame.contextTokens });
            return;
          }
          if (result.action === "SEND_TEXT") {
            await journal.flush({
              task: { id: taskId, status: "waiting_user" },
              request: { id: requestId, status: "done" },
              outbound: [this.outbound(journal, frame.agentName, stack.depth, result.text, "message")],
            });
            return;
          }
          returnToParent(stack, journal, result.text, false, { structured: result.structured, maxChars: resultChars(this.deps.settings) });
          await journal.flush({
            framesPopped: [frame.frameId],
            ...(result.structured ? { task: { id: taskId, status: "running", structuredOutput: result.structured } } : {}),
            ...this.handBack(journal, frame, "finished"),
          });
          this.popped(journal, frame, stack.depth, "completed");
          log.info({ frame: frame.frameId, agent: frame.agentName, depth: stack.depth }, "child completed: popped");
          break;
        }
        case "CHILD_ACTIVATED":
          // The parent now waits, possibly for a long time: compact it if it is near its window.
          // The tool_use it waits on stays intact, so the child's result still lands.
          await compactIfNeeded(frame, deps);
          pushChild(stack, result.child, journal);
          await journal.flush({ framesPushed: [result.child] });
          this.deps.onEvent?.(journal.sessionKey, { type: "push", agent: result.child.agentName, depth: stack.depth });
          this.observer.event(journal.sessionKey, "switchboard.stack.push", { "gen_ai.agent.name": result.child.agentName, "switchboard.stack.depth": stack.depth });
          log.info({ frame: result.child.frameId, agent: result.child.agentName, depth: stack.depth }, "child activated: pushed");
          break;
        case "INTERRUPT": {
          // Tool calls wait for the owner: the frame stays on the stack with them unresolved.
          await journal.flush({
            approvalsCreated: result.approvals.map((a) => ({
              ...a,
              taskId,
              requestId,
              frameId: frame.frameId,
              agent: frame.agentName,
              ownerId: owner,
              timeoutMs: this.deps.settings.approvalTimeoutMs,
            })),
            task: { id: taskId, status: "waiting_approval" },
            request: { id: requestId, status: "done" },
            outbound: result.approvals.map((a) => ({
              ...this.outbound(
                journal,
                frame.agentName,
                stack.depth,
                approvalPrompt({ agent: frame.agentName, tool: a.toolName, input: a.input, id: a.id }, this.deps.tools.get(a.toolName)),
                "notice",
              ),
              approvalId: a.id,
            })),
          });
          for (const a of result.approvals) {
            this.observer.event(journal.sessionKey, "switchboard.approval.requested", {
              "switchboard.approval.id": a.id,
              "gen_ai.tool.name": a.toolName,
              "gen_ai.agent.name": frame.agentName,
            });
          }
          log.info({ frame: frame.frameId, approvals: result.approvals.map((a) => a.id) }, "waiting for approval");
          return;
        }
        case "MAX_ITERATIONS":
        case "ERROR": {
          const parent = returnToParent(stack, journal, result.text, true);
          // Main's: the task ends here, and this warning is its end's line.
          const end = parent ? { depth: stack.depth } : this.taskEnd(stack, "failed", startedAt);
          log.warn({ frame: frame.frameId, agent: frame.agentName, reason: result.text, ...end }, `${result.action}: popped`);
          if (parent) {
            await journal.flush({ framesPopped: [frame.frameId], ...this.handBack(journal, frame, "stopped before finishing") });
            this.popped(journal, frame, stack.depth, result.action === "ERROR" ? "error" : "max_iterations");
            break;
          }
          this.observer.event(journal.sessionKey, "switchboard.task.failed", {
            "gen_ai.agent.name": frame.agentName,
            "error.type": result.action,
            "error.message": result.text.slice(0, 500),
          });
          try {
            await journal.flush({
              framesPopped: [frame.frameId],
              task: { id: taskId, status: "failed", error: result.text },
              request: { id: requestId, status: "failed", error: result.text, errorCode: "engine" },
              outbound: [this.outbound(journal, "switchboard", 0, `Sorry, I could not finish that: ${result.text}`, "error")],
            });
          } finally {
            // After the commit: a reader (/status) that loads the stack meanwhile must not cache the one being ended.
            this.deps.stacks.taskEnded(journal.sessionKey);
          }
          return;
        }
        default: {
          const never: never = result;
          throw new Error(`unknown turn result ${JSON.stringify(never)}`);
        }
      }
    }
  }

  /** The stack's depth and the task's outcome and duration, for the line its end writes. */
  private taskEnd(stack: AgentStack, outcome: TaskOutcome, startedAt: number) {
    return { depth: stack.depth, ...taskEnd(this.deps.clock, outcome, startedAt) };
  }

  private popped(journal: Journal, frame: StackFrame, depth: number, how: string): void {
    this.deps.onEvent?.(journal.sessionKey, { type: "pop", agent: frame.agentName, depth });
    this.observer.event(journal.sessionKey, "switchboard.stack.pop", {
      "gen_ai.agent.name": frame.agentName,
      "switchboard.stack.depth": depth,
      "switchboard.outcome": how,
    });
  }

  /** The line that shows a child handed the chat back ("Interview skill finished"), unless HANDBACK_NOTICE=off. */
  private handBack(journal: Journal, frame: StackFrame, how: string): { outbound?: OutboundInput[] } {
    if (this.deps.settings.handbackNotice === false || frame.mode !== "interactive") return {};
    return { outbound: [this.outbound(journal, "switchboard", 0, `${agentLabel(frame.agentName)} ${how}.`, "notice")] };
  }

  outbound(journal: Journal, agent: string, depth: number, text: string, kind: OutboundInput["kind"]): OutboundInput {
    return { id: this.deps.ids.next("out"), requestId: journal.requestId, taskId: journal.taskId, agent, depth, text, kind };
  }
}
