// The local token estimate of a frame's tools, taken before every model call: the same figure as estimating the
// whole list at once, whichever definitions it holds (the registry's own, the API's web search tool as the Messages
// API declares it, an MCP tool offered late), and a definition replaced by a new one is measured again.
import { describe, expect, it } from "vitest";
import { estimateTokens, estimateToolTokens } from "../../src/llm/tokens.js";
import type { ToolDefinition } from "../../src/llm/types.js";
import { ToolRegistry } from "../../src/runtime/tools/registry.js";

const registry = new ToolRegistry();
const own = registry.names().flatMap((name) => {
  const tool = registry.get(name);
  return tool ? [tool.server ?? tool.spec] : [];
});
// https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool: the declaration a request carries.
const webSearch: ToolDefinition = { type: "web_search_20250305", name: "web_search", max_uses: 5, allowed_domains: ["example.com"] };
const mcpEcho: ToolDefinition = {
  name: "mcp__everything__echo",
  description: "Echoes back the input",
  input_schema: { type: "object", properties: { message: { type: "string", description: "Message to echo" } }, required: ["message"] },
};

describe("estimateToolTokens", () => {
  it("gives the whole list's estimate for no tools, one, and every kind together", () => {
    expect(own.length).toBeGreaterThan(3);
    for (const tools of [[], [own[0]!], own, [...own, webSearch, mcpEcho], [webSearch]]) {
      expect(estimateToolTokens(tools)).toBe(estimateTokens(tools));
    }
  });

  it("gives the same figure when asked again about the same definitions", () => {
    const tools = [...own, mcpEcho];
    const first = estimateToolTokens(tools);
    expect(estimateToolTokens(tools)).toBe(first);
    expect(estimateToolTokens([...tools])).toBe(first);
  });

  it("measures a definition that replaced another (an MCP server changed its tool)", () => {
    const before = estimateToolTokens([...own, mcpEcho]);
    const changed: ToolDefinition = { ...mcpEcho, description: `${mcpEcho.name} now says a great deal more about itself than before.` };
    const after = estimateToolTokens([...own, changed]);
    expect(after).toBe(estimateTokens([...own, changed]));
    expect(after).toBeGreaterThan(before);
  });
});
