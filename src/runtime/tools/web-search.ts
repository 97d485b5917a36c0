import type { ServerToolSpec } from "../../llm/types.js";
import { fail, type Tool } from "./tool.js";

export const WEB_SEARCH = "WebSearch";

/**
 * Claude Code's WebSearch, as the Messages API's own web search tool (WEB_SEARCH=on): the API searches, and the
 * reply carries the searches and their results (server_tool_use / web_search_tool_result), kept in the history as
 * they came. Frames name it WebSearch, as agent files do; the model sees the API's `web_search`.
 */
export function webSearchTool(options: { maxUses: number }): Tool {
  const server: ServerToolSpec = { type: "web_search_20250305", name: "web_search", max_uses: options.maxUses };
  return {
    spec: {
      name: WEB_SEARCH,
      description: "Searches the web (run by the Messages API itself).",
      input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    },
    server,
    idempotent: true,
    // Never reached: the model is offered `web_search`, which the API answers; a tool_use named WebSearch is a stray.
    run: async () => fail("WebSearch is run by the model's API, not called as a tool here"),
  };
}
