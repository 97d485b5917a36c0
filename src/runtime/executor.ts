import type { Logger } from "pino";
import type { Catalog } from "../catalog/definition.js";
import type { RuntimeStore } from "./orchestrator.js";
import { ModelError, type Model } from "../llm/model.js";
import { textOf, toolUsesOf, type AssistantBlock, type FileRefBlock } from "../llm/types.js";
import type { SchemaChecker } from "../catalog/schema-checker.js";
import type { CallLimiter } from "./call-limiter.js";
import type { Ids, RuntimeSettings, Timers } from "./deps.js";
import { TurnAction, type StackFrame, type TurnResult } from "./frame.js";
import { appendBlocks, sanitise, unresolvedToolUses } from "./history.js";
import { addUserText } from "./messages.js";
import type { Journal } from "./journal.js";
import { NO_OBSERVER, type TurnObserver } from "./observer.js";
import { resolveToolUses } from "./tool-calls.js";
import { artifactsHint } from "./artifacts.js";
import { compactIfNeeded, contextLimit } from "./compaction.js";
import { replyText } from "./search-blocks.js";
import { fallbacksFor } from "./fallbacks.js";
import { joinSteering } from "./steering.js";
import type { PlaceFile } from "./received-files.js";
import { FileBlockCache, showFiles } from "./file-blocks.js";
import type { ToolRegistry } from "./tools/registry.js";
import type { ToolOutput } from "./tools/tool.js";

export interface TurnDeps {
  store: RuntimeStore;
  model: Model;
  tools: ToolRegistry;
  catalog: Catalog;
  settings: RuntimeSettings;
  ids: Ids;
  journal: Journal;
  signal: AbortSignal;
  log: Logger;
  limiter: CallLimiter;
  timers: Timers;
  /** Output schemas: compiled and checked on a worker thread with a time limit (catalog/schema-checker.ts). */
  schemas: SchemaChecker;
  /** Runs a batch child to the end (runtime/batch.ts); injected to keep the import graph acyclic. */
  runBatch(child: StackFrame, deps: TurnDeps): Promise<ToolOutput>;
  /** The task's owner: whose memories the memory tools read and write. */
  owner?: string;
  /** The frame's depth on the session's stack (1 = main); set for the frames the user talks to. */
  depth?: number;
  /**
   * MID_TURN=steer: the owner's messages waiting behind the running request (oldest first), which join the frame
   * the user talks to at its next model call. Absent: they wait for the turn to end.
   */
  steering?: (sessionKey: string, runningRequestId: string) => Promise<Array<{ id: string; text: string }>>;
  /** Traces and metrics (src/telemetry); absent: nothing watches. */
  observer?: TurnObserver;
  /** Files prepared for the model, kept between calls (file-blocks.ts); absent: prepared at every call. */
  fileBlocks?: FileBlockCache;
  /** WORKSPACE=on: puts a message's files in the session's workspace (received-files.ts). */
  placeFile?: PlaceFile;
  /** Where reply text goes as the model writes it (the gateway routes it to the chat); `reset` takes it back. */
  onEvent?: (sessionKey: string, event: PreviewEvent) => void;
}

/**
 * A reply being written: a piece of text (`text` is the new piece only), or `reset` when the model call failed after
 * it began to stream and starts over, so what was shown of it is void. A preview: the committed reply is the truth.
 */
export type PreviewEvent =
  | { type: "delta"; agent: string; depth: number; text: string; requestId: string | null }
  | { type: "reset"; agent: string; depth: number; requestId: string | null };

/** `resume` continues from the history as stored: after a restart, or after the orchestrator injected a result. */
export type TurnInput = { kind: "user"; text: string; files?: FileRefBlock[] } | { kind: "resume" };

/** One logical turn of one frame: model calls and tool runs until it has something for the orchestrator. */
export function executeTurn(frame: StackFrame, input: TurnInput, deps: TurnDeps): Promise<TurnResult> {
  return (deps.observer ?? NO_OBSERVER).agentTurn(deps.journal.sessionKey, frame, deps.depth, () => turn(frame, input, deps));
}

async function turn(frame: StackFrame, input: TurnInput, deps: TurnDeps): Promise<TurnResult> {
  const { journal } = deps;
  if (input.kind === "user") {
    addUserText(frame, journal, input.text, input.files);
    frame.iteration = 0;
    journal.touch(frame);
  }
  // The API paused a long turn of its own tools (web search): the reply so far goes back as it is, to be continued.
  let paused = false;
  for (;;) {
    let uses = unresolvedToolUses(frame.history);
    if (uses.length === 0) {
      const last = frame.history[frame.history.length - 1];
      // Its reply was stored but not delivered before a restart: deliver it now.
      if (last?.role === "assistant" && !paused) return { action: TurnAction.SEND_TEXT, text: replyText(last.content) };
      if (frame.iteration >= frame.maxIterations) {
        return {
          action: TurnAction.MAX_ITERATIONS,
          text: `${frame.agentName} stopped after reaching its limit of ${frame.maxIterations} iterations`,
        };
      }
      frame.iteration += 1;
      journal.touch(frame);
      if (deps.steering) await joinSteering(frame, deps);
      const response = await callModel(frame, deps);
      if ("error" in response) return { action: TurnAction.ERROR, text: response.error };
      uses = toolUsesOf(response.content);
      paused = uses.length === 0 && response.stopReason === "pause_turn";
      if (paused) continue;
      if (uses.length === 0) return { action: TurnAction.SEND_TEXT, text: replyText(frame.history[frame.history.length - 1]!.content as AssistantBlock[]) };
      sayBeforeTools(frame, textOf(response.content), deps);
    }
    const outcome = await resolveToolUses(frame, uses, deps);
    if (outcome) return outcome;
    await journal.flush();
  }
}

