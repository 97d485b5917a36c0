import type { Sharp } from "sharp";

// Images pass through libvips (sharp) on the way in, re-encoded at their size so that no EXIF, GPS or other metadata
// is stored or sent on. The model reads them downscaled so that the long edge is at most 1568 px (about 1.15
// megapixels, what the model reads; larger images are only slower and dearer) and the block fits the API's 5 MB
// per image. Photos (everything stored as JPEG) are decoded once: the stored copy and the model's copy are both
// encoded from the same pixels, and the model's copy is kept for the runtime (model-copies.ts); other images, and
// a photo whose copy is gone, are decoded again on their way to the model. The header is read before anything is
// decoded, so a decompression bomb (a small file that claims 20000×20000 pixels) is refused without allocating it.

/** The most pixels (all frames together) an image may have to be opened at all. */
export const MAX_IMAGE_PIXELS = 100_000_000;
/** The long edge the model reads images at. */
export const MODEL_IMAGE_EDGE = 1568;
const MODEL_IMAGE_PIXELS = 1_150_000;
/** The Messages API refuses an image whose base64 data is over 5 MB. */
export const MODEL_IMAGE_BASE64_BYTES = 5 * 1024 * 1024;

/** An encoded image: its bytes, type and size in pixels. */
export interface EncodedImage {
  bytes: Buffer;
  mime: string;
  ext: string;
  width: number;
  height: number;
}

export type ImageResult = ({ ok: true } & EncodedImage) | { ok: false; problem: "too_many_pixels" | "unreadable"; detail: string };

/** The stored copy, and the model's copy when it was made from the same decoded pixels. */
export type SanitizedImage = Extract<ImageResult, { ok: false }> | ({ ok: true; forModel?: EncodedImage } & EncodedImage);

interface Header {
  width: number;
  height: number;
  pages: number;
  hasAlpha: boolean;
}

/** sharp, loaded on the first image rather than at every process start. */
async function libvips() {
  return (await import("sharp")).default;
}

async function header(bytes: Buffer): Promise<Header | { problem: "unreadable"; detail: string }> {
  try {
    // Reads the header only; the pixel limit is checked below, before any decoding.
    const sharp = await libvips();
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    if (!meta.width || !meta.height) return { problem: "unreadable", detail: "it has no size" };
    return { width: meta.width, height: meta.height, pages: meta.pages ?? 1, hasAlpha: meta.hasAlpha ?? false };
  } catch (error) {
    return { problem: "unreadable", detail: error instanceof Error ? error.message : String(error) };
  }
}

function bomb(h: Header): ImageResult | null {
  if (h.width * h.height * h.pages <= MAX_IMAGE_PIXELS) return null;
  const frames = h.pages > 1 ? ` in ${h.pages} frames` : "";
  return { ok: false, problem: "too_many_pixels", detail: `${h.width}×${h.height} pixels${frames}, more than the ${MAX_IMAGE_PIXELS / 1_000_000} megapixels I open` };
}

