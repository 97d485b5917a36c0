import type { DefinitionKind } from "./definition.js";
import { listing } from "./problems.js";
import { isMcpEntry, MCP_ALL, mcpServerOf } from "./tool-patterns.js";

// Whitelists (`tools` / `allowed-tools`) as other hosts write them. Claude Code writes `Read, Grep, Bash(git log:*)`
// (an entry may carry a permission rule in parentheses); the Agent Skills spec writes `Bash(jq:*) Bash(git:*)`.

/** Splits on commas and whitespace, but not inside parentheses: `Bash(git log:*) Read` is two entries. */
export function splitToolList(text: string): string[] {
  const entries: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "(") depth++;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === "," || /\s/.test(char))) {
      if (current.trim()) entries.push(current.trim());
      current = "";
    } else {
      current += char;
    }
  }
  if (current.trim()) entries.push(current.trim());
  return entries;
}

/** Claude Code tools this gateway has an equivalent for. */
const EQUIVALENTS: Readonly<Record<string, string>> = {
  WebFetch: "http_request",
  Agent: "call_agent",
  Task: "call_agent",
  Skill: "use_skill",
};

/** Claude Code's own tools (code.claude.com/docs/en/tools-reference, plus names older files use). */
const CLAUDE_CODE_TOOLS = new Set([
  ...Object.keys(EQUIVALENTS),
  "AskUserQuestion",
  "Bash",
  "BashOutput",
  "CronCreate",
  "CronDelete",
  "CronList",
  "Edit",
  "EnterPlanMode",
  "EnterWorktree",
  "ExitPlanMode",
  "ExitWorktree",
  "Glob",
  "Grep",
  "KillBash",
  "KillShell",
  "LS",
  "LSP",
  "ListMcpResourcesTool",
  "MultiEdit",
  "NotebookEdit",
  "NotebookRead",
  "PowerShell",
  "Read",
  "ReadMcpResourceTool",
  "SlashCommand",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskOutput",
  "TaskStop",
  "TaskUpdate",
  "TodoRead",
  "TodoWrite",
  "ToolSearch",
  "WebSearch",
  "Write",
]);

export interface ToolContext {
  kind: DefinitionKind;
  /** Tool names this gateway offers; when absent, names are not checked (only Claude Code's are translated). */
  known?: readonly string[];
  /** Tools this gateway has but that are switched off here, each with how to switch it on. */
  disabled?: Readonly<Record<string, string>>;
  /**
   * The MCP servers configured here (mcp.json). An entry naming one of them (`mcp__github__create_issue`,
   * `mcp__github__*`, `mcp__github`) is kept as written: the server's tools are only known while it runs.
   */
  mcpServers?: readonly string[];
}

/** A declared entry the definition does not get here, and why (what would make it available, where known). */
export interface MissingTool {
  entry: string;
  why: string;
}

export interface ToolResolution {
  /** The whitelist in this gateway's tool names. */
  tools: string[];
  /** The entries dropped, each with its reason, in the order written. */
  missing: MissingTool[];
  /** One sentence for the file's single warning, or null when every entry was a tool of this gateway. */
  warning: string | null;
}

