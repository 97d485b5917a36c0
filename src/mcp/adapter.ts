import type { Tool, ToolOutput } from "../runtime/tools/tool.js";
import type { Approval } from "./config.js";
import type { ListedTool } from "./listing.js";
import type { KeepFile } from "./tool-output.js";

// A server's tool as a Tool of the registry. Who must approve a call: by default the tool's annotations decide (a
// tool not marked read-only, or marked destructive, asks the owner); the server's "approval" in mcp.json overrides
// them. Annotations are the server's own claims: "never" trusts a server completely, "always" trusts it not at all.

/** What an approval prompt shows as a call's target (the `approvalTarget` hook of the approval prompt). */
export interface ApprovalTarget {
  text: string;
  fields: string[];
}

/** An MCP tool: a Tool that can say what a call of it acts on. */
export interface McpTool extends Tool {
  approvalTarget(input: Record<string, unknown>): ApprovalTarget;
}

/** The target line of an approval prompt for a call of an MCP tool: the server and the server's name for the tool. */
export function mcpApprovalTarget(server: string, tool: string): ApprovalTarget {
  return { text: `MCP server ${server}, tool ${tool}`, fields: [] };
}

export function needsApproval(approval: Approval, tool: Pick<ListedTool, "readOnly" | "destructive">): boolean {
  switch (approval) {
    case "always":
      return true;
    case "never":
      return false;
    case "writes":
      return tool.destructive || !tool.readOnly;
  }
}

/** Calls the server's tool; `keep` stores the images it returns as files of the conversation. */
export type Caller = (tool: ListedTool, input: Record<string, unknown>, signal: AbortSignal, keep?: KeepFile) => Promise<ToolOutput>;

export function adaptTool(server: string, approval: Approval, tool: ListedTool, call: Caller): McpTool {
  return {
    spec: { name: tool.name, description: tool.description, input_schema: tool.inputSchema },
    // Read-only or idempotent (by its annotations): safe to run again after a restart cut it short.
    idempotent: tool.readOnly || tool.idempotent,
    requiresApproval: needsApproval(approval, tool),
    approvalTarget: () => mcpApprovalTarget(server, tool.original),
    run: (input, ctx) => call(tool, input, ctx.signal, (raw) => ctx.keepFile(raw)),
  };
}

/**
 * A tool of a configured server that is not offered now (the server is down, or does not list it): says why. It asks
 * no approval, because it runs nothing: the registry is asked for the tool again, in the same tick as the decision,
 * when the call runs, so a call decided on this stub can never reach the server's real tool.
 */
export function unavailableTool(name: string, server: string, refuse: () => ToolOutput): McpTool {
  return {
    spec: { name, description: "unavailable", input_schema: { type: "object" } },
    idempotent: true,
    requiresApproval: false,
    approvalTarget: () => mcpApprovalTarget(server, name.slice(`mcp__${server}__`.length)),
    run: async () => refuse(),
  };
}
