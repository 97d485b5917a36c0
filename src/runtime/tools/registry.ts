import type { ToolSpec } from "../../llm/types.js";
import type { Catalog } from "../../catalog/definition.js";
import type { AgentType, StackFrame } from "../frame.js";
import { COMPLETE, completeTool } from "./complete.js";
import { spawnTool } from "./spawn.js";
import type { Tool } from "./tool.js";

/** The tools a deployment offers, by name. Stack tools are always there; others are added at startup. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(extra: Tool[] = []) {
    const names = () => [...this.tools.keys()];
    for (const tool of [spawnTool("skill", names), spawnTool("agent", names), completeTool, ...extra]) {
      if (this.tools.has(tool.spec.name)) throw new Error(`tool ${tool.spec.name} is registered twice`);
      this.tools.set(tool.spec.name, tool);
    }
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The specs the model sees for a frame: its whitelist, minus spawn tools with nothing to spawn. */
  specsFor(frame: StackFrame, catalog: Catalog): ToolSpec[] {
    return frame.effectiveTools
      .filter((name) => !(name === "use_skill" && catalog.skills.size === 0))
      .filter((name) => !(name === "use_agent" && catalog.agents.size === 0))
      .map((name) => this.tools.get(name)?.spec)
      .filter((spec): spec is ToolSpec => spec !== undefined);
  }
}

/** Which tools a frame may use: `complete` for every child and never main; skills never get use_skill. */
export function effectiveToolsFor(type: AgentType, all: string[], whitelist: string[] | null): string[] {
  let names = all.filter((n) => n !== COMPLETE);
  if (type === "skill") names = names.filter((n) => n !== "use_skill");
  if (whitelist) names = names.filter((n) => whitelist.includes(n));
  return type === "main" ? names : [...names, COMPLETE];
}
