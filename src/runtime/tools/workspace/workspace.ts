// A session's workspace as the tools use it. Where it lives, how it is kept across restarts and replicas, and
// which session it belongs to is the persistence layer's business: it hands the tools a Workspace for the call's
// context (or null when the conversation has none) and hears back which files a tool changed.
import { WORKSPACE_PATH, type Mount } from "../../../sandbox/types.js";
import { fail, type ToolContext, type ToolOutput } from "../tool.js";
import type { Root } from "./paths.js";

export { WORKSPACE_PATH };

export interface WorkspaceLimits {
  /** WORKSPACE_MAX_BYTES: the files' sizes together. */
  maxBytes: number;
  /** WORKSPACE_MAX_FILES: files and symlinks together (folders do not count). */
  maxFiles: number;
}

export type WorkspaceChange = { paths: readonly string[] } | { all: true };

export interface Workspace {
  /** Stable id of the workspace (its session's): commands of different workspaces take turns in the sandbox. */
  readonly id: string;
  /** The folder on this machine (absolute). */
  readonly dir: string;
  readonly limits: WorkspaceLimits;
  /** What the workspace holds now, when its keeper knows better than a walk over the folder (the default). */
  usage?(): Promise<{ bytes: number; files: number }>;
  /**
   * Told after a tool changed files: the paths it wrote (as the tools see them, /workspace/…), or `all` after a
   * command that may have changed anything. The persistence layer saves the workspace here.
   */
  changed?(change: WorkspaceChange): Promise<void>;
}

export interface WorkspaceAccess {
  workspace: Workspace;
  /** Folders the call may read but not change (its skill's folder), by the path the tools see. */
  readOnly: readonly Mount[];
}

/** The workspace for a tool call, or null when its conversation has none. */
export type WorkspaceResolver = (ctx: ToolContext) => Promise<WorkspaceAccess | null>;

/** Where a skill's folder appears to the tools and to commands (what "Base directory for this skill:" names). */
export function skillFolderPath(skillName: string): string {
  return `/skills/${skillName.replace(/[^A-Za-z0-9_.-]/g, "_")}`;
}

/** A skill frame's own folder, read-only; none for main, agents, or skills without a folder. */
export function skillFolderMount(ctx: Pick<ToolContext, "frame" | "catalog">): Mount[] {
  const { frame, catalog } = ctx;
  if (frame.agentType !== "skill" || !frame.definitionName) return [];
  const folder = catalog.skills.get(frame.definitionName)?.folder;
  return folder ? [{ dir: folder, path: skillFolderPath(frame.definitionName) }] : [];
}

/** The roots a tool call may touch: the workspace first (relative paths start there), then the read-only ones. */
export function rootsOf(access: WorkspaceAccess): Root[] {
  return [{ path: WORKSPACE_PATH, dir: access.workspace.dir, writable: true }, ...access.readOnly.map((m) => ({ path: m.path, dir: m.dir, writable: false }))];
}

/** The call's workspace and roots, or the tool error saying there is none. */
export async function accessFor(
  tool: string,
  ctx: ToolContext,
  workspaceFor: WorkspaceResolver,
): Promise<{ ok: true; access: WorkspaceAccess; roots: Root[] } | { ok: false; output: ToolOutput }> {
  const access = await workspaceFor(ctx);
  if (!access) return { ok: false, output: fail(`${tool}: this conversation has no workspace, so there are no files to use`) };
  return { ok: true, access, roots: rootsOf(access) };
}

/** `cat -n` style: the line number right-aligned in six columns, a tab, the line (cut at `maxLineChars`). */
export function numbered(lines: ReadonlyArray<readonly [number, string]>, maxLineChars = 2000): string {
  return lines
    .map(([n, text]) => `${String(n).padStart(6)}\t${text.length > maxLineChars ? `${text.slice(0, maxLineChars)}… [line cut at ${maxLineChars} characters]` : text}`)
    .join("\n");
}
