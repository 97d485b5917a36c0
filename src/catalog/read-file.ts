import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

// Definition files are read by the catalog at start and on every reload, synchronously. Whoever can write to
// skills/ can leave anything there: a FIFO (opening it for reading would wait for a writer forever), a link to a
// device or to nothing, a file without read permission, a file that grows while it is read. Each comes back as
// that file's problem, in words, and costs at most `maxBytes` of reading.

export type FileRead = { ok: true; bytes: Buffer } | { ok: false; problem: string };

/** The whole file, if it is a regular file of at most `maxBytes`. Links are followed (a SKILL.md may be one). */
export function readRegularFile(path: string, maxBytes: number, limitText: string): FileRead {
  let fd: number;
  try {
    // Non-blocking, so a FIFO opens at once (and is then refused) instead of waiting for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { ok: false, problem: openProblem(error) };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { ok: false, problem: "is not a regular file (a FIFO, device or socket); a definition must be a plain Markdown file" };
    const tooBig = (size: number) => ({ ok: false as const, problem: `the file is ${Math.ceil(size / 1024)} KB; the limit is ${limitText}` });
    if (info.size > maxBytes) return tooBig(info.size);
    // One byte more than the limit, in case it grew since fstat.
    const buffer = Buffer.alloc(maxBytes + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (read === 0) break;
      filled += read;
    }
    if (filled > maxBytes) return tooBig(filled);
    return { ok: true, bytes: buffer.subarray(0, filled) };
  } catch (error) {
    return { ok: false, problem: `cannot be read (${codeOf(error)}); fix its permissions or remove it` };
  } finally {
    closeSync(fd);
  }
}

function openProblem(error: unknown): string {
  const code = codeOf(error);
  if (code === "ENOENT") return "is a symlink to something that does not exist, or was removed while being read; fix or remove it";
  if (code === "ELOOP") return "is a symlink that leads in a circle; fix or remove it";
  return `cannot be read (${code}); fix its permissions or remove it`;
}

export function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? (error instanceof Error ? error.message : String(error));
}
