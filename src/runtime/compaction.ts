import { NO_OBSERVER } from "./observer.js";
import { ModelError } from "../llm/model.js";
import { estimateRequest, estimateTokens, estimateToolTokens } from "../llm/tokens.js";
import { textOf, type ChatMessage, type ToolUseBlock, type UserBlock } from "../llm/types.js";
import type { TurnDeps } from "./executor.js";
import type { StackFrame } from "./frame.js";
import { unresolvedToolUses } from "./history.js";
import { CARRIED_PREFIX, carriedArtifacts, recentArtifacts } from "./artifacts.js";
import { fitWithin } from "./result-bound.js";
import { isMemoryTool, memoryToolUses } from "./memory/private-results.js";
import { searchLine } from "./search-blocks.js";

// Per-frame compaction: when a frame's context nears the model's window, its history is replaced by a
// handoff summary plus the newest user messages. The log keeps everything; a `compaction` entry marks
// where the frame's history restarts (rebuildHistory honours it).

/** Starts every summary message, so it can be recognised (and not kept as a user message) later. */
export const SUMMARY_PREFIX = "[Summary of the earlier conversation]";
export const FALLBACK_LIMIT_TOKENS = 200_000;
const MAX_SUMMARY_ATTEMPTS = 3;
const TOOL_OUTPUT_CAP = 1_500;
const MESSAGE_CAP = 4_000;

export const COMPACTION_PROMPT = `You compact a conversation so it can continue in a fresh context window.
Write a handoff summary for the assistant that will continue it. Cover, in short sections:
- progress so far and what was decided;
- the user's preferences and constraints;
- open questions;
- the next steps;
- critical data, copied verbatim: ids, file paths, URLs, names, numbers, dates.
Write only the summary. Do not address the user and do not invent anything.`;

/** The model's context window: configuration first (per model, then `*`), then the Models API, then 200k. */
export async function contextLimit(frame: StackFrame, deps: Pick<TurnDeps, "settings" | "model">): Promise<number> {
  const limits = deps.settings.contextTokens;
  // Own keys only: a definition naming its model "constructor" must not read Object.prototype.
  const configured = Object.hasOwn(limits, frame.model) ? limits[frame.model] : limits["*"];
  if (configured) return configured;
  return (await deps.model.contextLimit(frame.model)) ?? FALLBACK_LIMIT_TOKENS;
}

/** Per history: how many messages were counted, their tokens, and the last one's share (it may still grow). */
const counted = new WeakMap<ChatMessage[], { messages: number; tokens: number; last: number }>();

/** The history's estimate, counting only what changed since the last call: histories grow at the end. */
function historyTokens(history: ChatMessage[]): number {
  const known = counted.get(history);
  let from = 0;
  let tokens = 0;
  if (known && known.messages > 0 && known.messages <= history.length) {
    from = known.messages - 1;
    tokens = known.tokens - known.last;
  }
  let last = 0;
  for (let i = from; i < history.length; i++) {
    last = estimateTokens(history[i]!);
    tokens += last;
  }
  counted.set(history, { messages: history.length, tokens, last });
  return tokens;
}

/**
 * Tokens the frame's next request would use: the local estimate, or the API's figure for its last call plus the
 * estimate of what joined the history since that call's reply (tool results, the user's next message), whichever
 * is larger. The API counts what the estimate cannot (another script, dense JSON); the estimate sees what is new.
 */
export function contextUsage(frame: StackFrame, deps: Pick<TurnDeps, "tools" | "catalog">): number {
  const estimate = estimateTokens(frame.systemPrompt) + estimateToolTokens(deps.tools.specsFor(frame, deps.catalog)) + historyTokens(frame.history);
  if (frame.contextTokens === 0) return estimate;
  let since = 0;
  for (let i = frame.history.length - 1; i >= 0 && frame.history[i]!.role !== "assistant"; i--) since += estimateTokens(frame.history[i]!);
  return Math.max(estimate, frame.contextTokens + since);
}