/** Re-encodes an image at its own size, in its own format where the model reads it (else PNG or JPEG), without metadata. */
export async function sanitizeImage(bytes: Buffer, mime: string): Promise<SanitizedImage> {
  const h = await header(bytes);
  if ("problem" in h) return { ok: false, ...h };
  const refused = bomb(h);
  if (refused) return refused;
  const animated = h.pages > 1 && (mime === "image/gif" || mime === "image/webp");
  const target = formatFor(mime, h.hasAlpha);
  const sharp = await libvips();
  try {
    if (!animated && target === "jpeg") return await photoBothWays(sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: "error" }));
    let image = sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, animated, failOn: "error" });
    // Turned upright by its EXIF orientation before that is dropped (frames of an animation carry none).
    if (!animated) image = image.rotate();
    const { data, info } = await encode(image, target).toBuffer({ resolveWithObject: true });
    return { ok: true, bytes: data, mime: `image/${target}`, ext: extension(target), width: info.width, height: animated ? h.height : info.height };
  } catch (error) {
    return { ok: false, problem: "unreadable", detail: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * A photo decoded once, upright, to its pixels (RGB or grey: JPEG has no alpha, flattened on white), then encoded
 * twice from them, side by side: at its size to be stored, and downscaled for the model.
 */
async function photoBothWays(opened: Sharp): Promise<SanitizedImage> {
  // 8 bits a channel, what JPEG stores (a 16-bit TIFF is converted here instead of by the encoder).
  const sharp = await libvips();
  const { data, info } = await opened.rotate().flatten({ background: "#ffffff" }).raw({ depth: "uchar" }).toBuffer({ resolveWithObject: true });
  const pixels = () => sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
  const size = modelSize(info.width, info.height);
  const [stored, forModel] = await Promise.all([
    encode(pixels(), "jpeg").toBuffer(),
    fitForModel((w, h) => pixels().resize({ width: w, height: h, fit: "fill" }), size, "jpeg"),
  ]);
  const copy = forModel.ok ? { forModel: { bytes: forModel.bytes, mime: forModel.mime, ext: forModel.ext, width: forModel.width, height: forModel.height } } : {};
  return { ok: true, bytes: stored, mime: "image/jpeg", ext: "jpg", width: info.width, height: info.height, ...copy };
}

/** The image as the model gets it: downscaled, first frame only, within the API's size for one image. */
export async function imageForModel(bytes: Buffer, mime: string): Promise<ImageResult> {
  const h = await header(bytes);
  if ("problem" in h) return { ok: false, ...h };
  const refused = bomb(h);
  if (refused) return refused;
  const sharp = await libvips();
  try {
    const open = (width: number, height: number) => sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: "error" }).rotate().resize({ width, height, fit: "fill" });
    return await fitForModel(open, modelSize(h.width, h.height), formatFor(mime, h.hasAlpha));
  } catch (error) {
    return { ok: false, problem: "unreadable", detail: error instanceof Error ? error.message : String(error) };
  }
}

/** The size the model reads an image of `width` × `height` at: long edge and pixels within its limits, never larger. */
function modelSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(1, MODEL_IMAGE_EDGE / Math.max(width, height), Math.sqrt(MODEL_IMAGE_PIXELS / (width * height)));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** Encodes `open(width, height)` until its base64 fits one image block: a lossy format, then lower quality, then fewer pixels. */
async function fitForModel(open: (width: number, height: number) => Sharp, size: { width: number; height: number }, first: Target): Promise<ImageResult> {
  let { width, height } = size;
  let target = first;
  let quality = 85;
  for (let attempt = 0; attempt < 6; attempt++) {
    const data = await encode(open(width, height), target, quality).toBuffer();
    if (Math.ceil(data.length / 3) * 4 <= MODEL_IMAGE_BASE64_BYTES) return { ok: true, bytes: data, mime: `image/${target}`, ext: extension(target), width, height };
    if (target === "png" || target === "gif") target = "jpeg";
    else if (quality > 60) quality -= 15;
    else {
      width = Math.max(1, Math.round(width * 0.75));
      height = Math.max(1, Math.round(height * 0.75));
    }
  }
  return { ok: false, problem: "unreadable", detail: "it does not compress below the model's 5 MB limit" };
}

const extension = (target: Target) => (target === "jpeg" ? "jpg" : target);

type Target = "jpeg" | "png" | "webp" | "gif";

function formatFor(mime: string, hasAlpha: boolean): Target {
  if (mime === "image/jpeg") return "jpeg";
  if (mime === "image/png") return "png";
  if (mime === "image/webp") return "webp";
  if (mime === "image/gif") return "gif";
  // TIFF, AVIF, HEIF: photos, mostly.
  return hasAlpha ? "png" : "jpeg";
}

function encode(image: Sharp, target: Target, quality = 90): Sharp {
  switch (target) {
    case "jpeg":
      // JPEG has no alpha: flattened on white rather than black.
      return image.flatten({ background: "#ffffff" }).jpeg({ quality });
    case "png":
      return image.png();
    case "webp":
      return image.webp({ quality });
    case "gif":
      return image.gif();
    default: {
      const unknown: never = target;
      throw new Error(`unknown image format ${String(unknown)}`);
    }
  }
}
