// MCP tools are named `mcp__<server>__<tool>` (Claude Code's convention), and come and go while the gateway runs. So
// a frame's tool list and a definition's whitelist may hold patterns beside names, resolved against the tools there
// are when the model is called: `mcp__*` (every MCP tool), `mcp__<server>` and `mcp__<server>__*` (one server's), an
// exact name, and `!<pattern>` (taken out again: Claude Code's `disallowedTools`).

export const MCP_PREFIX = "mcp__";
/** Every MCP tool: the main agent's share, and what a child without a whitelist inherits. */
export const MCP_ALL = "mcp__*";

/** Whether an entry is about MCP tools (a name, a pattern, or an exclusion of either). */
export function isMcpEntry(entry: string): boolean {
  return entry.startsWith(MCP_PREFIX) || entry.startsWith(`!${MCP_PREFIX}`);
}

/** The server an MCP entry names (`mcp__github__create_issue`, `mcp__github__*`, `mcp__github` → github), else null. */
export function mcpServerOf(entry: string): string | null {
  const body = entry.startsWith("!") ? entry.slice(1) : entry;
  if (!body.startsWith(MCP_PREFIX) || body === MCP_ALL) return null;
  const rest = body.slice(MCP_PREFIX.length);
  const end = rest.indexOf("__");
  const server = end < 0 ? rest : rest.slice(0, end);
  return server === "" ? null : server;
}

/** The tool an exact MCP name names (`mcp__github__create_issue` → create_issue); null for patterns. */
export function mcpToolOf(entry: string): string | null {
  const server = mcpServerOf(entry);
  if (server === null || entry.startsWith("!")) return null;
  const tool = entry.slice(MCP_PREFIX.length + server.length + 2);
  return tool === "" || tool === "*" ? null : tool;
}

/** Whether one entry (not an exclusion) covers `name`. */
function covers(entry: string, name: string): boolean {
  if (entry === name) return true;
  if (!name.startsWith(MCP_PREFIX)) return false;
  if (entry === MCP_ALL) return true;
  const server = mcpServerOf(entry);
  if (server === null) return false;
  const whole = entry === `${MCP_PREFIX}${server}` || entry === `${MCP_PREFIX}${server}__*`;
  return whole && name.startsWith(`${MCP_PREFIX}${server}__`);
}

/** Whether a list of names and patterns allows `name`: one entry covers it and no `!` entry takes it out. */
export function allowsTool(entries: readonly string[], name: string): boolean {
  let allowed = false;
  for (const entry of entries) {
    if (entry.startsWith("!")) {
      if (covers(entry.slice(1), name)) return false;
    } else if (!allowed && covers(entry, name)) {
      allowed = true;
    }
  }
  return allowed;
}
