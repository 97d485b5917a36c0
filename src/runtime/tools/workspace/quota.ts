// What a workspace holds, against WORKSPACE_MAX_BYTES and WORKSPACE_MAX_FILES. Counted by walking the folder
// without following symlinks (a link counts as one file of no size). The file tools check before they write; a
// command can only be checked after it ran, so Bash reports a workspace over its limits and the file tools then
// refuse to add to it until files are removed.
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Workspace, WorkspaceLimits } from "./workspace.js";

export interface Usage {
  bytes: number;
  files: number;
}

/** What `workspace` holds: as its keeper reports it, or counted on disk. */
export function usageOf(workspace: Workspace): Promise<Usage> {
  return workspace.usage ? workspace.usage() : measure(workspace.dir);
}

export async function measure(dir: string): Promise<Usage> {
  const usage: Usage = { bytes: 0, files: 0 };
  const pending = [dir];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      continue; // removed meanwhile, or unreadable: nothing the tools could use either
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        pending.push(path);
        continue;
      }
      usage.files++;
      if (entry.isFile()) usage.bytes += (await lstat(path).catch(() => ({ size: 0 }))).size;
    }
  }
  return usage;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 * 1024) return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} bytes`;
}

/** Why `usage` is over `limits`, or null. */
export function overLimits(usage: Usage, limits: WorkspaceLimits): string | null {
  const over: string[] = [];
  if (usage.bytes > limits.maxBytes) over.push(`${formatBytes(usage.bytes)} of at most ${formatBytes(limits.maxBytes)} (WORKSPACE_MAX_BYTES)`);
  if (usage.files > limits.maxFiles) over.push(`${usage.files} files of at most ${limits.maxFiles} (WORKSPACE_MAX_FILES)`);
  return over.length ? over.join(" and ") : null;
}

/**
 * Whether writing `newBytes` in place of `oldBytes` (a new file when `oldBytes` is null) keeps the workspace
 * within its limits; the refusal says what to do.
 */
export async function checkWrite(workspace: Workspace, oldBytes: number | null, newBytes: number): Promise<string | null> {
  const { limits } = workspace;
  const now = await usageOf(workspace);
  const after = { bytes: now.bytes - (oldBytes ?? 0) + newBytes, files: now.files + (oldBytes === null ? 1 : 0) };
  const over = overLimits(after, limits);
  // A write that adds nothing is let through even over the limits: it is how a workspace gets back under them.
  if (!over || (after.bytes <= now.bytes && after.files <= now.files)) return null;
  return `the workspace would hold ${over}; delete files you no longer need (Bash: rm) and try again`;
}
