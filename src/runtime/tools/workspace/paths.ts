// Where a path given to a workspace tool leads, confined to the workspace and the read-only folders. The path is
// walked one name at a time, each folder opened before the next name is looked up in it (through
// /proc/self/fd/<folder>/<name>, the way openat works), and nothing is ever opened through a symlink: a symlink
// met on the way is read and its target walked in turn, in the same namespace the sandboxed commands see
// (/workspace, /skills/<name>), so a link that stays inside works and one that leads anywhere else is refused.
// A folder swapped for a symlink between two steps is therefore never followed out.
import { constants } from "node:fs";
import { lchown, lstat, mkdir, open, readlink, type FileHandle } from "node:fs/promises";
import { posix } from "node:path";
import type { SandboxUser } from "../../../sandbox/types.js";

/** A folder the tools may use: the workspace (writable) or a read-only one, by the path the tools see. */
export interface Root {
  /** As the tools see it: /workspace, /skills/pdf. */
  path: string;
  /** The folder on this machine. */
  dir: string;
  writable: boolean;
}

export interface Located {
  root: Root;
  /** The target's path as the tools see it, symlinks resolved. */
  path: string;
  /** The open folder holding the target, or the target itself when it is a folder (`name` null). Close it. */
  folder: FileHandle;
  name: string | null;
}

export type Location = { ok: true; at: Located } | { ok: false; reason: string };

export interface LocateOptions {
  /** Create missing folders on the way (Write), in a writable root, owned by `owner` when given. */
  createFolders?: boolean;
  owner?: SandboxUser | null;
}

const FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const MAX_LINKS = 40;

/** The path of `name` inside an open folder, for open/lstat/readlink/mkdir without following anything before it. */
export const inFolder = (folder: FileHandle, name: string) => `/proc/self/fd/${folder.fd}/${name}`;

/** Turns a tool's path (absolute, or relative to the workspace) into its components, or says why it cannot be one. */
function parts(input: string, workspace: string): string[] | string {
  if (input.includes("\0")) return "the path contains a NUL character";
  const full = input.startsWith("/") ? input : `${workspace}/${input}`;
  return full.split("/").filter((p) => p !== "");
}

function outside(input: string, roots: readonly Root[]): string {
  const where = roots.map((r) => `${r.path}${r.writable ? "" : " (read-only)"}`).join(", ");
  return `"${input}" is outside the workspace: files can be used only under ${where}`;
}

/**
 * Finds `input` among `roots` (the first is the workspace; relative paths start there). The target itself need
 * not exist (its folder must, unless `createFolders`); a final symlink is followed like any other.
 */
export async function locate(input: string, roots: readonly Root[], options: LocateOptions = {}): Promise<Location> {
  const queue = parts(input, roots[0]!.path);
  if (typeof queue === "string") return { ok: false, reason: queue };
  let stack: string[] = []; // components walked so far, as the tools see them
  let root: Root | null = null;
  let folders: FileHandle[] = []; // folders[0] is the root's; one per component below it
  let links = 0;
  const closeAll = async () => {
    await Promise.all(folders.map((f) => f.close().catch(() => {})));
    folders = [];
  };
  const fail = async (reason: string): Promise<Location> => {
    await closeAll();
    return { ok: false, reason };
  };
  try {
    while (queue.length > 0) {
      const name = queue.shift()!;
      const last = queue.length === 0;
      if (name === ".") continue;
      if (name === "..") {
        if (root && folders.length > 1) {
          await folders.pop()!.close();
          stack.pop();
        } else {
          if (root) await closeAll();
          root = null;
          stack.pop();
        }
        continue;
      }
      if (!root) {
        stack.push(name);
        const here = `/${stack.join("/")}`;
        const mount = roots.find((r) => r.path === here);
        if (mount) {
          try {
            folders = [await open(mount.dir, constants.O_RDONLY | constants.O_DIRECTORY)];
          } catch (error) {
            return fail(`${mount.path} cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
          }
          root = mount;
        } else if (!roots.some((r) => r.path.startsWith(`${here}/`))) {
          return fail(outside(input, roots));
        }
        continue;
      }
      const folder = folders[folders.length - 1]!;
      const entry = inFolder(folder, name);
      let kind: "folder" | "link" | "other" | "missing";
      try {
        const info = await lstat(entry);
        kind = info.isSymbolicLink() ? "link" : info.isDirectory() ? "folder" : "other";
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        kind = "missing";
      }
      if (kind === "link") {
        if (++links > MAX_LINKS) return fail(`"${input}" goes through too many symlinks`);
        const target = await readlink(entry);
        if (target.includes("\0")) return fail(`"${input}" goes through a broken symlink`);
        queue.unshift(...target.split("/").filter((p) => p !== ""));
        if (target.startsWith("/")) {
          await closeAll();
          root = null;
          stack = [];
        }
        continue;
      }
      if (last && kind !== "folder") {
        return { ok: true, at: { root, path: `/${[...stack, name].join("/")}`, folder: folders.pop()!, name } };
      }
      if (kind === "other") return fail(`"${input}": ${posix.join("/", ...stack, name)} is a file, not a folder`);
      if (kind === "missing") {
        if (!options.createFolders || !root.writable) return fail(`"${input}": there is no folder ${posix.join("/", ...stack, name)}`);
        await mkdir(entry, { mode: 0o755 });
        // lchown: should the new folder be swapped for a symlink meanwhile, the link's target is not touched.
        if (options.owner) await lchown(entry, options.owner.uid, options.owner.gid);
      }
      try {
        folders.push(await open(entry, FOLDER));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // ELOOP/ENOTDIR: it changed into a symlink or a file since it was looked at.
        return fail(`"${input}" changed while it was being opened (${code ?? String(error)}); try again`);
      }
      stack.push(name);
    }
    if (!root) return fail(outside(input, roots));
    return { ok: true, at: { root, path: `/${stack.join("/")}`, folder: folders.pop()!, name: null } };
  } catch (error) {
    return fail(`"${input}" could not be looked up (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  } finally {
    // Everything but the returned folder (popped off above) is closed.
    await closeAll();
  }
}
