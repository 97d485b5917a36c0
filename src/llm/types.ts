// The conversation shapes the runtime works with. They mirror the Messages API's
// blocks closely, so a history can be sent as-is and stored as-is.

export interface TextBlock {
  type: "text";
  text: string;
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
export type AssistantBlock = TextBlock | ToolUseBlock;
export type UserBlock = TextBlock | ToolResultBlock;

export type ChatMessage =
  | { role: "user"; content: UserBlock[] }
  | { role: "assistant"; content: AssistantBlock[] };

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: "object"; [k: string]: unknown };
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
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
  tools: ToolSpec[];
  maxTokens?: number;
  signal?: AbortSignal;
  /**
   * Streams the reply: called with each piece of text as the model writes it (text only: tool-use input is not
   * shown). A preview; the response this resolves with is the truth.
   */
  onText?: (delta: string) => void;
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
