import type { ChatMessage } from "../llm/types.js";

const PATTERNS = [
  /https?:\/\/[^\s)"'<>\]]+/g, // URLs
  /(?<![\w/])(?:\.{1,2}\/|\/)?(?:[\w.-]+\/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b/g, // file paths with a folder
  /\b[A-Z][A-Z0-9]{1,9}-\d{1,7}\b/g, // ticket-style ids: ABC-123
  /\b(?:id|ID|Id)\s*[:=#]\s*([\w-]{3,64})/g, // "id: 7f3a…"
];

/**
 * The last few ids, files and URLs that tools produced in this history, most recent last, so a follow-up
 * like "send it again" can be resolved without re-running anything.
 */
export function recentArtifacts(history: readonly ChatMessage[], limit = 5): string[] {
  const found: string[] = [];
  for (const message of history) {
    for (const block of message.content) {
      if (block.type !== "tool_result" || block.is_error) continue;
      // In order of appearance; a URL is taken whole, and its parts are not matched again as paths.
      const hits: Array<{ at: number; value: string }> = [];
      let rest = block.content;
      for (const pattern of PATTERNS) {
        for (const match of rest.matchAll(pattern)) {
          hits.push({ at: match.index, value: (match[1] ?? match[0]).replace(/[.,;:]+$/, "") });
        }
        rest = rest.replace(pattern, (m) => " ".repeat(m.length));
      }
      for (const { value } of hits.sort((a, b) => a.at - b.at)) {
        const at = found.indexOf(value);
        if (at >= 0) found.splice(at, 1);
        found.push(value);
      }
    }
  }
  return found.slice(-limit);
}

export function artifactsHint(history: readonly ChatMessage[]): string | undefined {
  const items = recentArtifacts(history);
  return items.length ? `Recent artifacts from tools (most recent last): ${items.join(", ")}` : undefined;
}
