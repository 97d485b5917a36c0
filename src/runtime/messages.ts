import { appendBlocks, toolResult } from "./history.js";
import type { Journal } from "./journal.js";
import type { StackFrame } from "./frame.js";

// How a frame's history grows on the user's side: in memory and, in the same breath, in the step's log rows.

export function addUserText(frame: StackFrame, journal: Journal, text: string): void {
  const content = [{ type: "text" as const, text }];
  appendBlocks(frame.history, "user", content);
  journal.append(frame, "message", { role: "user", content });
}

export function addToolResult(frame: StackFrame, journal: Journal, toolUseId: string, content: string, isError: boolean): void {
  const block = toolResult(toolUseId, content, isError);
  appendBlocks(frame.history, "user", [block]);
  journal.append(frame, "tool_result", { tool_use_id: toolUseId, content: block.content, is_error: isError });
}
