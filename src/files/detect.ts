import { fileTypeFromBuffer } from "file-type";
import type { FileKind } from "./types.js";

// A file's type from its bytes (magic numbers through file-type; text by decoding), never from its name or from
// what the sender declared: both are the sender's word.

export interface DetectedType {
  mime: string;
  /** The usual extension, without the dot. */
  ext: string;
  kind: FileKind;
  /** A human word for the type, for messages ("a ZIP archive"). */
  label: string;
}

/** Image types the model reads as they are (the Messages API's four). */
export const MODEL_IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
/** Image types re-encoded to one of those on the way in (decodable by the bundled libvips). */
const CONVERTIBLE_IMAGES = new Set(["image/tiff", "image/avif", "image/heif", "image/heic"]);

const TEXT_TYPES: Record<string, { mime: string; label: string }> = {
  md: { mime: "text/markdown", label: "a Markdown file" },
  markdown: { mime: "text/markdown", label: "a Markdown file" },
  csv: { mime: "text/csv", label: "a CSV file" },
  tsv: { mime: "text/tab-separated-values", label: "a TSV file" },
  json: { mime: "application/json", label: "a JSON file" },
  html: { mime: "text/html", label: "an HTML file" },
  htm: { mime: "text/html", label: "an HTML file" },
  xml: { mime: "application/xml", label: "an XML file" },
  // Shown as text, never rendered: an SVG may carry scripts.
  svg: { mime: "image/svg+xml", label: "an SVG drawing (kept as text)" },
  yaml: { mime: "application/yaml", label: "a YAML file" },
  yml: { mime: "application/yaml", label: "a YAML file" },
};

const LABELS: Record<string, string> = {
  "application/zip": "a ZIP archive",
  "application/gzip": "a gzip archive",
  "application/x-7z-compressed": "a 7-Zip archive",
  "application/x-rar-compressed": "a RAR archive",
  "application/x-tar": "a tar archive",
  "application/pdf": "a PDF",
  "application/x-msdownload": "a Windows program",
  "application/x-elf": "a Linux program",
};

export async function detectType(bytes: Uint8Array, name: string): Promise<DetectedType> {
  const found = await fileTypeFromBuffer(bytes).catch(() => undefined);
  if (found) return classify(found.mime, found.ext);
  if (isText(bytes)) {
    const ext = /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1]?.toLowerCase() ?? "txt";
    const known = TEXT_TYPES[ext];
    return { mime: known?.mime ?? "text/plain", ext: known ? ext : ext === "txt" ? "txt" : ext, kind: "text", label: known?.label ?? "a text file" };
  }
  return { mime: "application/octet-stream", ext: "bin", kind: "other", label: "a binary file of unknown type" };
}

function classify(mime: string, ext: string): DetectedType {
  if ((MODEL_IMAGE_TYPES as readonly string[]).includes(mime) || CONVERTIBLE_IMAGES.has(mime))
    return { mime, ext, kind: "image", label: `an image (${ext.toUpperCase()})` };
  if (mime === "application/pdf") return { mime, ext, kind: "pdf", label: "a PDF" };
  // Telegram voice notes are Ogg/Opus; file-type names an Ogg without a video track audio/ogg or audio/opus.
  if (mime.startsWith("audio/")) return { mime, ext, kind: "audio", label: `audio (${ext.toUpperCase()})` };
  if (mime.startsWith("video/")) return { mime, ext, kind: "video", label: `a video (${ext.toUpperCase()})` };
  if (mime.startsWith("image/")) return { mime, ext, kind: "other", label: `an image in a format I can't open (${ext.toUpperCase()})` };
  return { mime, ext, kind: "other", label: LABELS[mime] ?? `a ${ext.toUpperCase()} file` };
}

/**
 * UTF-8 text (a BOM allowed) with no NUL byte and few control characters: what source code, CSV, Markdown and JSON
 * look like. Binary formats file-type does not know fail here.
 */
export function isText(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return false;
    if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) controls++;
  }
  return controls <= text.length / 100;
}

/** The family a declared MIME type names ("image/png" → "image"), to tell a sender that the bytes say otherwise. */
export function declaredKind(mime: string | null | undefined): FileKind | null {
  if (!mime) return null;
  const m = mime.toLowerCase().split(";")[0]!.trim();
  if (m === "application/pdf") return "pdf";
  if (m === "image/svg+xml") return "text";
  if (m.startsWith("image/")) return "image";
  if (m.startsWith("audio/")) return "audio";
  if (m.startsWith("video/")) return "video";
  if (m.startsWith("text/") || m === "application/json") return "text";
  return null;
}
