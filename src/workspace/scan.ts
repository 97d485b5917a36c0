// A workspace folder as entries the store keeps: regular files and symlinks, by their path relative to the folder,
// with size, mode and SHA-256. Nothing is followed: a symlink is an entry of its own, and only one whose target
// stays inside the workspace is kept (one leading to /etc/passwd or DATA_DIR is left out, and said so).
import { createHash } from "node:crypto";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join, posix } from "node:path";
import type { WorkspaceEntry, WorkspaceFile } from "../store/store.js";

/** Why a stored path is not one a workspace may hold, or null: relative, `/`-separated, no empty/`.`/`..` part, no NUL. */
export function badPath(path: string): string | null {
  if (path === "" || path.startsWith("/")) return "not a relative path";
  if (path.includes("\0")) return "contains NUL";
  if (path.split("/").some((part) => part === "" || part === "." || part === "..")) return "has an empty, . or .. part";
  return null;
}

/** Whether a symlink at `path` with `target` stays inside the workspace (as /workspace/… or relative). */
export function confinedLink(path: string, target: string): boolean {
  if (target.includes("\0") || target === "") return false;
  const resolved = target.startsWith("/") ? target : posix.join("/workspace", posix.dirname(path), target);
  const normal = posix.normalize(resolved);
  return normal === "/workspace" || normal.startsWith("/workspace/");
}

export const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The entry at `path` (relative) in `dir`, with its content; null when there is none, or it is not kept. */
export async function readEntry(dir: string, path: string): Promise<WorkspaceFile | { skipped: string } | null> {
  if (badPath(path)) return { skipped: `${JSON.stringify(path)}: ${badPath(path)}` };
  const abs = join(dir, path);
  const info = await lstat(abs).catch(() => null);
  if (!info || info.isDirectory()) return null;
  if (info.isSymbolicLink()) {
    const target = await readlink(abs);
    if (!confinedLink(path, target)) return { skipped: `${path}: a symlink leading out of the workspace (${target})` };
    const content = Buffer.from(target);
    return { path, kind: "symlink", mode: 0o777, size: content.length, sha256: sha256(content), content };
  }
  if (!info.isFile()) return { skipped: `${path}: not a regular file` };
  const content = await readFile(abs);
  return { path, kind: "file", mode: info.mode & 0o111 ? 0o755 : 0o644, size: content.length, sha256: sha256(content), content };
}

export interface Scan {
  entries: Map<string, WorkspaceFile>;
  /** Entries left out, each with why. */
  skipped: string[];
}

/** Every file and kept symlink under `dir`. */
export async function scan(dir: string): Promise<Scan> {
  const entries = new Map<string, WorkspaceFile>();
  const skipped: string[] = [];
  const pending = [""];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    const names = await readdir(join(dir, folder)).catch(() => [] as string[]);
    for (const name of names) {
      const path = folder ? `${folder}/${name}` : name;
      const info = await lstat(join(dir, path)).catch(() => null);
      if (!info) {
        skipped.push(`${JSON.stringify(path)}: unreadable name`);
        continue;
      }
      if (info.isDirectory()) {
        pending.push(path);
        continue;
      }
      const read = await readEntry(dir, path).catch((error: unknown) => ({ skipped: `${path}: ${error instanceof Error ? error.message : String(error)}` }));
      if (read === null) continue;
      if ("skipped" in read) skipped.push(read.skipped);
      else entries.set(path, read);
    }
  }
  return { entries, skipped };
}

/** The entry without its content. */
export function entryOf(file: WorkspaceFile): WorkspaceEntry {
  return { path: file.path, kind: file.kind, mode: file.mode, size: file.size, sha256: file.sha256 };
}

export function sameEntry(a: WorkspaceEntry, b: WorkspaceEntry): boolean {
  return a.kind === b.kind && a.mode === b.mode && a.size === b.size && a.sha256 === b.sha256;
}
