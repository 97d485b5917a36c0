import type { FileRefBlock, UserBlock } from "../llm/types.js";
import { appendBlocks, toolResult } from "./history.js";
import type { Journal } from "./journal.js";
import type { StackFrame } from "./frame.js";
import { boundResult } from "./result-bound.js";
import type { Store } from "../store/store.js";

// How a frame's history grows on the user's side: in memory and, in the same breath, in the step's log rows.

export function addUserText(frame: StackFrame, journal: Journal, text: string, files: readonly FileRefBlock[] = []): void {
  // A message of files alone still has a line of text: the API refuses empty text, and the agent reads who wrote.
  const content: UserBlock[] = [...(text !== "" || files.length === 0 ? [{ type: "text" as const, text }] : []), ...files];
  appendBlocks(frame.history, "user", content);
  journal.append(frame, "message", { role: "user", content });
}

/**
 * A tool result joins the history cut to `maxChars` (with a note on how to read the rest); its log row keeps what
 * the history shows as `content` and, when that was cut, the whole result as `full_content`.
 */
export function addToolResult(frame: StackFrame, journal: Journal, toolUseId: string, content: string, isError: boolean, maxChars = Infinity): void {
  const block = toolResult(toolUseId, boundResult(content, toolUseId, maxChars), isError);
  appendBlocks(frame.history, "user", [block]);
  const cut = block.content !== content && content !== "";
  journal.append(frame, "tool_result", { tool_use_id: toolUseId, content: block.content, is_error: isError, ...(cut ? { full_content: content } : {}) });
}

/** The whole text of one of the frame's own tool results, from the log (or the step not yet written); null if none. */
export async function storedResult(frame: StackFrame, toolUseId: string, deps: { store: Pick<Store, "steps">; journal: Journal }): Promise<string | null> {
  const rows = [...(await deps.store.steps.history(deps.journal.sessionKey, frame.agentSessionId)), ...deps.journal.pending()];
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    if (row.type !== "tool_result" || row.agentSessionId !== frame.agentSessionId) continue;
    const p = row.payload as { tool_use_id?: unknown; content?: unknown; full_content?: unknown };
    if (p.tool_use_id !== toolUseId) continue;
    if (typeof p.full_content === "string") return p.full_content;
    return typeof p.content === "string" ? p.content : null;
  }
  return null;
}

/** Files shown after a tool's result (view_file): in the same user message, logged by reference like any file. */
export function addFiles(frame: StackFrame, journal: Journal, files: readonly FileRefBlock[]): void {
  appendBlocks(frame.history, "user", [...files]);
  journal.append(frame, "message", { role: "user", content: files });
}
