// Opening, reading and writing one located file. Every open goes through the folder already opened by `locate`
// and refuses a symlink in the last place (O_NOFOLLOW) and a FIFO or device (O_NONBLOCK, then a regular-file
// check on what was opened), so a file swapped after it was looked up is not followed either.
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import type { SandboxUser } from "../../../sandbox/types.js";
import { inFolder, type Located } from "./paths.js";

export type Opened = { ok: true; handle: FileHandle; info: Stats } | { ok: false; missing: boolean; reason: string };

const READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const WRITE = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function kindOf(info: Stats): string {
  if (info.isDirectory()) return "a folder";
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  return "not a regular file";
}

async function openAt(at: Located, flags: number, mode?: number): Promise<Opened> {
  if (at.name === null) return { ok: false, missing: false, reason: `${at.path} is a folder, not a file` };
  let handle: FileHandle;
  try {
    handle = await open(inFolder(at.folder, at.name), flags, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ok: false, missing: true, reason: `${at.path} does not exist` };
    if (code === "EISDIR") return { ok: false, missing: false, reason: `${at.path} is a folder, not a file` };
    if (code === "ELOOP") return { ok: false, missing: false, reason: `${at.path} changed while it was being opened; try again` };
    if (code === "ENXIO") return { ok: false, missing: false, reason: `${at.path} is a FIFO or socket, not a regular file` };
    return { ok: false, missing: false, reason: `${at.path} cannot be opened (${code ?? String(error)})` };
  }
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    return { ok: false, missing: false, reason: `${at.path} is ${kindOf(info)}; only regular files can be used here` };
  }
  return { ok: true, handle, info };
}

export const openForReading = (at: Located) => openAt(at, READ);

/** Reads a whole file as UTF-8; refuses binary files and files over `maxBytes`. */
export async function readWhole(handle: FileHandle, info: Stats, path: string, maxBytes: number): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  if (info.size > maxBytes) return { ok: false, reason: `${path} is too large to change with this tool (${info.size} bytes; at most ${maxBytes})` };
  const bytes = await handle.readFile();
  if (bytes.length > maxBytes) return { ok: false, reason: `${path} is too large to change with this tool (at most ${maxBytes} bytes)` };
  if (bytes.includes(0)) return { ok: false, reason: `${path} is a binary file, not text` };
  return { ok: true, text: bytes.toString("utf8") };
}

export interface LineWindow {
  /** [line number, text] of the lines in the window. */
  lines: Array<[number, string]>;
  /** Lines in the file when it was read to the end; null when reading stopped after the window. */
  total: number | null;
  binary: boolean;
  empty: boolean;
}

/** Lines `first` … `first + count - 1` (1-based) of a text file, read only as far as needed. */
export async function readLines(handle: FileHandle, first: number, count: number): Promise<LineWindow> {
  const window: LineWindow = { lines: [], total: null, binary: false, empty: false };
  const decoder = new StringDecoder("utf8");
  const chunk = Buffer.alloc(64 * 1024);
  let position = 0;
  let partial = "";
  let number = 0;
  const take = (line: string) => {
    number++;
    if (number >= first && number < first + count) window.lines.push([number, line.endsWith("\r") ? line.slice(0, -1) : line]);
  };
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    const bytes = chunk.subarray(0, bytesRead);
    if (position === 0 && bytes.subarray(0, 8192).includes(0)) {
      window.binary = true;
      return window;
    }
    position += bytesRead;
    const pieces = (partial + decoder.write(bytes)).split("\n");
    partial = pieces.pop()!;
    for (const piece of pieces) take(piece);
    if (number >= first + count) return window; // past the window: the rest is not needed
  }
  partial += decoder.end();
  if (partial !== "") take(partial);
  window.total = number;
  window.empty = position === 0;
  return window;
}

/**
 * Writes `content` as the whole file (created when missing, owned by `owner` when given). The file is opened
 * before it is emptied, so a FIFO or device put in its place is refused instead of written to.
 */
export async function writeWhole(at: Located, content: string, owner: SandboxUser | null): Promise<{ ok: true } | { ok: false; reason: string }> {
  const opened = await openAt(at, WRITE, 0o644);
  if (!opened.ok) return { ok: false, reason: opened.reason };
  const { handle } = opened;
  try {
    await handle.truncate(0);
    await handle.writeFile(content, "utf8");
    if (owner) await handle.chown(owner.uid, owner.gid);
    return { ok: true };
  } finally {
    await handle.close();
  }
}
