import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { modelBlocks } from "../../src/files/blocks.js";
import { acceptFile } from "../../src/files/intake.js";
import type { ReceivedFile } from "../../src/files/types.js";
import { jpegWithGps } from "../helpers/files.js";

// A photo is decoded once: the intake encodes the stored copy and the model's copy from the same pixels, and the
// runtime shows the model that copy instead of decoding the stored bytes again (src/files/model-copies.ts).

async function accepted(name: string, bytes: Buffer): Promise<ReceivedFile> {
  const file = await acceptFile({ name, bytes, declaredMime: "image/jpeg" }, { maxFileBytes: 20 * 1024 * 1024 });
  if (!file.ok) throw new Error(`refused: ${file.reason}`);
  return file;
}

async function imageOf(blocks: Awaited<ReturnType<typeof modelBlocks>>) {
  const block = blocks[1];
  if (block?.type !== "image") throw new Error(`no image block: ${JSON.stringify(blocks)}`);
  const bytes = Buffer.from(block.source.data, "base64");
  return { bytes, type: block.source.media_type, meta: await sharp(bytes).metadata() };
}

/** A photo whose EXIF says "turn me 90° clockwise" (a phone held upright): 3000 wide, 2000 high as encoded. */
function rotatedPhoto(): Promise<Buffer> {
  return sharp({ create: { width: 3000, height: 2000, channels: 3, background: { r: 90, g: 10, b: 10 } } })
    .jpeg({ quality: 80 })
    .withExif({ IFD0: { Make: "PhoneMaker" }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 2400/100" } })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

describe("a photo on its way to the model", () => {
  it("is shown from the copy the intake made, without decoding the stored bytes again, and only once", async () => {
    const file = await accepted("IMG_0002.jpg", await jpegWithGps());
    // No bytes to decode: only the intake's copy can make this block.
    const image = await imageOf(await modelBlocks({ ...file, bytes: Buffer.alloc(0) }));
    expect(image.type).toBe("image/jpeg");
    expect([image.meta.width, image.meta.height]).toEqual([1313, 876]);
    expect(image.meta.exif).toBeUndefined();
    expect(image.bytes.includes(Buffer.from("PhoneMaker"))).toBe(false);
    expect(image.bytes.length).toBeLessThan((5 * 1024 * 1024 * 3) / 4);

    // Taken: the next call decodes what it is given, here nothing, and says the image could not be prepared.
    const again = await modelBlocks({ ...file, bytes: Buffer.alloc(0) });
    expect(again).toEqual([{ type: "text", text: expect.stringContaining("the image could not be prepared for you") }]);
    // With the stored bytes it makes the same picture by decoding them.
    const decoded = await imageOf(await modelBlocks(file));
    expect([decoded.meta.width, decoded.meta.height]).toEqual([1313, 876]);
  });

  it("turns a photo upright by its EXIF orientation in both copies, and keeps no EXIF in either", async () => {
    const photo = await rotatedPhoto();
    expect((await sharp(photo).metadata()).orientation).toBe(6);
    const file = await accepted("upright.jpg", photo);
    const stored = await sharp(file.bytes).metadata();
    expect({ width: stored.width, height: stored.height, exif: stored.exif, orientation: stored.orientation }).toEqual({ width: 2000, height: 3000 });
    const image = await imageOf(await modelBlocks({ ...file, bytes: Buffer.alloc(0) }));
    expect(image.meta.height).toBeGreaterThan(image.meta.width!);
    expect(Math.max(image.meta.width!, image.meta.height!)).toBeLessThanOrEqual(1568);
    expect({ exif: image.meta.exif, orientation: image.meta.orientation }).toEqual({});
  });

  it("stores a 16-bit TIFF as an 8-bit JPEG and shows the model its copy", async () => {
    const tiff = await sharp({ create: { width: 2000, height: 1500, channels: 3, background: { r: 10, g: 200, b: 90 } } })
      .toColourspace("rgb16")
      .tiff({ compression: "lzw" })
      .toBuffer();
    expect((await sharp(tiff).metadata()).depth).toBe("ushort");
    const file = await acceptFile({ name: "scan.tiff", bytes: tiff }, { maxFileBytes: 20 * 1024 * 1024 });
    if (!file.ok) throw new Error(`refused: ${file.reason}`);
    expect([file.name, file.mime]).toEqual(["scan.jpg", "image/jpeg"]);
    expect(await sharp(file.bytes).metadata()).toMatchObject({ width: 2000, height: 1500, depth: "uchar" });
    const image = await imageOf(await modelBlocks({ ...file, bytes: Buffer.alloc(0) }));
    expect([image.type, image.meta.width, image.meta.height]).toEqual(["image/jpeg", 1238, 929]);
  });

  it("refuses a photo cut off in the middle with a sentence naming it, and keeps no copy of it", async () => {
    const whole = await jpegWithGps(800, 600);
    const cut = whole.subarray(0, Math.floor(whole.length * 0.6));
    const file = await acceptFile({ name: "cut.jpg", bytes: cut }, { maxFileBytes: 20 * 1024 * 1024 });
    expect(file).toEqual({ ok: false, name: "cut.jpg", reason: expect.stringMatching(/^"cut\.jpg" looks like an image but could not be read \(.+\)\.$/) });
  });
});
