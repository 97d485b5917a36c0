// MCP tools come and go while the gateway runs: frames keep patterns (mcp__*, mcp__<server>__*, exact names) that the
// registry resolves against the tools offered at each model call.
import { describe, expect, it } from "vitest";
import { EMPTY_CATALOG } from "../../src/catalog/definition.js";
import { allowsTool, mcpServerOf, mcpToolOf } from "../../src/catalog/tool-patterns.js";
import type { StackFrame } from "../../src/runtime/frame.js";
import { effectiveToolsFor, ToolRegistry, type DynamicTools } from "../../src/runtime/tools/registry.js";
import type { Tool } from "../../src/runtime/tools/tool.js";

const tool = (name: string): Tool => ({ spec: { name, description: name, input_schema: { type: "object" } }, idempotent: true, run: async () => ({ content: name }) });

function dynamic(names: string[]): DynamicTools & { names: string[] } {
  const source = {
    names,
    list: () => source.names.map(tool),
    get: (name: string) => (source.names.includes(name) ? tool(name) : undefined),
  };
  return source;
}

describe("tool patterns", () => {
  it("mcp__* covers every MCP tool; a server's pattern its own; ! takes one out again", () => {
    expect(allowsTool(["mcp__*"], "mcp__github__create_issue")).toBe(true);
    expect(allowsTool(["mcp__*"], "http_request")).toBe(false);
    expect(allowsTool(["mcp__github"], "mcp__github__create_issue")).toBe(true);
    expect(allowsTool(["mcp__github__*"], "mcp__github__create_issue")).toBe(true);
    expect(allowsTool(["mcp__github__*"], "mcp__githubber__x")).toBe(false);
    expect(allowsTool(["mcp__github__create_issue"], "mcp__github__delete_repo")).toBe(false);
    expect(allowsTool(["mcp__*", "!mcp__github__delete_repo"], "mcp__github__delete_repo")).toBe(false);
    expect(allowsTool(["mcp__*", "!mcp__github"], "mcp__linear__x")).toBe(true);
    expect([mcpServerOf("mcp__github__*"), mcpServerOf("mcp__github"), mcpServerOf("!mcp__a__b"), mcpServerOf("mcp__*")]).toEqual(["github", "github", "a", null]);
    expect([mcpToolOf("mcp__github__create_issue"), mcpToolOf("mcp__github__*"), mcpToolOf("mcp__github")]).toEqual(["create_issue", null, null]);
  });

  it("main gets every MCP tool; a child with no whitelist inherits them; a whitelist keeps its MCP entries", () => {
    const registry = new ToolRegistry([], dynamic([]));
    const all = registry.names();
    expect(all).toContain("mcp__*");
    expect(effectiveToolsFor("main", all, null)).toContain("mcp__*");
    expect(effectiveToolsFor("agent", all, null)).toContain("mcp__*");
    expect(effectiveToolsFor("agent", all, ["mcp__github__create_issue", "mcp__linear__*"])).toEqual(["mcp__github__create_issue", "mcp__linear__*", "complete"]);
    // Without MCP servers there are no MCP tools to keep.
    expect(effectiveToolsFor("agent", new ToolRegistry().names(), ["mcp__github__create_issue"])).toEqual(["complete"]);
  });

  it("the specs follow the tools offered now: one that joins later is there at the next call", () => {
    const source = dynamic(["mcp__github__create_issue", "mcp__github__delete_repo", "mcp__linear__list"]);
    const registry = new ToolRegistry([], source);
    const frame = { effectiveTools: ["mcp__github__*", "!mcp__github__delete_repo", "complete"], outputSchema: null, history: [] } as unknown as StackFrame;
    const names = () => registry.specsFor(frame, EMPTY_CATALOG).map((s) => s.name);
    expect(names()).toEqual(["complete", "mcp__github__create_issue"]);
    source.names.push("mcp__github__close_issue");
    expect(names()).toEqual(["complete", "mcp__github__create_issue", "mcp__github__close_issue"]);
    expect(registry.get("mcp__linear__list")?.spec.name).toBe("mcp__linear__list");
  });
});
