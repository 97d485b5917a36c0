// A received file put in the top folder of a session's workspace (for the files feature): under a safe name made
// from the one it came with (no folders, no control characters, never `.`/`..`), a free one when that is taken,
// within the workspace's limits, and saved like a tool's change.
import { lchown, lstat, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatBytes } from "../files/limits.js";
import { measure } from "../runtime/tools/workspace/quota.js";
import type { WorkspaceLimits } from "../runtime/tools/workspace/index.js";
import type { SandboxUser } from "../sandbox/types.js";

export type Placed = { ok: true; path: string } | { ok: false; reason: string };

/** A file name made safe: its last path part, control characters and NUL replaced, at most 200 characters. */
export function safeName(name: string): string {
  const last = name.split(/[/\\]/).pop() ?? "";
  // eslint-disable-next-line no-control-regex
  const clean = last
    .replace(/[\u0000-\u001f\u007f]/g, "_")
    .trim()
    .slice(0, 200);
  return clean === "" || clean === "." || clean === ".." ? "file" : clean;
}

/** `report.pdf`, then `report (2).pdf`, `report (3).pdf`… */
function variant(name: string, n: number): string {
  if (n === 1) return name;
  const dot = name.lastIndexOf(".");
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

export async function placeInto(dir: string, name: string, bytes: Buffer, limits: WorkspaceLimits, owner: SandboxUser | null): Promise<Placed> {
  const base = safeName(name);
  // Placed already (a turn that placed it and died before its step committed runs again): the same path.
  const already = await placedAlready(dir, base, bytes);
  if (already) return { ok: true, path: `/workspace/${already}` };
  const usage = await measure(dir);
  if (usage.bytes + bytes.length > limits.maxBytes || usage.files + 1 > limits.maxFiles) {
    return {
      ok: false,
      reason: `the workspace has no room for ${safeName(name)} (${formatBytes(bytes.length)}): it holds ${formatBytes(usage.bytes)} in ${usage.files} file${usage.files === 1 ? "" : "s"}, and takes at most ${formatBytes(limits.maxBytes)} in ${limits.maxFiles} files (WORKSPACE_MAX_BYTES, WORKSPACE_MAX_FILES)`,
    };
  }
  for (let n = 1; n <= 1000; n++) {
    const candidate = variant(base, n);
    try {
      // wx: never replaces anything, and never writes through a symlink planted under that name.
      await writeFile(join(dir, candidate), bytes, { flag: "wx", mode: 0o644 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    if (owner) await lchown(join(dir, candidate), owner.uid, owner.gid);
    return { ok: true, path: `/workspace/${candidate}` };
  }
  return { ok: false, reason: `no free name for ${base} in the workspace` };
}

/** The name among `base`'s variants that holds exactly `bytes` as a regular file (never following a symlink). */
async function placedAlready(dir: string, base: string, bytes: Buffer): Promise<string | null> {
  for (let n = 1; n <= 1000; n++) {
    const candidate = variant(base, n);
    const info = await lstat(join(dir, candidate)).catch(() => null);
    if (!info) return null;
    if (info.isFile() && info.size === bytes.length && (await readFile(join(dir, candidate))).equals(bytes)) return candidate;
  }
  return null;
}
