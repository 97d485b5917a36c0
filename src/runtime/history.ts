import { z } from "zod";
import type { AssistantBlock, ChatMessage, ToolResultBlock, ToolUseBlock, UserBlock, WebSearchErrorCode } from "../llm/types.js";
import { CorruptStateError, type LogEntry } from "../store/store.js";
import { pairedSearches } from "./search-blocks.js";

/** Appends blocks to a history, merging into the last message when it has the same role. */
export function appendBlocks(history: ChatMessage[], role: "user", blocks: UserBlock[]): void;
export function appendBlocks(history: ChatMessage[], role: "assistant", blocks: AssistantBlock[]): void;
export function appendBlocks(history: ChatMessage[], role: "user" | "assistant", blocks: (UserBlock | AssistantBlock)[]): void {
  const last = history[history.length - 1];
  if (last && last.role === role) {
    (last.content as (UserBlock | AssistantBlock)[]).push(...blocks);
  } else {
    history.push({ role, content: [...blocks] } as ChatMessage);
  }
}

/**
 * The tool uses of the last assistant message that have no result yet — the "#1 done, #2 spawned
 * a child, #3 not yet run" case after a child's result has been injected.
 */
export function unresolvedToolUses(history: readonly ChatMessage[]): ToolUseBlock[] {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    if (message.role !== "assistant") continue;
    const resolved = new Set<string>();
    for (const later of history.slice(i + 1)) {
      for (const block of later.content) if (block.type === "tool_result") resolved.add(block.tool_use_id);
    }
    return message.content.filter((b): b is ToolUseBlock => b.type === "tool_use" && !resolved.has(b.id));
  }
  return [];
}

const citation = z.object({
  type: z.literal("web_search_result_location"),
  url: z.string(),
  title: z.string().nullable(),
  cited_text: z.string(),
  encrypted_index: z.string(),
});
const textBlock = z.object({ type: z.literal("text"), text: z.string(), citations: z.array(citation).optional() });
const toolUseBlock = z.object({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
// The web search tool's blocks go back to the API exactly as it sent them (see llm/types.ts).
const serverToolUseBlock = z.object({ type: z.literal("server_tool_use"), id: z.string(), name: z.literal("web_search"), input: z.record(z.string(), z.unknown()) });
const webSearchResultBlock = z.object({
  type: z.literal("web_search_tool_result"),
  tool_use_id: z.string(),
  content: z.union([
    z.array(
      z.object({ type: z.literal("web_search_result"), url: z.string(), title: z.string(), encrypted_content: z.string(), page_age: z.string().nullable().optional() }),
    ),
    // Kept as the API named it, also for a code this version does not list.
    z.object({ type: z.literal("web_search_tool_result_error"), error_code: z.string().transform((code) => code as WebSearchErrorCode) }),
  ]),
});
// A stored file named by id (llm/types.ts FileRefBlock): the log never holds a file's bytes.
const fileBlock = z.object({
  type: z.literal("file"),
  file_id: z.string(),
  name: z.string(),
  mime: z.string(),
  kind: z.enum(["image", "pdf", "text", "audio", "video", "other"]),
  size: z.number(),
  path: z.string().optional(),
  unplaced: z.string().optional(),
});
const assistantBlock = z.union([textBlock, toolUseBlock, serverToolUseBlock, webSearchResultBlock]);
const messagePayload = z.discriminatedUnion("role", [
  z.object({ role: z.literal("user"), content: z.array(z.union([textBlock, fileBlock])) }),
  z.object({ role: z.literal("assistant"), content: z.array(assistantBlock) }),
]);
const toolResultPayload = z.object({ tool_use_id: z.string(), content: z.string(), is_error: z.boolean() });
const toolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.string(),
  is_error: z.boolean().optional(),
});
const compactionPayload = z.object({
  history: z.array(
    z.discriminatedUnion("role", [
      z.object({ role: z.literal("user"), content: z.array(z.union([textBlock, toolResultBlock, fileBlock])) }),
      z.object({ role: z.literal("assistant"), content: z.array(assistantBlock) }),
    ]),
  ),
});

