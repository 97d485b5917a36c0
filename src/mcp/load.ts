import { existsSync, readFileSync } from "node:fs";
import { McpConfigError, NO_MCP, parseMcpConfig, type McpConfig } from "./config.js";

/** Where mcp.json is looked for when MCP_CONFIG is not set; a missing file there means no MCP servers. */
export const DEFAULT_MCP_CONFIG = "./mcp.json";

/**
 * The MCP configuration: MCP_CONFIG's file (which must exist when it is set), else ./mcp.json when there is one.
 * Throws McpConfigError for a file that cannot be read or is wrong.
 */
export function loadMcpConfig(configured: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): McpConfig {
  const path = configured ?? DEFAULT_MCP_CONFIG;
  if (!existsSync(path)) {
    if (configured === undefined) return NO_MCP;
    throw new McpConfigError(`MCP_CONFIG=${configured}: there is no such file (unset MCP_CONFIG to run without MCP servers)`);
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new McpConfigError(`${path}: cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  return parseMcpConfig(text, path, env);
}

/** For entry points: the MCP configuration, or what is wrong with it on stderr and exit 1 (like a bad variable). */
export function loadMcpConfigOrExit(configured: string | undefined): McpConfig {
  try {
    return loadMcpConfig(configured);
  } catch (error) {
    if (!(error instanceof McpConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
