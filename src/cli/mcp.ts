import { createMcp } from "../app/mcp.js";
import { loadConfigOrExit } from "../config.js";
import { createLogger } from "../log.js";
import { loadMcpConfigOrExit } from "../mcp/load.js";
import { formatServers } from "../mcp/report.js";
import { parseArguments, unknownName, usageError } from "./usage.js";

// `npm run mcp -- list [--json]`: connects to every MCP server of mcp.json as the gateway would (within
// MCP_CONNECT_TIMEOUT_MS), shows each one's transport, status, tools and last error, and disconnects. Exits 1 when a
// server that is not disabled could not be connected. A running gateway's own connections are on /admin.
const USAGE = "usage: npm run mcp -- list [--json]\n";
const parsed = parseArguments(USAGE, { json: { type: "boolean" } }, { positionals: true });
const [command, ...rest] = parsed.positionals;
if (command !== "list") usageError(USAGE, command === undefined ? undefined : unknownName("command", command, ["list"]));
if (rest.length) usageError(USAGE, `unexpected argument "${rest[0]}"`);

// The report says what went wrong; the log (LOG_LEVEL=info shows the servers' stderr too) is for digging further.
const config = loadConfigOrExit({ LOG_LEVEL: "fatal" });
const mcpConfig = loadMcpConfigOrExit(config.MCP_CONFIG);
const log = createLogger(config.LOG_LEVEL, 2, mcpConfig.secrets);
for (const warning of mcpConfig.warnings) process.stderr.write(`warning: ${warning}\n`);
const mcp = createMcp(config, mcpConfig, { log });
await mcp.start();
const views = mcp.views();
await mcp.close();
process.stdout.write(parsed.values.json ? `${JSON.stringify({ source: mcpConfig.source, servers: views }, null, 2)}\n` : formatServers(views, Date.now()));
if (views.some((v) => v.status !== "connected" && v.status !== "disabled" && v.status !== "closed")) process.exitCode = 1;