/** Rebuilds a frame's model history from its context-log rows. */
export function rebuildHistory(entries: readonly LogEntry[]): ChatMessage[] {
  const history: ChatMessage[] = [];
  for (const entry of entries) {
    if (entry.type === "message") {
      const parsed = messagePayload.safeParse(entry.payload);
      if (!parsed.success) throw new CorruptStateError(`context log row ${entry.seq} is not a valid message`);
      const m = parsed.data;
      if (m.role === "user") appendBlocks(history, "user", m.content);
      else appendBlocks(history, "assistant", m.content);
    } else if (entry.type === "compaction") {
      // The frame's history restarts here: summary, kept messages, and any pending tail.
      const parsed = compactionPayload.safeParse(entry.payload);
      if (!parsed.success) throw new CorruptStateError(`context log row ${entry.seq} is not a valid compaction`);
      history.length = 0;
      for (const m of parsed.data.history) {
        if (m.role === "user")
          appendBlocks(
            history,
            "user",
            m.content.map((b) => (b.type === "tool_result" ? toolResult(b.tool_use_id, b.content, b.is_error === true) : b)),
          );
        else appendBlocks(history, "assistant", m.content);
      }
    } else if (entry.type === "tool_result") {
      const parsed = toolResultPayload.safeParse(entry.payload);
      if (!parsed.success) throw new CorruptStateError(`context log row ${entry.seq} is not a valid tool_result`);
      appendBlocks(history, "user", [toolResult(parsed.data.tool_use_id, parsed.data.content, parsed.data.is_error)]);
    }
  }
  return history;
}

const usagePayload = z.object({
  role: z.literal("assistant"),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), cacheReadTokens: z.number().optional(), cacheWriteTokens: z.number().optional() }),
});

/**
 * What the API counted for a frame's last model call (its reply's usage, cache included), read from the frame's rows:
 * 0 when a compaction came after it (its history is another then) or no call was made.
 */
export function lastContextTokens(entries: readonly LogEntry[]): number {
  let tokens = 0;
  for (const entry of entries) {
    if (entry.type === "compaction") tokens = 0;
    if (entry.type !== "message") continue;
    const parsed = usagePayload.safeParse(entry.payload);
    if (!parsed.success) continue;
    const u = parsed.data.usage;
    tokens = u.inputTokens + u.outputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
  }
  return tokens;
}

export function toolResult(toolUseId: string, content: string, isError: boolean): ToolResultBlock {
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    // The API rejects empty text; an empty result still needs to say something.
    content: content === "" ? (isError ? "error" : "(empty result)") : content,
    ...(isError ? { is_error: true } : {}),
  };
}

export const MISSING_RESULT = "no result was recorded for this tool call";
export const CONTEXT_PLACEHOLDER = "(the conversation continues from earlier messages)";

/**
 * Repairs a history so the Messages API accepts it: no empty text, alternating roles, the first
 * message from the user, every tool_use answered exactly once in the next message, tool_results first.
 * Returns the messages to send and a note per repair (the stored history is not changed).
 */
export function sanitise(history: readonly ChatMessage[]): { messages: ChatMessage[]; repairs: string[] } {
  // The common case: nothing to repair. Checking is one pass without copying; repairing copies.
  if (isWellFormed(history)) return { messages: history as ChatMessage[], repairs: [] };
  const repairs: string[] = [];
  const merged = compact(
    history.map((m, i) => (i < history.length - 1 ? withPairedSearches(m, repairs) : m)),
    repairs,
  );
  const paired: ChatMessage[] = [];
  for (let i = 0; i < merged.length; i++) {
    const message = merged[i]!;
    if (message.role === "assistant") {
      paired.push(message);
      const uses = message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
      if (uses.length === 0) continue;
      const next = merged[i + 1];
      const answers = next?.role === "user" ? next.content : [];
      const fixed = pairResults(uses, answers, repairs);
      paired.push({ role: "user", content: fixed });
      if (next?.role === "user") i++;
    } else {
      const prev = paired[paired.length - 1];
      const allowed = new Set(prev?.role === "assistant" ? prev.content.filter((b) => b.type === "tool_use").map((b) => b.id) : []);
      const kept = message.content.filter((b) => {
        if (b.type !== "tool_result" || allowed.has(b.tool_use_id)) return true;
        repairs.push(`dropped a tool_result for ${b.tool_use_id} with no matching tool_use`);
        return false;
      });
      paired.push({ role: "user", content: kept });
    }
  }
  const messages = compact(paired, repairs);
  if (messages[0]?.role !== "user") {
    messages.unshift({ role: "user", content: [{ type: "text", text: CONTEXT_PLACEHOLDER }] });
    repairs.push("added a user message before a history that started with the assistant");
  }
  return { messages, repairs };
}

