import type { ChatMessage, TextBlock } from "../llm/types.js";
import { memoryToolUses } from "./memory/private-results.js";

const PATTERNS = [
  /https?:\/\/[^\s)"'<>\]]+/g, // URLs
  /(?<![\w/])(?:\.{1,2}\/|\/)?(?:[\w.-]+\/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b/g, // file paths with a folder
  /\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b/g, // ticket-style ids: ABC-123
  /\b(?:id|ID|Id)\s*[:=#]\s*([\w-]{3,64})/g, // "id: 7f3a…"
];

/**
 * Starts the block in which compaction carries the artifacts of the part it summarised: the history keeps them, so
 * the hint survives compaction, a restart and the next task alike.
 */
export const CARRIED_PREFIX = "[Recent artifacts from tools before the summary, most recent last]";
const RECENT = 5;

/**
 * The last few ids, files and URLs that tools produced in this history (or that an earlier compaction carried),
 * most recent last, so a follow-up like "send it again" can be resolved without re-running anything. `shared`: the
 * list goes where the conversation's later tasks read it whoever owns them (compaction's carried block and summary),
 * so what memory tools returned — their caller's private data — is left out.
 */
export function recentArtifacts(history: readonly ChatMessage[], limit = RECENT, shared = false): string[] {
  const found: string[] = [];
  const memory = shared ? memoryToolUses(history) : new Map<string, unknown>();
  const add = (value: string) => {
    const at = found.indexOf(value);
    if (at >= 0) found.splice(at, 1);
    found.push(value);
  };
  for (const message of history) {
    for (const block of message.content) {
      if (block.type === "text" && message.role === "user" && block.text.startsWith(CARRIED_PREFIX)) {
        for (const line of block.text.split("\n").slice(1)) if (line.startsWith("- ")) add(line.slice(2));
      }
      if (block.type !== "tool_result" || block.is_error || memory.has(block.tool_use_id)) continue;
      // In order of appearance; a URL is taken whole, and its parts are not matched again as paths.
      const hits: Array<{ at: number; value: string }> = [];
      let rest = block.content;
      for (const pattern of PATTERNS) {
        for (const match of rest.matchAll(pattern)) {
          hits.push({ at: match.index, value: (match[1] ?? match[0]).replace(/[.,;:]+$/, "") });
        }
        rest = rest.replace(pattern, (m) => " ".repeat(m.length));
      }
      for (const { value } of hits.sort((a, b) => a.at - b.at)) add(value);
    }
  }
  return found.slice(-limit);
}

export function artifactsHint(history: readonly ChatMessage[]): string | undefined {
  const items = recentArtifacts(history);
  return items.length ? `Recent artifacts from tools (most recent last): ${items.join(", ")}` : undefined;
}

/** The block that carries the artifacts of a summarised history into the compacted one; none when there are none. */
export function carriedArtifacts(summarised: readonly ChatMessage[]): TextBlock[] {
  const items = recentArtifacts(summarised, RECENT, true);
  return items.length ? [{ type: "text", text: [CARRIED_PREFIX, ...items.map((item) => `- ${item}`)].join("\n") }] : [];
}