/**
 * One model call and its reply in the history. A request the API finds too long for the window (its count is above
 * the local estimate: another script, dense JSON) is compacted with the API's count and sent once more.
 */
async function callModel(frame: StackFrame, deps: TurnDeps, retried = false): Promise<{ content: AssistantBlock[]; stopReason: string | null } | { error: string }> {
  await compactIfNeeded(frame, deps);
  const { messages: stored, repairs } = sanitise(frame.history);
  if (repairs.length > 0) deps.log.warn({ repairs }, "repaired the history before a model call");
  const messages = await showFiles(stored, { store: deps.store, cache: deps.fileBlocks ?? new FileBlockCache(), log: deps.log });
  try {
    const request = {
      model: frame.model,
      system: frame.systemPrompt,
      ...volatile(frame),
      messages,
      tools: deps.tools.specsFor(frame, deps.catalog),
      signal: deps.signal,
      ...withFallbacks(fallbacksFor(frame, deps.catalog)),
      ...streaming(frame, deps),
    };
    const response = await (deps.observer ?? NO_OBSERVER).modelCall(deps.journal.sessionKey, frame, request, () => deps.model.complete(request));
    deps.journal.addUsage(response.usage);
    const u = response.usage;
    frame.contextTokens = u.inputTokens + u.outputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
    const content: AssistantBlock[] = response.content.length > 0 ? response.content : [{ type: "text", text: "(no reply)" }];
    appendBlocks(frame.history, "assistant", content);
    deps.journal.append(frame, "message", {
      role: "assistant",
      content,
      usage: response.usage,
      stop_reason: response.stopReason,
      // The model that wrote it (a fallback, when the frame's own failed): its usage is priced at that model's price.
      ...(response.model ? { model: response.model } : {}),
      model_request_id: response.requestId,
    });
    return { content, stopReason: response.stopReason };
  } catch (error) {
    const message = error instanceof ModelError ? error.message : String(error);
    // A call cancelled by a stop (Ctrl-C, /cancel) is not a failure worth a warning: the request resumes or ends.
    if (deps.signal.aborted) deps.log.info({ agent: frame.agentName }, "model call cancelled");
    else deps.log.warn({ agent: frame.agentName, err: message }, "model call failed");
    if (!retried && error instanceof ModelError && error.promptTooLong) {
      frame.contextTokens = Math.max(frame.contextTokens, Number(/(\d+) tokens >/.exec(message)?.[1]) || (await contextLimit(frame, deps)));
      deps.journal.touch(frame);
      if (await compactIfNeeded(frame, deps)) return callModel(frame, deps, true);
    }
    return { error: message };
  }
}

/** What changes between calls or tasks, after the cached prefix: the user's memories, recent artifacts (main). */
function volatile(frame: StackFrame): { volatileSystem?: string } {
  const parts = [frame.memories ?? "", frame.agentType === "main" ? (artifactsHint(frame.history) ?? "") : ""].filter((p) => p !== "");
  return parts.length > 0 ? { volatileSystem: parts.join("\n\n") } : {};
}

/**
 * What the model wrote beside its tool calls ("let me check that…") is said to the user before the tools run, and
 * committed with that step (interactive frames only: a batch run's words are for its caller).
 */
function sayBeforeTools(frame: StackFrame, text: string, deps: TurnDeps): void {
  if (text.trim() === "" || frame.mode !== "interactive" || deps.depth === undefined) return;
  const { journal } = deps;
  journal.stage({
    outbound: [{ id: deps.ids.next("out"), requestId: journal.requestId, taskId: journal.taskId, agent: frame.agentName, depth: deps.depth, text, kind: "message" }],
  });
}

function withFallbacks(models: string[] | undefined): { fallbackModels?: string[] } {
  return models ? { fallbackModels: models } : {};
}

/** The user watches interactive frames write; batch runs (call_agent, mode: batch) answer their caller, not the chat. */
function streaming(frame: StackFrame, deps: TurnDeps): { onText?: (delta: string) => void; onReset?: () => void } {
  const { onEvent, depth } = deps;
  if (!onEvent || depth === undefined || frame.mode !== "interactive") return {};
  const sessionKey = deps.journal.sessionKey;
  const requestId = deps.journal.requestId;
  const agent = frame.agentName;
  return {
    onText: (text) => onEvent(sessionKey, { type: "delta", agent, depth, text, requestId }),
    onReset: () => onEvent(sessionKey, { type: "reset", agent, depth, requestId }),
  };
}