/** An assistant message without its unpaired web search blocks (the last message may be a paused turn, sent as it is). */
function withPairedSearches(message: ChatMessage, repairs: string[]): ChatMessage {
  if (message.role !== "assistant") return message;
  const content = pairedSearches(message.content);
  if (content === message.content) return message;
  repairs.push("dropped a web search call or result without its pair");
  return { role: "assistant", content: [...content] };
}

function pairResults(uses: ToolUseBlock[], answers: readonly UserBlock[], repairs: string[]): UserBlock[] {
  const ids = new Set(uses.map((u) => u.id));
  const seen = new Map<string, ToolResultBlock>();
  const others: UserBlock[] = [];
  for (const block of answers) {
    if (block.type !== "tool_result") others.push(block);
    else if (!ids.has(block.tool_use_id)) repairs.push(`dropped a tool_result for ${block.tool_use_id} with no matching tool_use`);
    else if (seen.has(block.tool_use_id)) repairs.push(`dropped a second tool_result for ${block.tool_use_id}`);
    else seen.set(block.tool_use_id, block);
  }
  const firstOther = answers.findIndex((b) => b.type !== "tool_result");
  if (firstOther >= 0 && answers.slice(firstOther).some((b) => b.type === "tool_result")) {
    repairs.push("moved tool_results before the other blocks of their message");
  }
  const results = uses.map((use) => {
    const found = seen.get(use.id);
    if (found) return found;
    repairs.push(`added a missing tool_result for ${use.name} (${use.id})`);
    return toolResult(use.id, MISSING_RESULT, true);
  });
  return [...results, ...others];
}

/** Drops empty text blocks and empty messages, and merges neighbours with the same role. */
function compact(history: readonly ChatMessage[], repairs: string[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of history) {
    const content = (message.content as (UserBlock | AssistantBlock)[]).filter((b) => {
      if (b.type !== "text" || b.text.trim() !== "") return true;
      repairs.push("dropped an empty text block");
      return false;
    });
    if (content.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === message.role) {
      (last.content as (UserBlock | AssistantBlock)[]).push(...content);
      if (last.role === "user") last.content.sort(toolResultsFirst);
    } else {
      out.push({ role: message.role, content } as ChatMessage);
    }
  }
  return out;
}

function toolResultsFirst(a: UserBlock, b: UserBlock): number {
  return (a.type === "tool_result" ? 0 : 1) - (b.type === "tool_result" ? 0 : 1);
}

/** True when the history already meets every rule sanitise enforces (so it can be sent as it is). */
export function isWellFormed(history: readonly ChatMessage[]): boolean {
  if (history.length === 0 || history[0]!.role !== "user") return history.length === 0;
  for (let i = 0; i < history.length; i++) {
    const message = history[i]!;
    if (message.content.length === 0) return false;
    if (i > 0 && history[i - 1]!.role === message.role) return false;
    let seenOther = false;
    for (const block of message.content) {
      if (block.type === "text" && block.text.trim() === "") return false;
      if (block.type === "tool_result") {
        if (seenOther) return false; // tool_results must come first
      } else seenOther = true;
    }
    if (message.role === "assistant") {
      if (i < history.length - 1 && pairedSearches(message.content) !== message.content) return false;
      const uses = message.content.filter((b) => b.type === "tool_use");
      if (uses.length === 0) continue;
      const next = history[i + 1];
      if (!next || next.role !== "user") return false;
      const answered = next.content.filter((b): b is ToolResultBlock => b.type === "tool_result").map((b) => b.tool_use_id);
      if (answered.length !== uses.length || new Set(answered).size !== answered.length) return false;
      if (!uses.every((u) => answered.includes(u.id))) return false;
    } else if (i > 0) {
      const prev = history[i - 1]!;
      const results = message.content.filter((b) => b.type === "tool_result");
      if (results.length > 0 && (prev.role !== "assistant" || !prev.content.some((b) => b.type === "tool_use"))) return false;
    } else if (message.content.some((b) => b.type === "tool_result")) {
      return false;
    }
  }
  return true;
}
