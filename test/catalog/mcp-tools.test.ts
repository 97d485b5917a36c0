// Agent files in the wild name MCP tools by Claude Code's names (mcp__github__create_issue); with the server in mcp.json
// they are kept as written (the server's tools are known only while it runs), without it they are reported.
import { afterEach, describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { loadCatalog } from "../../src/catalog/loader.js";
import { ToolRegistry, type DynamicTools } from "../../src/runtime/tools/registry.js";
import { agentFile, writeDefinitions } from "../helpers/harness.js";

const none: DynamicTools = { list: () => [], get: () => undefined };
let root = "";
afterEach(() => rmSync(root, { recursive: true, force: true }));

function load(files: Record<string, string>, mcpServers?: string[]) {
  const defs = writeDefinitions(files);
  root = defs.root;
  const knownTools = new ToolRegistry([], mcpServers ? none : null).names();
  return loadCatalog(defs.skills, defs.agents, { knownTools, ...(mcpServers ? { mcpServers } : {}) });
}

describe("MCP tools in a definition", () => {
  it("exact names, mcp__<server>__* and mcp__<server> of configured servers are kept as written", () => {
    const catalog = load(agentFile("triage", "Triage issues.", "tools: mcp__github__create_issue, mcp__linear__*, mcp__notion, use_agent\n"), [
      "github",
      "linear",
      "notion",
    ]);
    expect(catalog.agents.get("triage")?.tools).toEqual(["mcp__github__create_issue", "mcp__linear__*", "mcp__notion", "use_agent"]);
    expect(catalog.warnings).toEqual([]);
  });

  it("a tool of a server not in mcp.json is reported and dropped", () => {
    const catalog = load(agentFile("triage", "Triage issues.", "tools: mcp__github__create_issue, mcp__jira__create\n"), ["github"]);
    expect(catalog.agents.get("triage")?.tools).toEqual(["mcp__github__create_issue"]);
    expect(catalog.warnings[0]).toContain("tools: mcp__jira__create is a tool of an MCP server not in the MCP configuration (it has github); that one is ignored");
  });

  it("without any MCP server, MCP names are tools this gateway does not have", () => {
    const catalog = load(agentFile("triage", "Triage issues.", "tools: mcp__github__create_issue\n"));
    expect(catalog.warnings[0]).toContain("mcp__github__create_issue is an MCP tool this gateway does not have");
  });

  it("Claude Code's disallowedTools takes an MCP tool out of the inherited set", () => {
    const catalog = load(agentFile("careful", "Be careful.", "disallowedTools: mcp__github__delete_repo\n"), ["github"]);
    expect(catalog.agents.get("careful")?.tools).toEqual(expect.arrayContaining(["mcp__*", "!mcp__github__delete_repo"]));
  });
});
