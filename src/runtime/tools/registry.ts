import type { ToolDefinition } from "../../llm/types.js";
import { available, type Catalog } from "../../catalog/definition.js";
import { allowsTool, isMcpEntry, MCP_ALL, MCP_PREFIX } from "../../catalog/tool-patterns.js";
import type { AgentType, StackFrame } from "../frame.js";
import { callAgentTool } from "./call-agent.js";
import { COMPLETE, completeTool } from "./complete.js";
import { READ_SKILL_FILE, readSkillFileTool } from "./read-skill-file.js";
import { readToolResultTool } from "./read-tool-result.js";
import { viewFileTool } from "./view-file.js";
import { namesFiles, VIEW_FILE } from "../file-blocks.js";
import { hasCutResult, READ_TOOL_RESULT } from "../result-bound.js";
import { REPORT_BACK, reportBackSpec, reportBackTool } from "./report-back.js";
import { spawnTool } from "./spawn.js";
import type { Tool } from "./tool.js";
import { MEMORY_TOOLS } from "../memory/tools.js";
import { SCHEDULE_TOOLS } from "./schedules.js";

/**
 * Tools that come and go while the gateway runs (the MCP servers' tools, `mcp__<server>__<tool>`): asked on every
 * lookup, never copied, so a server that joins late, changes its list or dies is seen at the next model call.
 */
export interface DynamicTools {
  /** The tools offered now, in a stable order. */
  list(): Tool[];
  /** A tool by name; for a configured server's tool that is not offered now, one that answers why with an error. */
  get(name: string): Tool | undefined;
}

/** The tools a deployment offers, by name. Stack tools are always there; others are added at startup. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  /** `dynamic`: MCP tools, which frames get through the `mcp__*` patterns (see catalog/tool-patterns.ts). */
  constructor(
    extra: Tool[] = [],
    private readonly dynamic: DynamicTools | null = null,
  ) {
    const names = () => this.names();
    for (const tool of [
      spawnTool("skill", names),
      spawnTool("agent", names),
      callAgentTool(names),
      completeTool,
      reportBackTool,
      readSkillFileTool,
      readToolResultTool,
      viewFileTool,
      ...extra,
    ]) {
      if (this.tools.has(tool.spec.name)) throw new Error(`tool ${tool.spec.name} is registered twice`);
      this.tools.set(tool.spec.name, tool);
    }
  }

  private specOf(name: string): ToolDefinition | undefined {
    const tool = this.tools.get(name);
    return tool?.server ?? tool?.spec;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name) ?? (name.startsWith(MCP_PREFIX) ? this.dynamic?.get(name) : undefined);
  }

  /** The tools' names, and `mcp__*` (every MCP tool) when MCP servers are configured. */
  names(): string[] {
    return [...this.tools.keys(), ...(this.dynamic ? [MCP_ALL] : [])];
  }

  /**
   * The specs the model sees for a frame: its whitelist, minus spawn tools with nothing to spawn, plus
   * read_tool_result while its history shows a result cut, then the MCP tools its patterns allow among those offered now.
   */
  specsFor(frame: StackFrame, catalog: Catalog): ToolDefinition[] {
    const own = frame.effectiveTools
      .filter((name) => !isMcpEntry(name))
      .filter((name) => !(name === "use_skill" && available(catalog.skills).length === 0))
      .filter((name) => !((name === "use_agent" || name === "call_agent") && available(catalog.agents).length === 0))
      .concat(hasCutResult(frame.history) ? [READ_TOOL_RESULT] : [])
      .concat(namesFiles(frame.history) ? [VIEW_FILE] : [])
      .map((name) => (name === REPORT_BACK ? reportBackSpec(frame) : this.specOf(name)))
      .filter((spec): spec is ToolDefinition => spec !== undefined);
    if (!this.dynamic || !frame.effectiveTools.some(isMcpEntry)) return own;
    return [
      ...own,
      ...this.dynamic
        .list()
        .filter((tool) => allowsTool(frame.effectiveTools, tool.spec.name))
        .map((tool) => tool.spec),
    ];
  }
}

/**
 * Whether a frame may run a tool: one of its effective tools, or read_tool_result, which every frame has (it reads
 * only the frame's own results, and a cut note must never promise a tool the frame cannot call).
 */
export function mayUse(frame: StackFrame, name: string): boolean {
  return name === READ_TOOL_RESULT || name === VIEW_FILE || allowsTool(frame.effectiveTools, name);
}

/**
 * Which tools a frame may use. The whitelist (`tools` / `allowed-tools`) narrows the working tools;
 * the stack's own tools are not subject to it: every child finishes with `complete`, or with
 * `report_back` when it must return a structured result; main gets neither; `read_skill_file` is for
 * skills only; read_tool_result is never listed (see mayUse). Skills never get use_skill. MCP tools come as patterns
 * (`mcp__*` for main and for a child without a whitelist), resolved at each model call.
 */
export function effectiveToolsFor(type: AgentType, all: string[], whitelist: string[] | null, structured = false): string[] {
  let names = all.filter((n) => n !== COMPLETE && n !== REPORT_BACK && n !== READ_SKILL_FILE && n !== READ_TOOL_RESULT && n !== VIEW_FILE);
  if (type === "skill") names = names.filter((n) => n !== "use_skill");
  // The user's memories are main's to keep (remember/recall/forget); a child sees them only read-only, when it opts in.
  if (type !== "main") names = names.filter((n) => !(MEMORY_TOOLS as readonly string[]).includes(n));
  // Scheduling speaks for the user: a child gets the tools only when its definition names them.
  if (type !== "main" && !whitelist) names = names.filter((n) => !(SCHEDULE_TOOLS as readonly string[]).includes(n));
  // MCP entries of a whitelist are kept as written (patterns too), when this gateway has MCP servers at all.
  if (whitelist) names = [...new Set([...names.filter((n) => whitelist.includes(n)), ...(all.includes(MCP_ALL) ? whitelist.filter(isMcpEntry) : [])])];
  if (type === "skill") names.push(READ_SKILL_FILE);
  if (type === "main") return names;
  return [...names, structured ? REPORT_BACK : COMPLETE];
}
