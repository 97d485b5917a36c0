// The question put to a task's owner before a tool call runs. It leads with the tool and what the call acts on (the
// tool says that itself: method and URL for http_request, the command for a shell, server and tool for MCP), then
// lists the other input fields, each shortened on its own: a long field the model put first takes its share of the
// text and no more, so it can never push the target or the other fields out of view. Characters that could hide or
// reorder what the owner reads (control, bidirectional and zero-width characters) are shown as escapes.

/** What a call acts on, as its tool describes it for the approval prompt. */
export interface ApprovalTarget {
  /** One line, e.g. `POST https://api.example.com/pay` or a shell command. */
  text: string;
  /** The input fields `text` already shows: they are not listed again below it. */
  fields: string[];
}

/** A tool that can say what a call of it acts on (Tool.approvalTarget). */
export interface DescribesTarget {
  approvalTarget?(input: Record<string, unknown>): ApprovalTarget | null;
}

export interface ApprovalCall {
  agent: string;
  tool: string;
  input: Record<string, unknown>;
  /** The approval's id, which /approve and /deny take. */
  id: string;
}

/** The target line's share of the prompt. */
export const TARGET_CHARS = 400;
/** A field's value, shown as JSON. */
export const VALUE_CHARS = 160;
/** A field's name. */
const KEY_CHARS = 40;
/** A string inside a field's value (an object's member, an array's item). */
const INNER_CHARS = 60;
/** Fields listed; the rest are counted. */
export const MAX_FIELDS = 8;
/** Members or items shown of an object or array inside a field's value. */
const INNER_ITEMS = 6;
const INNER_DEPTH = 3;

const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `text` on one line, with every character that could hide or reorder what is shown (line breaks, control,
 * bidirectional and zero-width characters) written as an escape: `\n`, `\u202e`.
 */
export function visible(text: string): string {
  return text.replace(HIDDEN, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** At most `max` characters: the start and the end kept, the middle replaced by "…" (whole code points). */
export function shorten(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const head = Math.ceil((max - 1) * 0.65);
  const tail = max - 1 - head;
  return `${chars.slice(0, head).join("")}…${tail > 0 ? chars.slice(-tail).join("") : ""}`;
}

export function approvalPrompt(call: ApprovalCall, tool?: DescribesTarget): string {
  const target = targetOf(call.input, tool);
  const head = `🔐 ${visible(call.agent)} wants to run ${shorten(visible(call.tool), KEY_CHARS)}${target ? `: ${shorten(visible(target.text), TARGET_CHARS)}` : ""}`;
  const shown = new Set(target?.fields ?? []);
  const fields = Object.entries(call.input).filter(([key]) => !shown.has(key));
  const lines = fields.slice(0, MAX_FIELDS).map(([key, value]) => `• ${shorten(visible(key), KEY_CHARS)}: ${shorten(visible(json(value)), VALUE_CHARS)}`);
  const more = fields.length - MAX_FIELDS;
  if (more > 0) lines.push(`• … and ${more} more field${more === 1 ? "" : "s"}`);
  return [head, ...lines, `Approve or deny it (${call.id}).`].join("\n");
}

/** The tool's own description of the call; none when it has none or cannot give one for this input. */
function targetOf(input: Record<string, unknown>, tool: DescribesTarget | undefined): ApprovalTarget | null {
  try {
    const target = tool?.approvalTarget?.(input);
    return target && typeof target.text === "string" && target.text.trim() !== "" ? target : null;
  } catch {
    return null;
  }
}

/** A value as JSON, its long strings and big collections cut down first so every part of it gets some room. */
function json(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return JSON.stringify(compact(value, 0)) ?? String(value);
  } catch {
    return String(value);
  }
}

function compact(value: unknown, depth: number): unknown {
  if (typeof value === "string") return shorten(value, INNER_CHARS);
  if (value === null || typeof value !== "object") return value;
  if (depth >= INNER_DEPTH) return Array.isArray(value) ? ["…"] : { "…": "…" };
  if (Array.isArray(value)) {
    const items = value.slice(0, INNER_ITEMS).map((v) => compact(v, depth + 1));
    return value.length > INNER_ITEMS ? [...items, `… ${value.length - INNER_ITEMS} more`] : items;
  }
  const entries = Object.entries(value);
  const kept = entries.slice(0, INNER_ITEMS).map(([k, v]) => [shorten(k, INNER_CHARS), compact(v, depth + 1)] as const);
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of kept) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  if (entries.length > INNER_ITEMS) out["…"] = `${entries.length - INNER_ITEMS} more`;
  return out;
}
