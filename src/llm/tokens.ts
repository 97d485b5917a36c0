import type { ChatMessage, ToolDefinition } from "./types.js";

/**
 * A local token estimate: about four characters of JSON per token. It errs a little low for plain English;
 * callers compare it with the usage the API reports and keep the larger.
 */
export function estimateTokens(value: unknown): number {
  return Math.ceil((typeof value === "string" ? value.length : JSON.stringify(value).length) / 4);
}

export function estimateRequest(request: { system: string; volatileSystem?: string; messages: ChatMessage[]; tools: ToolDefinition[] }): number {
  return estimateTokens(request.system) + estimateTokens(request.volatileSystem ?? "") + estimateTokens(request.messages) + estimateTokens(request.tools);
}
