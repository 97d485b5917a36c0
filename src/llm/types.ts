// The conversation shapes the runtime works with. They mirror the Messages API's
// blocks closely, so a history can be sent as-is and stored as-is.

export interface TextBlock {
  type: "text";
  text: string;
  /** Where the model's words come from (web search results), kept so the history can be sent back as it was. */
  citations?: WebSearchCitation[];
}
/** A passage of a web search result that a text block cites (the Messages API's web_search_result_location). */
export interface WebSearchCitation {
  type: "web_search_result_location";
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}
/** A tool the API ran itself (web search): no tool_result answers it; its result block follows in the same message. */
export interface ServerToolUseBlock {
  type: "server_tool_use";
  id: string;
  name: "web_search";
  input: Record<string, unknown>;
}
export interface WebSearchResult {
  type: "web_search_result";
  url: string;
  title: string;
  /** Opaque: the API needs it back to let the model cite the page in later turns. */
  encrypted_content: string;
  page_age?: string | null;
}
/** The web search tool's documented error codes (its result is then an error object, and the call still succeeds). */
export type WebSearchErrorCode = "invalid_tool_input" | "unavailable" | "max_uses_exceeded" | "too_many_requests" | "query_too_long" | "request_too_large";
export interface WebSearchError {
  type: "web_search_tool_result_error";
  error_code: WebSearchErrorCode;
}
export interface WebSearchToolResultBlock {
  type: "web_search_tool_result";
  tool_use_id: string;
  content: WebSearchResult[] | WebSearchError;
}
export type AssistantBlock = TextBlock | ToolUseBlock | ServerToolUseBlock | WebSearchToolResultBlock;
/**
 * A stored file named in a history: what the context log keeps (never the bytes). The runtime turns it into image,
 * document or text blocks (or a placeholder) before each model call; the API never sees this block.
 */
export interface FileRefBlock {
  type: "file";
  file_id: string;
  name: string;
  mime: string;
  kind: "image" | "pdf" | "text" | "audio" | "video" | "other";
  size: number;
  /** Where a received file was placed in the session's workspace (`/workspace/report.csv`), with WORKSPACE=on. */
  path?: string;
  /** Why a received file is not in the workspace (over its limits), told to the agent. */
  unplaced?: string;
}
export type UserBlock = TextBlock | ToolResultBlock | ImageBlock | DocumentBlock | FileRefBlock;
/** The image types the Messages API reads. */
export type ImageMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";
/** An image for the model (src/files makes them: re-encoded, long edge ≤ 1568 px, base64 ≤ 5 MB). */
export interface ImageBlock {
  type: "image";
  source: { type: "base64"; media_type: ImageMediaType; data: string };
}
/** A PDF (base64) or a text file (plain text) for the model; `title` is the file's name. */
export interface DocumentBlock {
  type: "document";
  source: { type: "base64"; media_type: "application/pdf"; data: string } | { type: "text"; media_type: "text/plain"; data: string };
  title?: string;
  context?: string;
}

export type ChatMessage = { role: "user"; content: UserBlock[] } | { role: "assistant"; content: AssistantBlock[] };

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: "object"; [k: string]: unknown };
}

/** A tool the Messages API runs itself, declared by its versioned type (the web search tool). */
export interface ServerToolSpec {
  type: "web_search_20250305";
  name: "web_search";
  max_uses?: number;
  allowed_domains?: string[];
  blocked_domains?: string[];
}

/** What a request offers the model: tools this gateway runs, and tools the API runs. */
export type ToolDefinition = ToolSpec | ServerToolSpec;

export function isServerTool(tool: ToolDefinition): tool is ServerToolSpec {
  return "type" in tool;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Searches the API's web search tool made for the call (priced per search). */
  webSearchRequests?: number;
  /** What the call cost, in whole nano-USD, at the price table's rate for the model that answered (llm/prices.ts). */
  costNanoUsd?: number;
}

export interface ModelRequest {
  model: string;
  /** The stable prefix (with the tools it is marked for prompt caching). */
  system: string;
  /** Context that changes between calls (recent artifacts); sent after the cached prefix. */
  volatileSystem?: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  maxTokens?: number;
  signal?: AbortSignal;
  /**
   * Streams the reply: called with each piece of text as the model writes it (text only: tool-use input is not
   * shown). A preview; the response this resolves with is the truth.
   */
  onText?: (delta: string) => void;
  /**
   * The text streamed so far is void: the call failed after it began and starts over (on another try or model).
   * Whoever shows the preview takes it back; what `onText` brings next is the new reply from its beginning.
   */
  onReset?: () => void;
  /**
   * Models to try in this order when `model` fails with an overload, a rate limit past the retries, a server error,
   * a timeout or a dropped connection (a definition's `fallback_models`); absent: the gateway's MODEL_FALLBACKS.
   */
  fallbackModels?: readonly string[];
  /** Force a call of this tool (structured output, e.g. memory extraction's save_memories). */
  toolChoice?: { name: string };
}

export interface ModelResponse {
  content: AssistantBlock[];
  stopReason: string | null;
  usage: Usage;
  requestId: string | null;
  /** The model that answered, as the API names it (may be a dated id of the requested alias). */
  model?: string | null;
}

export function textOf(blocks: readonly { type: string; text?: string }[]): string {
  return blocks
    .filter((b): b is TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("\n")
    .trim();
}

export function toolUsesOf(blocks: readonly AssistantBlock[]): ToolUseBlock[] {
  return blocks.filter((b): b is ToolUseBlock => b.type === "tool_use");
}
