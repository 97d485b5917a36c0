// The web search tool's blocks (server_tool_use and web_search_tool_result, which the API runs and answers within one
// assistant message) as the rest of the runtime shows them: in a compaction's transcript, and as the sources of a
// reply that cites search results.
import { textOf, type AssistantBlock, type ServerToolUseBlock, type TextBlock, type WebSearchToolResultBlock } from "../llm/types.js";

const MAX_RESULTS_SHOWN = 5;
const MAX_SOURCES = 8;

/** One line of a transcript for a search or its results; titles and URLs are kept (they are the critical data). */
export function searchLine(block: ServerToolUseBlock | WebSearchToolResultBlock): string {
  if (block.type === "server_tool_use") {
    const query = typeof block.input.query === "string" ? block.input.query : JSON.stringify(block.input);
    return `Assistant searched the web for ${JSON.stringify(query.slice(0, 300))}`;
  }
  if (!Array.isArray(block.content)) return `Search failed: ${block.content.error_code}`;
  if (block.content.length === 0) return "Search results: none";
  const shown = block.content.slice(0, MAX_RESULTS_SHOWN).map((r) => `${r.title.slice(0, 120)} <${r.url}>`);
  const more = block.content.length - shown.length;
  return `Search results: ${shown.join("; ")}${more > 0 ? ` (and ${more} more)` : ""}`;
}

/** The pages a message's text cites, each once, in the order first cited. */
export function citedSources(blocks: readonly AssistantBlock[]): Array<{ title: string; url: string }> {
  const seen = new Map<string, string>();
  for (const block of blocks) {
    if (block.type !== "text") continue;
    for (const citation of (block as TextBlock).citations ?? []) {
      if (!seen.has(citation.url)) seen.set(citation.url, citation.title?.trim() || citation.url);
    }
  }
  return [...seen].map(([url, title]) => ({ title, url }));
}

/** A reply's text with the pages it cites listed under it, so the user can check them (the chat shows no citations). */
export function withSources(text: string, blocks: readonly AssistantBlock[]): string {
  const sources = citedSources(blocks);
  if (sources.length === 0 || text === "") return text;
  const listed = sources.slice(0, MAX_SOURCES).map((s) => `- ${s.title}: ${s.url}`);
  if (sources.length > MAX_SOURCES) listed.push(`- and ${sources.length - MAX_SOURCES} more`);
  return `${text}\n\nSources:\n${listed.join("\n")}`;
}

/**
 * The message's blocks without a web search call that has no result in the same message, or a result whose call is
 * missing: the API refuses either (a reply cut short, a hand-edited log). Returns the same array when nothing is wrong.
 */
export function pairedSearches(blocks: readonly AssistantBlock[]): readonly AssistantBlock[] {
  const calls = new Set(blocks.filter((b): b is ServerToolUseBlock => b.type === "server_tool_use").map((b) => b.id));
  const results = new Set(blocks.filter((b): b is WebSearchToolResultBlock => b.type === "web_search_tool_result").map((b) => b.tool_use_id));
  const kept = blocks.filter((b) => (b.type === "server_tool_use" ? results.has(b.id) : b.type === "web_search_tool_result" ? calls.has(b.tool_use_id) : true));
  return kept.length === blocks.length ? blocks : kept;
}

/**
 * What the user reads of a reply. A reply that searched comes as several text blocks, split where the text cites a
 * page: the pieces between two searches are one paragraph, and the pages cited are listed under it.
 */
export function replyText(blocks: readonly AssistantBlock[]): string {
  if (!blocks.some((b) => b.type === "web_search_tool_result")) return textOf(blocks);
  const paragraphs: string[] = [];
  let current = "";
  for (const block of blocks) {
    if (block.type === "text") current += block.text;
    else if (block.type === "server_tool_use" || block.type === "web_search_tool_result") {
      if (current.trim() !== "") paragraphs.push(current.trim());
      current = "";
    }
  }
  if (current.trim() !== "") paragraphs.push(current.trim());
  return withSources(paragraphs.join("\n\n"), blocks);
}