/** Compacts the frame if its context is at or over the threshold. Returns whether it did. */
export async function compactIfNeeded(frame: StackFrame, deps: TurnDeps): Promise<boolean> {
  const limit = await contextLimit(frame, deps);
  const before = contextUsage(frame, deps);
  if (before < deps.settings.compactionThreshold * limit) return false;
  // Nothing to summarise yet (a task message alone): compacting would only cut the task short. Results that came
  // in since can still be cut to fit.
  if (!splitTail(frame.history).head.some((m) => m.role === "assistant")) return cutTail(frame, deps, before, limit);
  await compact(frame, deps, before, limit);
  return true;
}

export async function compact(frame: StackFrame, deps: TurnDeps, before: number, limit: number): Promise<void> {
  const { head, tail } = splitTail(frame.history);
  const summarised = await summarise(head, frame, deps, limit);
  const summary = summarised ?? fallbackSummary(head);
  // Never keep more than a third of the window verbatim, or compaction could not make room.
  const kept = newestUserTexts(head, Math.min(deps.settings.compactionKeepTokens, Math.floor(limit / 3)));
  const opening: UserBlock[] = [
    { type: "text", text: `${SUMMARY_PREFIX}\n${summary}` },
    ...carriedArtifacts(head),
    ...kept.map((text) => ({ type: "text" as const, text })),
  ];
  // Not sanitised here: a pending tool_use in the tail must stay open for the child's result.
  // (Sanitisation runs before every model call.)
  const { history, cut } = fitTail(frame, deps, [{ role: "user", content: opening }], tail, limit);
  const after = contextUsage({ ...frame, history, contextTokens: 0 }, deps);
  deps.journal.append(frame, "compaction", {
    summary,
    fallback: summarised === null,
    history,
    tokens_before: before,
    tokens_after: after,
    limit,
    ...(cut > 0 ? { results_cut: cut } : {}),
  });
  frame.history = history;
  frame.contextTokens = 0;
  deps.journal.touch(frame);
  deps.log.info({ frame: frame.frameId, agent: frame.agentName, before, after, limit, fallback: summarised === null }, "compacted a frame's history");
  deps.observer?.event(deps.journal.sessionKey, "switchboard.compaction", {
    "gen_ai.agent.name": frame.agentName,
    "switchboard.compaction.tokens_before": before,
    "switchboard.compaction.tokens_after": after,
    "switchboard.compaction.fallback": summarised === null,
  });
  // Said each time: the user should know when earlier details now live only in a summary.
  deps.journal.stage({
    outbound: [
      {
        id: deps.ids.next("out"),
        requestId: deps.journal.requestId,
        taskId: deps.journal.taskId,
        agent: "switchboard",
        depth: 0,
        text: `(Our conversation got long, so I summarised the earlier part${frame.agentType === "main" ? "" : ` of ${frame.agentName}'s work`} to keep going.)`,
        kind: "notice",
      },
    ],
  });
}

/**
 * The tail (what compaction keeps verbatim) after `start`, its tool results cut so that the whole sits below the
 * threshold with room to spare: compaction cannot summarise what a mid-turn model call still needs, but it can
 * shorten it, and the cut note says how to read the rest.
 */
function fitTail(frame: StackFrame, deps: TurnDeps, start: ChatMessage[], tail: ChatMessage[], limit: number): { history: ChatMessage[]; cut: number } {
  const target = Math.floor(deps.settings.compactionThreshold * limit * 0.9);
  const fitted = fitWithin(tail, (messages) => contextUsage({ ...frame, history: [...start, ...messages], contextTokens: 0 }, deps) - target);
  return { history: [...start, ...fitted.messages], cut: fitted.cut };
}

