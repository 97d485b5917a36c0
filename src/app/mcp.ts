import type { Config } from "../config.js";
import { McpConfigError, type McpConfig } from "../mcp/config.js";
import { loadMcpConfig } from "../mcp/load.js";
import { McpManager, type McpDeps } from "../mcp/manager.js";
import { mcpSandbox } from "../mcp/sandboxed.js";
import { systemClock, systemTimers } from "../runtime/deps.js";
import { StartupError } from "./startup.js";

/** The MCP servers of mcp.json as this process's connections (not started). */
export function createMcp(config: Config, mcpConfig: McpConfig, deps: Omit<McpDeps, "timers" | "now"> & Partial<Pick<McpDeps, "timers" | "now">>): McpManager {
  return new McpManager(
    mcpConfig,
    { connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS, toolTimeoutMs: config.MCP_TOOL_TIMEOUT_MS, maxResultBytes: config.MCP_MAX_RESULT_BYTES },
    { timers: systemTimers, now: Date.now, sandbox: mcpSandbox(config, { timers: systemTimers, clock: systemClock, log: deps.log }), ...deps },
  );
}

/** mcp.json (MCP_CONFIG); a bad one stops the start, naming the server and the field. */
export function readMcpConfig(config: Config): McpConfig {
  try {
    return loadMcpConfig(config.MCP_CONFIG);
  } catch (error) {
    if (error instanceof McpConfigError) throw new StartupError(error.message);
    throw error;
  }
}
