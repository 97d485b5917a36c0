import { createHash } from "node:crypto";
import { MCP_PREFIX } from "../catalog/tool-patterns.js";

// A server's tool becomes `mcp__<server>__<tool>`. The Messages API takes tool names matching ^[a-zA-Z0-9_-]{1,64}$
// in its documentation (its validator now says {1,128}); MCP allows more (dots, slashes, 128 characters). A name
// that breaks the rule is made to fit, not dropped: other characters become "_", a name too long is cut and given a
// short hash of the original, and a clash with another tool of the server gets the hash too. The server's own
// name is kept for the call.

export const MAX_TOOL_NAME = 64;
const ALLOWED = /[^A-Za-z0-9_-]/g;
const HASH = 8;

/** The model's name for `tool` of `server`, unique among `taken` (names already given to the server's other tools). */
export function toolNameFor(server: string, tool: string, taken: ReadonlySet<string>): string {
  const prefix = `${MCP_PREFIX}${server}__`;
  const plain = `${prefix}${tool.replace(ALLOWED, "_")}`;
  if (plain.length <= MAX_TOOL_NAME && !taken.has(plain)) return plain;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, HASH);
  const room = Math.max(0, MAX_TOOL_NAME - prefix.length - HASH - 1);
  const base = `${prefix}${tool.replace(ALLOWED, "_").slice(0, room)}_${hash}`;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, MAX_TOOL_NAME - String(n).length - 1)}_${n}`;
  return name;
}
