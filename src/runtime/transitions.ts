import { addToolResult } from "./messages.js";
import type { AgentStack, StackFrame } from "./frame.js";
import type { Store } from "../store/store.js";
import { rebuildHistory, unresolvedToolUses } from "./history.js";
import type { Journal } from "./journal.js";

// The stack moves shared by the interactive orchestrator and the batch runner. Each only changes
// memory and the journal; the caller flushes them with its own stack/task/request changes.

export function pushChild(stack: AgentStack, child: StackFrame, journal: Journal): void {
  stack.push(child);
  journal.append(child, "agent_session", {
    agent_session_id: child.agentSessionId,
    agent_name: child.agentName,
    agent_type: child.agentType,
    mode: child.mode,
    parent_tool_use_id: child.parentToolUseId,
    depth: stack.depth,
  });
  for (const message of child.history) journal.append(child, "message", message);
}

export function finishFrame(journal: Journal, frame: StackFrame, result: string, isError: boolean, structured?: Record<string, unknown>): void {
  journal.append(frame, "agent_session_complete", {
    agent_session_id: frame.agentSessionId,
    agent_name: frame.agentName,
    result,
    is_error: isError,
    ...(structured ? { structured_output: structured } : {}),
  });
}

/**
 * Pops the top frame and gives its result (or error) to the parent's pending tool_use, cut to `maxChars` there.
 * Returns the parent, or null when the popped frame was the bottom one.
 */
export function returnToParent(
  stack: AgentStack,
  journal: Journal,
  result: string,
  isError: boolean,
  extra: { structured?: Record<string, unknown>; maxChars?: number } = {},
): StackFrame | null {
  const frame = stack.pop();
  if (frame.agentType === "main") return null;
  finishFrame(journal, frame, result, isError, extra.structured);
  const parent = stack.top;
  if (!parent) return null;
  if (!frame.parentToolUseId) {
    throw new Error(`frame ${frame.frameId} (${frame.agentName}) has no parent_tool_use_id to return its result to`);
  }
  const content = isError ? `${frame.agentName} failed: ${result}` : result;
  addToolResult(parent, journal, frame.parentToolUseId, content, isError, extra.maxChars);
  return parent;
}

/**
 * Closes, in the log, every agent session of the chat that was started and not ended, except `live` ones;
 * a tool use such a session left without a result gets one, so the log stays well-formed.
 */
export async function closeOpenSessions(store: Pick<Store, "steps">, journal: Journal, live: ReadonlySet<string>, reason: string): Promise<void> {
  for (const open of await store.steps.openAgentSessions(journal.sessionKey)) {
    if (live.has(open.agentSessionId)) continue;
    const owner = { frameId: null, agentSessionId: open.agentSessionId };
    for (const use of unresolvedToolUses(rebuildHistory(await store.steps.history(journal.sessionKey, open.agentSessionId)))) {
      journal.append(owner, "tool_result", { tool_use_id: use.id, content: `not finished: ${reason}`, is_error: true });
    }
    journal.append(owner, "agent_session_complete", {
      agent_session_id: open.agentSessionId,
      agent_name: open.agentName,
      result: reason,
      is_error: true,
    });
  }
}

/** Answers, with an error, every tool use a frame will never get to run (it is being closed). */
export function closeUnresolved(frame: StackFrame, journal: Journal, reason: string): void {
  for (const use of unresolvedToolUses(frame.history)) addToolResult(frame, journal, use.id, reason, true);
}
