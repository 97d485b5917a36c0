import type { ChatMessage, ToolResultBlock } from "../llm/types.js";
import type { RuntimeSettings } from "./deps.js";

// Tool results are bounded in the live history. A longer one keeps its start and ends with a note saying how much
// was left out and how to read it: the context log keeps the result whole, and read_tool_result reads it from there
// a part at a time. Compaction uses the same cut to make room around results it must keep (a mid-turn tail).

export const READ_TOOL_RESULT = "read_tool_result";
/** TOOL_RESULT_MAX_TOKENS's default. */
export const DEFAULT_RESULT_TOKENS = 10_000;
/** The local estimate's characters per token (llm/tokens.ts). */
const CHARS_PER_TOKEN = 4;
/** Kept free for the note that ends a cut result or a part read back, so that the whole stays within the bound. */
export const NOTE_ROOM = 300;
/** However tight the room, a cut result keeps this much of its start. */
export const MIN_SHOWN = 500;

/** The bound in characters. */
export function resultChars(settings: Pick<RuntimeSettings, "toolResultMaxTokens">): number {
  return (settings.toolResultMaxTokens ?? DEFAULT_RESULT_TOKENS) * CHARS_PER_TOKEN;
}

export const formatCount = (x: number) => x.toLocaleString("en-US");

// The note names the result's whole length, so a result cut again (by compaction) still says it.
const CUT_NOTE = /\n\n\[Cut: this result has ([\d,]+) characters; the first [\d,]+ are shown above\. [^\n]*\]$/;

function cutNote(total: number, shown: number, toolUseId: string): string {
  return (
    `\n\n[Cut: this result has ${formatCount(total)} characters; the first ${formatCount(shown)} are shown above. ` +
    `The other ${formatCount(total - shown)} were left out: read them with ${READ_TOOL_RESULT} ` +
    `{"tool_use_id": "${toolUseId}", "offset": ${shown}}.]`
  );
}

/** Where to end a slice at or before `end` without splitting a surrogate pair. */
export function charBoundary(text: string, end: number): number {
  const code = text.charCodeAt(end - 1);
  return end > 0 && code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/** Where a result's cut note starts and the whole result's length it names; null for a result shown whole. */
function noteOf(content: string): { at: number; total: number } | null {
  // The note is short: look for it only in the last characters, not through a result of a megabyte.
  const from = Math.max(0, content.length - NOTE_ROOM * 2);
  const m = CUT_NOTE.exec(content.slice(from));
  return m ? { at: from + m.index, total: Number(m[1]!.replaceAll(",", "")) } : null;
}

export function isCut(content: string): boolean {
  return noteOf(content) !== null;
}

function cutTo(shown: string, total: number, toolUseId: string, max: number): string | null {
  const keep = charBoundary(shown, Math.max(max - NOTE_ROOM, MIN_SHOWN));
  return keep < shown.length ? `${shown.slice(0, keep)}${cutNote(total, keep, toolUseId)}` : null;
}

/** A new result as the live history holds it: whole when it fits in `max` characters, else its start and the note. */
export function boundResult(content: string, toolUseId: string, max: number): string {
  if (content.length <= max) return content;
  return cutTo(content, content.length, toolUseId, max) ?? content;
}

/** A result already in the history, cut (again) to `max` characters; the same block when it fits. */
function recut(block: ToolResultBlock, max: number): ToolResultBlock {
  if (block.content.length <= max) return block;
  const note = noteOf(block.content);
  const shown = note ? block.content.slice(0, note.at) : block.content;
  const content = cutTo(shown, note?.total ?? shown.length, block.tool_use_id, max);
  return content === null ? block : { ...block, content };
}

/**
 * Shares `room` characters among the tool results of `messages`: the small ones stay whole, the largest are cut to
 * one equal share (water-filling). Returns new messages where something was cut; the input is not changed.
 */
function fitResults(messages: readonly ChatMessage[], room: number): ChatMessage[] {
  const sizes = messages.flatMap((m) => (m.role === "user" ? m.content.flatMap((b) => (b.type === "tool_result" ? [b.content.length] : [])) : []));
  const share = waterLevel(sizes, Math.max(0, room));
  if (share === Infinity) return [...messages];
  return messages.map((m) => (m.role === "assistant" ? m : { role: "user", content: m.content.map((b) => (b.type === "tool_result" ? recut(b, share) : b)) }));
}

/**
 * Cuts the tool results of `messages` until `over` (tokens past a target) is no longer positive, and counts the
 * results it cut. Measured, not computed: JSON escaping makes some text cost more than its length; three rounds settle it.
 */
export function fitWithin(messages: ChatMessage[], over: (messages: ChatMessage[]) => number): { messages: ChatMessage[]; cut: number } {
  let fitted = messages;
  for (let round = 0; round < 3; round++) {
    const excess = over(fitted);
    if (excess <= 0) break;
    fitted = fitResults(fitted, resultLength(fitted) - excess * CHARS_PER_TOKEN);
  }
  const cut = fitted.reduce((n, m, i) => n + m.content.filter((b, j) => b !== messages[i]!.content[j]).length, 0);
  return { messages: fitted, cut };
}

function resultLength(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, m) => sum + m.content.reduce((n, b) => n + (b.type === "tool_result" ? b.content.length : 0), 0), 0);
}

/** The most each item may keep so that together they fit in `room`; Infinity when all of them fit whole. */
function waterLevel(sizes: readonly number[], room: number): number {
  const sorted = [...sizes].sort((a, b) => a - b);
  let left = room;
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i));
    if (sorted[i]! > share) return share;
    left -= sorted[i]!;
  }
  return Infinity;
}

/** Whether the history holds a cut result (read_tool_result is offered then). */
export function hasCutResult(history: readonly ChatMessage[]): boolean {
  return history.some((m) => m.role === "user" && m.content.some((b) => b.type === "tool_result" && isCut(b.content)));
}
