import { declaredKind, detectType } from "./detect.js";
import { contentId } from "./ids.js";
import { sanitizeImage } from "./image.js";
import { keepModelCopy } from "./model-copies.js";
import { formatBytes, quote, tooLargeReason, type FileLimits } from "./limits.js";
import { sanitizeFilename, withExtension } from "./names.js";
import { inspectPdf } from "./pdf.js";
import type { FileKind, InboundFile } from "./types.js";

// Every door (Telegram, Slack, the HTTP API, the web chat, the terminal) turns the bytes it read into an
// InboundFile here, so that every surface judges a file the same way: size, then type from the bytes, then the
// type's own checks (pixels, pages), images re-encoded.

export interface RawFile {
  /** As the sender named it (sanitised here). */
  name: string | null | undefined;
  bytes: Buffer;
  /** What the sender or the platform said the type is: only compared with the bytes, never trusted. */
  declaredMime?: string | null;
  voice?: boolean;
}

const KIND_WORD: Record<FileKind, string> = { image: "an image", pdf: "a PDF", text: "a text file", audio: "audio", video: "a video", other: "a file" };

export async function acceptFile(raw: RawFile, limits: Pick<FileLimits, "maxFileBytes">): Promise<InboundFile> {
  const given = sanitizeFilename(raw.name, raw.voice ? "voice-note" : "file");
  if (raw.bytes.length > limits.maxFileBytes) return { ok: false, name: given, reason: tooLargeReason(given, raw.bytes.length, limits.maxFileBytes, "MAX_FILE_BYTES") };
  if (raw.bytes.length === 0) return { ok: false, name: given, reason: `${quote(given)} is empty.` };
  const type = await detectType(raw.bytes, given);
  const name = withExtension(given, type.ext);
  const declared = declaredKind(raw.declaredMime);
  // The sender said one thing and the bytes say another: the bytes win, and the user hears why.
  const mismatch = declared && declared !== type.kind ? `${quote(name)} was sent as ${KIND_WORD[declared]} but it is ${type.label}` : undefined;
  const base = { ok: true as const, name, mime: type.mime, kind: type.kind, ...(raw.voice ? { voice: true } : {}) };

  if (type.kind === "image") {
    const image = await sanitizeImage(raw.bytes, type.mime);
    if (!image.ok) {
      const reason =
        image.problem === "too_many_pixels"
          ? `${quote(name)} is ${image.detail}; send a smaller image.`
          : `${quote(name)} looks like an image but could not be read (${image.detail}).`;
      return { ok: false, name, reason };
    }
    // Re-encoding can make a file larger (a tiny JPEG of a huge PNG the other way round): the limit holds for what is stored.
    if (image.bytes.length > limits.maxFileBytes) return { ok: false, name, reason: tooLargeReason(name, image.bytes.length, limits.maxFileBytes, "MAX_FILE_BYTES") };
    const stored = withExtension(name.replace(/\.[A-Za-z0-9]{1,8}$/, ""), image.ext);
    const file = finish({ ...base, name: type.mime === image.mime ? name : stored, mime: image.mime, bytes: image.bytes }, mismatch);
    if (file.ok && image.forModel) keepModelCopy(file.sha256, image.forModel);
    return file;
  }
  if (type.kind === "pdf") {
    const pdf = await inspectPdf(raw.bytes);
    if (!pdf.ok && pdf.problem === "encrypted") return { ok: false, name, reason: `${quote(name)} is password-protected; send a copy without the password.` };
    if (!pdf.ok && pdf.problem === "unreadable") return { ok: false, name, reason: `${quote(name)} looks like a PDF but could not be read (${pdf.detail}).` };
    // Too long or too large for the model: kept as a file, and the agent told what it is (a note tells the user).
    if (!pdf.ok) return finish({ ...base, kind: "other", bytes: raw.bytes }, `${quote(name)} is kept but I can't read it: ${pdf.detail}`);
    return finish({ ...base, bytes: raw.bytes, pages: pdf.pages }, mismatch);
  }
  return finish({ ...base, bytes: raw.bytes }, type.kind === "other" && declared ? `${mismatch ?? `${quote(name)} is ${type.label}`}; I kept it as a file` : mismatch);
}

function finish(file: { ok: true; name: string; mime: string; kind: FileKind; bytes: Buffer; voice?: boolean; pages?: number }, note: string | undefined): InboundFile {
  return { ...file, size: file.bytes.length, sha256: contentId(file.bytes), ...(note ? { note: `${note}.`.replace(/\.\.$/, ".") } : {}) };
}

/** One line per file for the agent (and the logs at debug): name, type and size, never the contents. */
export function describeFile(file: { name: string; mime: string; size: number }): string {
  return `${file.name} (${file.mime}, ${formatBytes(file.size)})`;
}
