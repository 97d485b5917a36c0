import { estimateTokens } from "../../llm/tokens.js";
import type { MemoryRecord, Store } from "../../store/store.js";

/** How many memories a task start looks at, and how much of the prompt they may take. */
export const RECALL_LIMIT = 25;
export const RECALL_TOKENS = 800;

/**
 * The memories most relevant to `message` (and then the most recent), as the block the main agent reads in the
 * volatile part of its system prompt; null when the user has none.
 */
export async function recallFor(store: Pick<Store, "memories">, userId: string, message: string, budgetTokens = RECALL_TOKENS): Promise<string | null> {
  const relevant = await store.memories.search(userId, message, RECALL_LIMIT);
  const recent = relevant.length < RECALL_LIMIT ? await store.memories.search(userId, "", RECALL_LIMIT) : [];
  const seen = new Set<string>();
  const picked = [...relevant, ...recent].filter((m) => !seen.has(m.id) && seen.add(m.id));
  return memoryBlock(picked, budgetTokens);
}

export function memoryBlock(memories: readonly MemoryRecord[], budgetTokens = RECALL_TOKENS): string | null {
  const lines: string[] = [];
  let used = 0;
  for (const memory of memories) {
    const line = `- ${memory.text}`;
    const cost = estimateTokens(line);
    if (used + cost > budgetTokens) break;
    lines.push(line);
    used += cost;
  }
  if (lines.length === 0) return null;
  return [
    "What you remember about this user from earlier conversations (facts they shared; use them when they help,",
    "don't recite them; the user sees them with /memory and can ask you to forget any):",
    ...lines,
  ].join("\n");
}
