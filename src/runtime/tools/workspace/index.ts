// The workspace tools under Claude Code's names. Which of them a deployment offers depends on what runs here:
// Read, Write and Edit always; Glob and Grep with ripgrep; Bash only with a working sandbox.
import type { Searcher } from "../../../sandbox/ripgrep.js";
import type { Sandbox } from "../../../sandbox/types.js";
import type { Tool } from "../tool.js";
import { createBashTool } from "./bash.js";
import { createEditTool } from "./edit.js";
import { createGlobTool } from "./glob.js";
import { createGrepTool } from "./grep.js";
import { createReadTool } from "./read.js";
import type { WorkspaceResolver } from "./workspace.js";
import { createWriteTool } from "./write.js";

export { BASH } from "./bash.js";
export { EDIT } from "./edit.js";
export { GLOB } from "./glob.js";
export { GREP } from "./grep.js";
export { READ } from "./read.js";
export { WRITE } from "./write.js";
export type { Workspace, WorkspaceAccess, WorkspaceChange, WorkspaceLimits, WorkspaceResolver } from "./workspace.js";
export { skillFolderMount, skillFolderPath, WORKSPACE_PATH } from "./workspace.js";

export const WORKSPACE_TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"] as const;

export interface WorkspaceToolsOptions {
  workspaceFor: WorkspaceResolver;
  /** null where no sandbox can run: Bash is not offered. */
  sandbox: Sandbox | null;
  /** null without ripgrep: Glob and Grep are not offered. */
  searcher: Searcher | null;
  /** BASH_DEFAULT_TIMEOUT_MS. */
  bashDefaultTimeoutMs: number;
}

export interface WorkspaceTools {
  tools: Tool[];
  /** Tools not offered here, with the reason (for the startup log and `skills list`). */
  missing: Array<{ name: string; why: string }>;
}

export function createWorkspaceTools(options: WorkspaceToolsOptions, sandboxProblem = "no sandbox can run here"): WorkspaceTools {
  const owner = options.sandbox?.user ?? null;
  const tools: Tool[] = [createReadTool(options), createWriteTool({ ...options, owner }), createEditTool({ ...options, owner })];
  const missing: WorkspaceTools["missing"] = [];
  if (options.searcher) tools.push(createGlobTool({ ...options, searcher: options.searcher }), createGrepTool({ ...options, searcher: options.searcher }));
  else missing.push({ name: "Glob", why: "ripgrep is not installed" }, { name: "Grep", why: "ripgrep is not installed" });
  if (options.sandbox) tools.push(createBashTool({ ...options, sandbox: options.sandbox, defaultTimeoutMs: options.bashDefaultTimeoutMs }));
  else missing.push({ name: "Bash", why: sandboxProblem });
  return { tools, missing };
}
