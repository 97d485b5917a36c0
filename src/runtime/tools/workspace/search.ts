// What Glob and Grep share: finding the folder or file to search (confined like every workspace path), handing
// it to ripgrep through the sandbox module, and cutting long results with a note.
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import type { Searcher, SearchResult } from "../../../sandbox/ripgrep.js";
import { fail, type ToolContext, type ToolOutput } from "../tool.js";
import { inFolder, locate } from "./paths.js";
import { accessFor, WORKSPACE_PATH, type WorkspaceResolver } from "./workspace.js";

export interface SearchToolOptions {
  workspaceFor: WorkspaceResolver;
  searcher: Searcher;
  /** A search is stopped after this long. */
  timeoutMs?: number;
  /** Characters of result text at most. */
  maxChars?: number;
  /** Bytes of ripgrep output read at most (past it, whole lines are dropped and the result says so). */
  searchBytes?: number;
}

/** A path argument the model meant to leave out ("undefined", "null", ""). */
export const omitted = (path: string | undefined) => path === undefined || ["", "undefined", "null"].includes(path.trim());

/**
 * Runs ripgrep with `args` on `path` (default: the workspace). `folderOnly`: the target must be a folder (Glob).
 * Returns ripgrep's result with the searched path as the tools see it, or the tool error.
 */
export async function searchPath(
  tool: string,
  ctx: ToolContext,
  options: SearchToolOptions,
  path: string | undefined,
  args: (folder: boolean) => string[],
  folderOnly = false,
): Promise<{ ok: true; result: Extract<SearchResult, { status: "done" }>; target: string; folder: boolean } | { ok: false; output: ToolOutput }> {
  const access = await accessFor(tool, ctx, options.workspaceFor);
  if (!access.ok) return access;
  const located = await locate(omitted(path) ? WORKSPACE_PATH : path!, access.roots);
  if (!located.ok) return { ok: false, output: fail(`${tool}: ${located.reason}`) };
  const { at } = located;
  try {
    const folder = at.name === null;
    if (folderOnly && !folder) return { ok: false, output: fail(`${tool}: ${at.path} is a file; path must be a folder`) };
    const result = await options.searcher.search({
      key: access.access.workspace.id,
      args: args(folder),
      target: { path: at.path, folder },
      // A fresh descriptor of what was located (the searcher closes it): the folder again through its own
      // descriptor's magic link, or the file by name in it, never through a symlink.
      open: async () =>
        folder
          ? open(`/proc/self/fd/${at.folder.fd}`, constants.O_RDONLY | constants.O_DIRECTORY)
          : open(inFolder(at.folder, at.name!), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK),
      workspace: access.access.workspace.dir,
      readOnly: access.access.readOnly,
      timeoutMs: options.timeoutMs ?? 30_000,
      outputBytes: options.searchBytes ?? 4 * 1024 * 1024,
      signal: ctx.signal,
    });
    if (result.status === "failed") return { ok: false, output: fail(`${tool}: ${result.reason}`) };
    // Exit 2 with nothing said (--no-messages) is ripgrep's "no file was searched": the filters left none.
    if (result.exitCode > 1 && result.stdout.trim() === "" && result.stderr.trim() !== "") {
      return { ok: false, output: fail(`${tool}: ${result.stderr.trim().replace(/^rg: /, "")}`) };
    }
    return { ok: true, result, target: at.path, folder };
  } finally {
    await at.folder.close();
  }
}

/** The first `limit` entries joined by newlines, within `maxChars`: the text and how many entries it shows. */
export function firstEntries(entries: readonly string[], limit: number, maxChars: number): { text: string; shown: number } {
  let used = 0;
  let shown = 0;
  for (const entry of entries.slice(0, limit)) {
    if (shown > 0 && used + entry.length + 1 > maxChars) break;
    used += entry.length + 1;
    shown++;
  }
  return { text: entries.slice(0, shown).join("\n"), shown };
}