/** Only the tail's results are cut (nothing to summarise yet); logged like a compaction so a restart rebuilds it. */
function cutTail(frame: StackFrame, deps: TurnDeps, before: number, limit: number): boolean {
  const { head, tail } = splitTail(frame.history);
  const { history, cut } = fitTail(frame, deps, head, tail, limit);
  if (cut === 0) return false;
  const after = contextUsage({ ...frame, history, contextTokens: 0 }, deps);
  deps.journal.append(frame, "compaction", { summary: null, fallback: false, history, tokens_before: before, tokens_after: after, limit, results_cut: cut });
  frame.history = history;
  frame.contextTokens = 0;
  deps.journal.touch(frame);
  deps.log.info({ frame: frame.frameId, agent: frame.agentName, before, after, limit, cut }, "cut tool results to fit the context window");
  deps.observer?.event(deps.journal.sessionKey, "switchboard.compaction", {
    "gen_ai.agent.name": frame.agentName,
    "switchboard.compaction.tokens_before": before,
    "switchboard.compaction.tokens_after": after,
    "switchboard.compaction.results_cut": cut,
  });
  return true;
}

/** A "summary" that says there is nothing to summarise is no summary: the fallback built from the history is better. */
const SAYS_NOTHING = /\b(no|nothing|not any)\b[^.]{0,60}\b(summari[sz]e|earlier|previous|prior|conversation|history|context)\b/i;

export function usefulSummary(text: string): boolean {
  return text.trim().length >= 20 && !(text.length < 300 && SAYS_NOTHING.test(text));
}

/**
 * What must stay verbatim: mid-turn (tool results waiting for the model) the last assistant message and
 * its results; when the frame waits for a child, the message with the pending tool_use it waits on.
 */
function splitTail(history: ChatMessage[]): { head: ChatMessage[]; tail: ChatMessage[] } {
  const lastAssistant = history.map((m) => m.role).lastIndexOf("assistant");
  if (lastAssistant < 0) return { head: history, tail: [] };
  const last = history[history.length - 1]!;
  const midTurn = last.role === "user" && last.content.some((b) => b.type === "tool_result");
  if (!midTurn && unresolvedToolUses(history).length === 0) return { head: history, tail: [] };
  return { head: history.slice(0, lastAssistant), tail: history.slice(lastAssistant) };
}

/** The newest user texts within `budget` tokens, oldest first; the oldest that overflows keeps its end. */
function newestUserTexts(head: ChatMessage[], budget: number): string[] {
  const texts = head
    .filter((m) => m.role === "user")
    .flatMap((m) => m.content.filter((b): b is { type: "text"; text: string } => b.type === "text").map((b) => b.text))
    .filter((t) => !t.startsWith(SUMMARY_PREFIX) && !t.startsWith(CARRIED_PREFIX));
  const kept: string[] = [];
  let left = budget;
  for (let i = texts.length - 1; i >= 0 && left > 0; i--) {
    const text = texts[i]!;
    const cost = estimateTokens(text);
    if (cost <= left) {
      kept.unshift(text);
      left -= cost;
    } else {
      kept.unshift(`…${text.slice(text.length - left * 4)}`);
      left = 0;
    }
  }
  return kept;
}

/**
 * The head as transcript lines, big tool outputs and long messages trimmed. What memory tools returned stays out: the
 * summary outlives the task, and the next one may be someone else's (memory/private-results.ts).
 */
