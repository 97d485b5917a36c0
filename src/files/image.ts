import type { Sharp } from "sharp";

// Images pass through libvips (sharp) twice: once on the way in, re-encoded at their size so that no EXIF, GPS or
// other metadata is stored or sent on; once on the way to the model, downscaled so that the long edge is at most
// 1568 px (about 1.15 megapixels, what the model reads; larger images are only slower and dearer) and the block fits
// the API's 5 MB per image. The header is read before anything is decoded, so a decompression bomb (a small file
// that claims 20000×20000 pixels) is refused without allocating it.

/** The most pixels (all frames together) an image may have to be opened at all. */
export const MAX_IMAGE_PIXELS = 100_000_000;
/** The long edge the model reads images at. */
export const MODEL_IMAGE_EDGE = 1568;
const MODEL_IMAGE_PIXELS = 1_150_000;
/** The Messages API refuses an image whose base64 data is over 5 MB. */
export const MODEL_IMAGE_BASE64_BYTES = 5 * 1024 * 1024;

export type ImageResult =
  | { ok: true; bytes: Buffer; mime: string; ext: string; width: number; height: number }
  | { ok: false; problem: "too_many_pixels" | "unreadable"; detail: string };

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
export async function sanitizeImage(bytes: Buffer, mime: string): Promise<ImageResult> {
  const h = await header(bytes);
  if ("problem" in h) return { ok: false, ...h };
  const refused = bomb(h);
  if (refused) return refused;
  const animated = h.pages > 1 && (mime === "image/gif" || mime === "image/webp");
  const sharp = await libvips();
  try {
    let image = sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, animated, failOn: "error" });
    // Turned upright by its EXIF orientation before that is dropped (frames of an animation carry none).
    if (!animated) image = image.rotate();
    const target = formatFor(mime, h.hasAlpha);
    const { data, info } = await encode(image, target).toBuffer({ resolveWithObject: true });
    return { ok: true, bytes: data, mime: `image/${target}`, ext: target === "jpeg" ? "jpg" : target, width: info.width, height: animated ? h.height : info.height };
  } catch (error) {
    return { ok: false, problem: "unreadable", detail: error instanceof Error ? error.message : String(error) };
  }
}

/** The image as the model gets it: downscaled, first frame only, within the API's size for one image. */
export async function imageForModel(bytes: Buffer, mime: string): Promise<ImageResult> {
  const h = await header(bytes);
  if ("problem" in h) return { ok: false, ...h };
  const refused = bomb(h);
  if (refused) return refused;
  const scale = Math.min(1, MODEL_IMAGE_EDGE / Math.max(h.width, h.height), Math.sqrt(MODEL_IMAGE_PIXELS / (h.width * h.height)));
  let width = Math.max(1, Math.round(h.width * scale));
  let height = Math.max(1, Math.round(h.height * scale));
  let target = formatFor(mime, h.hasAlpha);
  let quality = 85;
  const sharp = await libvips();
  try {
    for (let attempt = 0; attempt < 6; attempt++) {
      const image = sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: "error" }).rotate().resize({ width, height, fit: "fill" });
      const data = await encode(image, target, quality).toBuffer();
      if (Math.ceil(data.length / 3) * 4 <= MODEL_IMAGE_BASE64_BYTES) {
        return { ok: true, bytes: data, mime: `image/${target}`, ext: target === "jpeg" ? "jpg" : target, width, height };
      }
      // Too large for one block: a lossy format, then lower quality, then fewer pixels.
      if (target === "png" || target === "gif") target = "jpeg";
      else if (quality > 60) quality -= 15;
      else {
        width = Math.max(1, Math.round(width * 0.75));
        height = Math.max(1, Math.round(height * 0.75));
      }
    }
    return { ok: false, problem: "unreadable", detail: "it does not compress below the model's 5 MB limit" };
  } catch (error) {
    return { ok: false, problem: "unreadable", detail: error instanceof Error ? error.message : String(error) };
  }
}

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
