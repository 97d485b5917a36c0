import { constants, type Stats } from "node:fs";
import { lstat, open, readdir, realpath, type FileHandle } from "node:fs/promises";
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import { isBinary } from "../../catalog/safety.js";
import { fail, type Tool, type ToolOutput } from "./tool.js";

export const READ_SKILL_FILE = "read_skill_file";
export const DEFAULT_MAX_BYTES = 256 * 1024;

export interface ReadSkillFileOptions {
  /** Bytes read from one file at most; the rest is cut with a note. Default 256 KB. */
  maxBytes?: number;
}

// Read-only, non-blocking, and never through a symlink swapped in after the checks: opening a FIFO
// without O_NONBLOCK waits for a writer, and that wait would hold a libuv thread (or, synchronously, the
// event loop) forever.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/**
 * Progressive disclosure: a skill reads the other files of its own folder (references/, assets/,
 * scripts/) when it needs them. Confined to the folder: no absolute paths, no `..`, no symlinks out.
 * Regular files only (a FIFO, socket or device is refused before it is opened), at most `maxBytes` of
 * each. Scripts are only read, never run.
 */
export function createReadSkillFileTool(options: ReadSkillFileOptions = {}): Tool {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return {
    spec: {
      name: READ_SKILL_FILE,
      description: 'Read a file from your skill\'s own folder, e.g. references/guide.md. Pass a folder path such as "." or "references" to list its files.',
      input_schema: {
        type: "object",
        properties: { path: { type: "string", description: "Path relative to your skill folder." } },
        required: ["path"],
      },
    },
    idempotent: true,
    async run(input, ctx): Promise<ToolOutput> {
      const def = ctx.frame.definitionName ? ctx.catalog.skills.get(ctx.frame.definitionName) : undefined;
      if (!def?.folder) return fail(`${ctx.frame.agentName} has no skill folder to read from`);
      const requested = typeof input.path === "string" ? input.path.trim() : "";
      if (requested === "") return fail('read_skill_file needs a "path" such as references/guide.md');
      if (isAbsolute(requested) || normalize(requested).split(/[\\/]/).includes("..")) {
        return fail(`"${requested}" is outside the skill folder; use a path relative to it without ".."`);
      }
      let root: string;
      let target: string;
      try {
        root = await realpath(def.folder);
        target = await realpath(join(root, requested));
      } catch {
        return fail(`no file "${requested}" in the skill folder; list it with path "."`);
      }
      if (def.folderRealPath !== undefined && root !== def.folderRealPath) {
        return fail(`the skill folder now leads somewhere else than when it was loaded (${def.source}); nothing was read`);
      }
      if (target !== root && !target.startsWith(root + sep)) {
        return fail(`"${requested}" leads outside the skill folder (a symlink); it cannot be read`);
      }
      // `target` had no symlinks left in it when it was resolved; a folder on the way may have been swapped for one
      // since. Whatever was looked at or opened is checked again afterwards (stillInside), so a swap is refused.
      const info = await lstat(target);
      const stillThere = () => stillInside(def.folder!, root, requested, info);
      if (info.isDirectory()) {
        const listing = await listFolder(target);
        return (await stillThere()) ? { content: listing } : fail(swapped(requested));
      }
      if (!info.isFile()) return fail(notRegular(requested, info));
      return readCapped(target, info, requested, relative(root, target), maxBytes, stillThere);
    },
  };
}

/**
 * After a file was opened (or a folder listed): the skill folder still resolves to `root`, and `requested` still
 * resolves, inside it, to the very file or folder (device and inode) that was used. A folder swapped for a symlink
 * between the checks and the open fails this, whichever way it was swapped and back.
 */
async function stillInside(folder: string, root: string, requested: string, used: Stats): Promise<boolean> {
  try {
    if ((await realpath(folder)) !== root) return false;
    const now = await realpath(join(root, requested));
    if (now !== root && !now.startsWith(root + sep)) return false;
    const info = await lstat(now);
    return info.ino === used.ino && info.dev === used.dev;
  } catch {
    return false;
  }
}

function swapped(requested: string): string {
  return `"${requested}" changed while being read (a folder on its path was replaced); it was not read. Try again.`;
}

export const readSkillFileTool: Tool = createReadSkillFileTool();

async function listFolder(folder: string): Promise<string> {
  const entries = (await readdir(folder, { withFileTypes: true }))
    .filter((e) => !e.name.startsWith("."))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();
  return entries.length ? entries.join("\n") : "(empty folder)";
}

async function readCapped(target: string, checked: Stats, requested: string, shown: string, maxBytes: number, stillThere: () => Promise<boolean>): Promise<ToolOutput> {
  let handle: FileHandle;
  try {
    handle = await open(target, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ELOOP: the file became a symlink after the checks.
    return fail(`"${requested}" could not be opened (${code ?? String(error)}); it may have changed while being read. Try again.`);
  }
  try {
    // The path was checked before it was opened: make sure the file opened is the file checked.
    const opened = await handle.stat();
    if (!opened.isFile()) return fail(notRegular(requested, opened));
    if (opened.ino !== checked.ino || opened.dev !== checked.dev) {
      return fail(`"${requested}" was replaced while being read; try again`);
    }
    if (!(await stillThere())) return fail(swapped(requested));
    // One byte past the cap tells a file of exactly maxBytes from a longer one, whatever stat said.
    const buffer = Buffer.alloc(maxBytes + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    const truncated = filled > maxBytes;
    const bytes = truncated ? buffer.subarray(0, utf8Boundary(buffer, maxBytes)) : buffer.subarray(0, filled);
    if (isBinary(bytes)) return fail(`"${shown}" is not a text file`);
    const text = bytes.toString("utf8");
    if (!truncated) return { content: text };
    return {
      content: `${text}\n[truncated at ${formatBytes(maxBytes)}: "${shown}" is ${formatBytes(Math.max(opened.size, filled))}; only the first ${formatBytes(maxBytes)} are shown]`,
    };
  } finally {
    await handle.close();
  }
}

/** Where to cut `bytes` at or before `end` without splitting a UTF-8 character. */
function utf8Boundary(bytes: Buffer, end: number): number {
  let at = end;
  while (at > 0 && (bytes[at]! & 0xc0) === 0x80) at--; // a continuation byte: back up to the character's start
  return at;
}

function notRegular(requested: string, info: Stats): string {
  return `"${requested}" is ${kindOf(info)}, not a regular file; read_skill_file reads regular files only`;
}

function kindOf(info: Stats): string {
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  if (info.isSymbolicLink()) return "a symlink";
  return "neither a file nor a folder";
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}
