// Image and document blocks, checked as the real Messages API checks them. The wording is the API's own, as quoted
// in public bug reports of its 400 answers (anthropics/claude-code issues #19631 "image exceeds 5 MB maximum",
// #4778 and #24630 on dimensions, #8184 on media types, #15746 "Image does not match the provided media type",
// #12750 "image cannot be empty", #23392 "too many images and documents", #6231 "A maximum of 100 PDF pages may be
// provided."); the limits are those of the vision and PDF support pages (5 MB per image, 8000 px a side, 2000 px
// when a request has more than 20 images, 100 images and documents per request, 100 PDF pages).

type Obj = Record<string, unknown>;
type Block = Obj & { type: string };
type Msg = { role: unknown; content: unknown };

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
export const MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024;
export const MAX_MEDIA_PER_REQUEST = 100;
export const MAX_PDF_PAGES = 100;

/** Every image and document block of the request (top level and inside tool results), with its path. */
function mediaBlocks(msgs: Msg[]): Array<{ block: Block; at: string; role: unknown }> {
  const found: Array<{ block: Block; at: string; role: unknown }> = [];
  for (const [n, m] of msgs.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [i, b] of (m.content as Block[]).entries()) {
      if (b.type === "image" || b.type === "document") found.push({ block: b, at: `messages.${n}.content.${i}`, role: m.role });
      if (b.type === "tool_result" && Array.isArray(b.content)) {
        for (const [k, c] of (b.content as Block[]).entries()) {
          if (isObj(c) && (c.type === "image" || c.type === "document"))
            found.push({ block: c, at: `messages.${n}.content.${i}.tool_result.content.${k}`, role: m.role });
        }
      }
    }
  }
  return found;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function checkMedia(msgs: Msg[]): string | null {
  const media = mediaBlocks(msgs);
  const images = media.filter((m) => m.block.type === "image").length;
  const documents = media.length - images;
  if (media.length > MAX_MEDIA_PER_REQUEST) return `too many images and documents: ${images} + ${documents} > ${MAX_MEDIA_PER_REQUEST}`;
  let pdfPages = 0;
  for (const { block, at, role } of media) {
    if (role !== "user") return `${at}: ${block.type} blocks can only be in user messages`;
    const error = block.type === "image" ? checkImage(block, at, images > 20) : checkDocument(block, at, (pages) => (pdfPages += pages));
    if (error) return error;
    if (pdfPages > MAX_PDF_PAGES) return `${at}.pdf.source.base64.data: A maximum of ${MAX_PDF_PAGES} PDF pages may be provided.`;
  }
  return null;
}

function extra(block: Obj, allowed: string[], at: string): string | null {
  const unknown = Object.keys(block).find((k) => !allowed.includes(k));
  return unknown ? `${at}.${unknown}: Extra inputs are not permitted` : null;
}

function checkImage(block: Block, at: string, many: boolean): string | null {
  const bad = extra(block, ["type", "source", "cache_control"], at);
  if (bad) return bad;
  const source = block.source;
  if (!isObj(source)) return `${at}.image.source: Field required`;
  if (source.type !== "base64") return source.type === "url" || source.type === "file" ? null : `${at}.image.source.type: Input should be 'base64', 'url' or 'file'`;
  const where = `${at}.image.source.base64`;
  if (!IMAGE_TYPES.includes(source.media_type as string)) return `${where}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
  if (typeof source.data !== "string") return `${where}.data: Field required`;
  if (source.data === "") return `${where}: image cannot be empty`;
  if (source.data.length % 4 !== 0 || !BASE64.test(source.data)) return `${where}.data: Invalid base64 data`;
  if (source.data.length > MAX_IMAGE_BASE64_BYTES) return `${where}: image exceeds 5 MB maximum: ${source.data.length} bytes > ${MAX_IMAGE_BASE64_BYTES} bytes`;
  const bytes = Buffer.from(source.data, "base64");
  const size = imageSize(bytes);
  if (!size || size.type !== source.media_type) return `${where}.data: Image does not match the provided media type ${source.media_type as string}`;
  if (many && (size.width > 2000 || size.height > 2000))
    return `${where}.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels`;
  if (size.width > 8000 || size.height > 8000) return `${where}.data: At least one of the image dimensions exceed max allowed size: 8000 pixels`;
  return null;
}

function checkDocument(block: Block, at: string, countPages: (pages: number) => void): string | null {
  const bad = extra(block, ["type", "source", "title", "context", "citations", "cache_control"], at);
  if (bad) return bad;
  if (block.title !== undefined && block.title !== null && (typeof block.title !== "string" || block.title.length > 500))
    return `${at}.title: String should have at most 500 characters`;
  const source = block.source;
  if (!isObj(source)) return `${at}.document.source: Field required`;
  if (source.type === "text") {
    if (source.media_type !== "text/plain") return `${at}.document.source.text.media_type: Input should be 'text/plain'`;
    if (typeof source.data !== "string") return `${at}.document.source.text.data: Field required`;
    return null;
  }
  if (source.type !== "base64")
    return ["url", "file", "content"].includes(source.type as string) ? null : `${at}.document.source.type: Input should be 'base64', 'text', 'content', 'url' or 'file'`;
  if (source.media_type !== "application/pdf") return `${at}.document.source.base64.media_type: Input should be 'application/pdf'`;
  if (typeof source.data !== "string" || source.data === "") return `${at}.pdf.source.base64.data: PDF cannot be empty`;
  if (source.data.length % 4 !== 0 || !BASE64.test(source.data)) return `${at}.pdf.source.base64.data: Invalid base64 data`;
  const pdf = Buffer.from(source.data, "base64");
  if (!pdf.subarray(0, 1024).toString("latin1").includes("%PDF-")) return `${at}.pdf.source.base64.data: The PDF specified was not valid.`;
  if (/\/Encrypt\b/.test(pdf.toString("latin1"))) return `${at}.pdf.source.base64.data: The PDF specified is password protected.`;
  countPages(pdfPages(pdf));
  return null;
}

/** Page objects of a PDF (the fake's PDFs write them plainly), else the page tree's /Count. */
function pdfPages(pdf: Buffer): number {
  const text = pdf.toString("latin1");
  const pages = text.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  if (pages > 0) return pages;
  return Math.max(0, ...[...text.matchAll(/\/Count\s+(\d+)/g)].map((m) => Number(m[1])));
}

/** Width, height and type from an image's header: PNG, GIF, JPEG (its SOF marker) and WebP. */
export function imageSize(b: Buffer): { type: string; width: number; height: number } | null {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) return { type: "image/png", width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString("latin1", 0, 4) === "GIF8") return { type: "image/gif", width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") {
    const kind = b.toString("latin1", 12, 16);
    if (kind === "VP8X") return { type: "image/webp", width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
    if (kind === "VP8L") {
      const bits = b.readUInt32LE(21);
      return { type: "image/webp", width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
    }
    if (kind === "VP8 ") return { type: "image/webp", width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    return null;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return null;
      const marker = b[i + 1]!;
      const length = b.readUInt16BE(i + 2);
      // SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC).
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
        return { type: "image/jpeg", height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      i += 2 + length;
    }
  }
  return null;
}
