import type { ChatMessage, ToolUseBlock, UserBlock } from "../../llm/types.js";
import type { Store } from "../../store/store.js";
import { MEMORY_TOOLS } from "./tools.js";

// The main agent's history is shared by the tasks of a conversation, and in a group those have different owners. What
// a memory tool returned (recall, remember, forget) is its caller's private data: a task of someone else sees a note
// in its place, in the history and so in the recent-artifacts hint read from it. The log keeps the original.

export const HIDDEN_RESULT = "(not shown: this memory tool ran in another person's task, and what it returned is theirs)";

export const isMemoryTool = (name: string): boolean => (MEMORY_TOOLS as readonly string[]).includes(name);

/** The memory tool calls of a history. */
export function memoryToolUses(history: readonly ChatMessage[]): Map<string, ToolUseBlock> {
  const uses = new Map<string, ToolUseBlock>();
  for (const message of history) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) if (block.type === "tool_use" && isMemoryTool(block.name)) uses.set(block.id, block);
  }
  return uses;
}

/** Whether a history had results hidden from it (it is then not kept as it is for the conversation's next task). */
export function hidesResults(history: readonly ChatMessage[]): boolean {
  return history.some((m) => m.role === "user" && m.content.some((b) => b.type === "tool_result" && b.content === HIDDEN_RESULT));
}

/**
 * `history` (of the main agent session `agentSessionId` of `sessionKey`) as a task of `owner` may see it: the results
 * of memory tools that ran in tasks of anyone else, or of a task the log cannot place, are replaced by HIDDEN_RESULT.
 * Reads the log only when the history holds memory tool calls at all. Returns the same array when nothing changes.
 */
export async function privateTo(
  store: Pick<Store, "steps" | "tasks">,
  sessionKey: string,
  agentSessionId: string,
  history: ChatMessage[],
  owner: string | null,
): Promise<ChatMessage[]> {
  const uses = memoryToolUses(history);
  if (uses.size === 0) return history;
  const taskOf = new Map<string, string | null>();
  for (const entry of await store.steps.history(sessionKey, agentSessionId)) {
    // Where each call was made: its own message row (a compaction's copy of it carries the compacting task instead).
    if (entry.type !== "message") continue;
    const payload = entry.payload as { role?: string; content?: Array<{ type?: string; id?: string }> };
    if (payload.role !== "assistant" || !Array.isArray(payload.content)) continue;
    for (const block of payload.content) if (block.type === "tool_use" && block.id && uses.has(block.id)) taskOf.set(block.id, entry.taskId);
  }
  const ownerOf = new Map((await store.tasks.ofSession(sessionKey)).map((t) => [t.id, t.ownerId]));
  const foreign = new Set(
    [...uses.keys()].filter((id) => {
      const task = taskOf.get(id);
      return owner === null || !task || ownerOf.get(task) !== owner;
    }),
  );
  if (foreign.size === 0) return history;
  return history.map((message) => {
    if (message.role !== "user" || !message.content.some((b) => b.type === "tool_result" && foreign.has(b.tool_use_id))) return message;
    const content: UserBlock[] = message.content.map((b) =>
      b.type === "tool_result" && foreign.has(b.tool_use_id) ? { type: "tool_result", tool_use_id: b.tool_use_id, content: HIDDEN_RESULT } : b,
    );
    return { role: "user", content };
  });
}