function transcript(head: ChatMessage[]): string[] {
  const cap = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)} […${text.length - max} more characters]` : text);
  const memory = memoryToolUses(head);
  const lines: string[] = [];
  for (const message of head) {
    for (const block of message.content) {
      if (block.type === "text") lines.push(`${message.role === "user" ? "User" : "Assistant"}: ${cap(block.text, MESSAGE_CAP)}`);
      else if (block.type === "tool_use") lines.push(`Assistant called ${block.name} with ${cap(JSON.stringify(block.input), MESSAGE_CAP)}`);
      else if (block.type === "server_tool_use" || block.type === "web_search_tool_result") lines.push(searchLine(block));
      // Files are named, never inlined: the summary is text.
      else if (block.type === "image") lines.push("User: (an image)");
      else if (block.type === "document") lines.push(`User: (a document${block.title ? ` "${block.title}"` : ""})`);
      // The summary names each file with its id, so view_file can bring it back after the compaction.
      else if (block.type === "file")
        lines.push(`User sent the file ${block.file_id}: ${block.name} (${block.mime})${block.path ? `, in the workspace at ${block.path}` : ""}`);
      else if (memory.has(block.tool_use_id)) lines.push(PRIVATE_RESULT);
      else lines.push(`Result${block.is_error ? " (error)" : ""}: ${cap(block.content, TOOL_OUTPUT_CAP)}`);
    }
  }
  return lines;
}

const PRIVATE_RESULT = "Result: (a memory tool's result, private to the user it belongs to; left out of the summary)";

/** Asks the model for the handoff summary; drops the oldest lines when the request is too long. Null if unusable. */
async function summarise(head: ChatMessage[], frame: StackFrame, deps: TurnDeps, limit: number): Promise<string | null> {
  let lines = transcript(head);
  for (let attempt = 0; attempt < MAX_SUMMARY_ATTEMPTS && lines.length > 0; attempt++) {
    const request = {
      model: frame.model,
      system: COMPACTION_PROMPT,
      messages: [
        { role: "user" as const, content: [{ type: "text" as const, text: `The conversation so far:\n\n${lines.join("\n")}\n\nWrite the handoff summary now.` }] },
      ],
      tools: [],
      signal: deps.signal,
    };
    if (estimateRequest(request) > limit * 0.9) {
      lines = lines.slice(Math.ceil(lines.length / 4));
      continue;
    }
    try {
      const response = await (deps.observer ?? NO_OBSERVER).modelCall(deps.journal.sessionKey, frame, request, () => deps.model.complete(request));
      deps.journal.addUsage(response.usage);
      const text = textOf(response.content);
      return usefulSummary(text) ? text : null;
    } catch (error) {
      if (error instanceof ModelError && error.promptTooLong) {
        lines = lines.slice(Math.ceil(lines.length / 2));
        continue;
      }
      deps.log.warn({ frame: frame.frameId, err: error instanceof Error ? error.message : String(error) }, "summary failed; using the fallback");
      return null;
    }
  }
  return null;
}

/** Built from the history alone, so compaction always succeeds. */
export function fallbackSummary(head: ChatMessage[]): string {
  const users = head
    .filter((m) => m.role === "user")
    .map((m) => textOf(m.content))
    .filter((t) => t && !t.startsWith(SUMMARY_PREFIX));
  const assistants = head
    .filter((m) => m.role === "assistant")
    .map((m) => textOf(m.content))
    .filter(Boolean);
  const uses = new Map<string, ToolUseBlock>();
  const outcomes: string[] = [];
  const children: string[] = [];
  for (const message of head) {
    for (const block of message.content) {
      if (block.type === "tool_use") uses.set(block.id, block);
      if (block.type === "web_search_tool_result") outcomes.push(`- web_search: ${searchLine(block)}`);
      if (block.type === "tool_result") {
        const use = uses.get(block.tool_use_id);
        if (!use) continue;
        const result = block.content.slice(0, 200);
        if (["use_skill", "use_agent", "call_agent"].includes(use.name)) {
          children.push(`- ${String(use.input.name ?? use.input.agent)}: ${block.is_error ? "failed: " : ""}${result}`);
        } else if (isMemoryTool(use.name)) {
          outcomes.push(`- ${use.name}: (private to the user it belongs to)`);
        } else {
          outcomes.push(`- ${use.name}: ${block.is_error ? "error: " : ""}${result}`);
        }
      }
    }
  }
  const section = (title: string, items: string[]) => (items.length ? [`${title}:`, ...items.slice(-10)] : []);
  return [
    "(Automatic summary: the model's summary was not available.)",
    ...(users.length ? [`Last user request: ${users[users.length - 1]!.slice(0, 500)}`] : []),
    ...section("Tools run", outcomes),
    ...section("Skills and agents invoked", children),
    ...section(
      "Recent artifacts from tools (most recent last)",
      recentArtifacts(head, undefined, true).map((item) => `- ${item}`),
    ),
    ...(assistants.length ? [`Last assistant reply: ${assistants[assistants.length - 1]!.slice(0, 500)}`] : []),
  ].join("\n");
}
