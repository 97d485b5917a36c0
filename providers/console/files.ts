import { open, mkdir, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { acceptFile } from "../../src/files/intake.js";
import { describeFile } from "../../src/files/intake.js";
import { quote, tooLargeReason, type FileLimits } from "../../src/files/limits.js";
import { sanitizeFilename } from "../../src/files/names.js";
import type { InboundFile, OutboundFile } from "../../src/files/types.js";

// Files in the terminal: paths on this machine (`"files": [...]` on a --jsonl line, `/attach <path>` in the chat),
// read with their size checked before and while reading (a file may grow meanwhile); and files agents send, saved
// under DATA_DIR/files/ with a sanitised name that never overwrites an earlier one.

/** Reads each path; one that cannot be read becomes a failure naming it, the others go on. */
export function readLocalFiles(paths: readonly string[], limits: Pick<FileLimits, "maxFileBytes">): Promise<InboundFile[]> {
  return Promise.all(paths.map((path) => readOne(path, limits)));
}

async function readOne(path: string, limits: Pick<FileLimits, "maxFileBytes">): Promise<InboundFile> {
  const name = sanitizeFilename(basename(path), "file");
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    return { ok: false, name, reason: `${quote(path)} could not be opened (${(error as NodeJS.ErrnoException).code ?? "error"}).` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, name, reason: `${quote(path)} is not a file.` };
    if (stat.size > limits.maxFileBytes) return { ok: false, name, reason: tooLargeReason(name, stat.size, limits.maxFileBytes, "MAX_FILE_BYTES") };
    // One byte past the limit tells a file that grew since stat from one that did not.
    const buffer = Buffer.alloc(limits.maxFileBytes + 1);
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, size, buffer.length - size, null);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > limits.maxFileBytes) return { ok: false, name, reason: tooLargeReason(name, null, limits.maxFileBytes, "MAX_FILE_BYTES") };
    }
    return await acceptFile({ name, bytes: buffer.subarray(0, size) }, limits);
  } finally {
    await handle.close();
  }
}

/** `/attach <path>` (quotes around the path allowed): the path, or null when the line is not an /attach. */
export function attachPath(line: string): string | null {
  const m = /^\/attach(?:\s+(.*))?$/.exec(line.trim());
  if (!m) return null;
  return (m[1] ?? "").trim().replace(/^(["'])(.*)\1$/, "$2");
}

/** Saves an agent's file under `dir` (created if missing) and returns where it went. */
export async function saveOutboundFile(dir: string, file: OutboundFile): Promise<string> {
  await mkdir(dir, { recursive: true });
  const name = sanitizeFilename(file.name, "file");
  const dot = name.lastIndexOf(".");
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  for (let n = 0; ; n++) {
    const path = resolve(join(dir, n === 0 ? name : `${stem}-${n}${ext}`));
    try {
      await writeFile(path, file.bytes, { flag: "wx" });
      return path;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || n >= 999) throw error;
    }
  }
}

/** The line the plain chat shows for a saved file. */
export function savedLine(file: OutboundFile, path: string): string {
  return `📎 ${describeFile(file)} saved to ${path}${file.caption ? ` — ${file.caption}` : ""}`;
}