/** Translates a whitelist into this gateway's tool names and says, once, what was translated or dropped. */
export function resolveTools(field: string, entries: readonly string[], ctx: ToolContext): ToolResolution {
  const tools = new Set<string>();
  const used: string[] = [];
  const foreign: string[] = [];
  const ruled: string[] = [];
  const off: string[] = [];
  const unknown: string[] = [];
  const nested: string[] = [];
  const elsewhere: string[] = [];
  const has = (name: string) => (ctx.known ? ctx.known.includes(name) : true);
  const missing: MissingTool[] = [];
  const miss = (list: string[], entry: string, why: string) => {
    list.push(entry);
    missing.push({ entry, why });
  };
  for (const entry of entries) {
    const paren = entry.indexOf("(");
    const base = paren < 0 ? entry : entry.slice(0, paren);
    const equivalent = Object.hasOwn(EQUIVALENTS, base) ? EQUIVALENTS[base]! : null;
    // A Claude Code tool this gateway offers under the same name (Read, Bash, WebFetch, WebSearch…). Its rule in
    // parentheses (`Bash(git:*)`, `Read(*.md)`) is a permission rule of Claude Code's: the tool is granted, and
    // confined here as every call of it is (the workspace, the sandbox, the egress guard).
    if (CLAUDE_CODE_TOOLS.has(base) && ctx.known?.includes(base)) {
      tools.add(base);
      if (paren >= 0) used.push(`${entry} as ${base} (the rule in parentheses is not enforced; ${base} is confined as always)`);
      continue;
    }
    if (paren < 0 && ctx.mcpServers && isMcpEntry(entry)) {
      if (entry === MCP_ALL || ctx.mcpServers.includes(mcpServerOf(entry) ?? "")) tools.add(entry);
      else miss(elsewhere, entry, `a tool of MCP server "${mcpServerOf(entry) ?? entry}", which is not in the MCP configuration`);
    } else if (paren < 0 && !CLAUDE_CODE_TOOLS.has(entry) && has(entry)) tools.add(entry);
    else if (ctx.kind === "skill" && base === "Read" && paren < 0) used.push("Read as read_skill_file (this skill's own folder only)");
    else if (equivalent && paren >= 0) miss(ruled, entry, `${equivalent} cannot enforce the rule in parentheses`);
    else if (equivalent === "use_skill" && ctx.kind === "skill") miss(nested, entry, "a skill cannot start another skill here");
    else if (equivalent && has(equivalent)) {
      tools.add(equivalent);
      used.push(`${entry} as ${equivalent}`);
    } else if (ctx.disabled && Object.hasOwn(ctx.disabled, base)) {
      off.push(`${entry}: ${ctx.disabled[base]}`);
      missing.push({ entry, why: ctx.disabled[base]! });
    } else if (ctx.disabled && Object.hasOwn(ctx.disabled, equivalent ?? entry)) {
      off.push(`${equivalent ? `${equivalent} (for ${entry})` : entry}: ${ctx.disabled[equivalent ?? entry]}`);
      missing.push({ entry, why: `${equivalent ? `${equivalent}: ` : ""}${ctx.disabled[equivalent ?? entry]!}` });
    } else if (base.startsWith("mcp__")) miss(foreign, entry, "an MCP tool, and no MCP server is configured");
    else if (CLAUDE_CODE_TOOLS.has(base)) miss(foreign, entry, "a Claude Code tool this gateway does not have");
    else miss(unknown, entry, "not a tool of this gateway");
  }
  const dropped = foreign.length + ruled.length + off.length + unknown.length + nested.length + elsewhere.length;
  if (used.length === 0 && dropped === 0) return { tools: [...tools], missing, warning: null };
  const clauses: string[] = [];
  if (used.length) clauses.push(`uses ${listing(used)}`);
  if (foreign.length) {
    const mcp = foreign.filter((t) => t.startsWith("mcp__")).length;
    const host = mcp === foreign.length ? "MCP" : mcp === 0 ? "Claude Code" : "Claude Code and MCP";
    clauses.push(`${listing(foreign)} ${foreign.length > 1 ? `are ${host} tools` : `is ${host === "MCP" ? "an" : "a"} ${host} tool`} this gateway does not have`);
  }
  if (elsewhere.length) {
    const servers = ctx.mcpServers?.length ? `it has ${listing(ctx.mcpServers)}` : "it has none";
    clauses.push(`${listing(elsewhere)} ${elsewhere.length > 1 ? "are tools of MCP servers" : "is a tool of an MCP server"} not in the MCP configuration (${servers})`);
  }
  if (ruled.length) clauses.push(`${listing(ruled)} ${are(ruled)} limited by a rule in parentheses that this gateway cannot enforce`);
  if (nested.length) clauses.push(`${listing(nested)} would start a skill from a skill, which this gateway does not allow`);
  if (off.length) clauses.push(`switched off here: ${listing(off)}`);
  if (unknown.length) {
    const what = unknown.length > 1 ? "are not tools" : "is not a tool";
    clauses.push(`${listing(unknown)} ${what} of this gateway${ctx.known ? ` (it has ${listing(ctx.known)})` : ""}`);
  }
  const ignored = dropped === 0 ? "" : dropped === 1 ? "; that one is ignored" : "; those are ignored";
  return { tools: [...tools], missing, warning: `${field}: ${clauses.join("; ")}${ignored}. The ${ctx.kind} is left with ${leftWith([...tools], ctx.kind)}` };
}

/** What a child frame of this kind ends up with: its whitelist plus the tools every child always has. */
function leftWith(tools: string[], kind: DefinitionKind): string {
  const always = kind === "skill" ? ["read_skill_file", "complete"] : ["complete"];
  const own = tools.filter((t) => !always.includes(t) && t !== "report_back" && !(kind === "skill" && t === "use_skill"));
  const there = `${listing(always)}, which ${always.length > 1 ? "are" : "is"} always there`;
  return own.length ? `${listing(own)} (and ${there})` : `only ${there}`;
}

function are(items: readonly string[]): string {
  return items.length > 1 ? "are" : "is";
}
