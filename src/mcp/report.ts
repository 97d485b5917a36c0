import type { Definition } from "../catalog/definition.js";
import { allowsTool, MCP_ALL, mcpServerOf } from "../catalog/tool-patterns.js";
import type { ServerView } from "./connection.js";

// What the operator's tools say about MCP: the servers (`npm run mcp -- list`) and the MCP tools a skill or agent names
// that are not there (`npm run skills -- list`).

/** One block per server: name, transport and status, then its tools, last error and last stderr lines. */
export function formatServers(views: readonly ServerView[], now: number): string {
  if (views.length === 0) return "No MCP servers are configured (MCP_CONFIG, default ./mcp.json).\n";
  return views
    .map((v) => {
      const head = `${v.name}  ${v.transport}  ${v.status}${v.status === "connected" ? ` (${v.tools.length} tools)` : ""}`;
      const lines = [head];
      if (v.sandbox) lines.push(`  ${v.sandbox}`);
      if (v.tools.length) lines.push(`  tools: ${v.tools.join(", ")}`);
      if (v.lastError) lines.push(`  last error: ${v.lastError}`);
      if (v.retryAt !== null && v.status === "retrying") lines.push(`  next attempt in ${Math.max(1, Math.ceil((v.retryAt - now) / 1000))} s`);
      return `${lines.join("\n")}\n`;
    })
    .join("");
}

/**
 * The MCP entries of a definition's whitelist that give it nothing now: a tool its server does not have (unknown),
 * or a server that is not connected (unavailable). One line each.
 */
export function mcpToolProblems(definition: Definition, views: readonly ServerView[]): string[] {
  const problems: string[] = [];
  for (const entry of definition.tools ?? []) {
    const server = mcpServerOf(entry);
    if (entry.startsWith("!") || entry === MCP_ALL || server === null) continue;
    const view = views.find((v) => v.name === server);
    if (!view) continue;
    if (view.status !== "connected") problems.push(`${entry}: unavailable, the MCP server ${server} is ${view.status}${view.lastError ? ` (${view.lastError})` : ""}`);
    else if (!view.tools.some((t) => allowsTool([entry], t))) problems.push(`${entry}: unknown, the MCP server ${server} has no such tool`);
  }
  return problems;
}
