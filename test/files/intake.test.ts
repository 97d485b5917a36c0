import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { modelBlocks } from "../../src/files/blocks.js";
import { acceptFile } from "../../src/files/intake.js";
import { contentId, isPublicFileId, publicFileId } from "../../src/files/ids.js";
import { contentDisposition, sanitizeFilename } from "../../src/files/names.js";
import type { ReceivedFile } from "../../src/files/types.js";
import { estimateTokens, IMAGE_TOKENS, PDF_PAGE_TOKENS } from "../../src/llm/tokens.js";
import { encryptedPdf, jpegWithGps, pdf, png, pngBombHeader, zipBomb } from "../helpers/files.js";

const limits = { maxFileBytes: 20 * 1024 * 1024 };

async function accepted(name: string, bytes: Buffer, declaredMime?: string): Promise<ReceivedFile> {
  const file = await acceptFile({ name, bytes, ...(declaredMime ? { declaredMime } : {}) }, limits);
  if (!file.ok) throw new Error(`refused: ${file.reason}`);
  return file;
}

describe("a file on its way in", () => {
  it("re-encodes a photo, dropping its EXIF and GPS metadata, and keeps its size in pixels", async () => {
    const photo = await jpegWithGps();
    expect((await sharp(photo).metadata()).exif).toBeDefined();
    const file = await accepted("IMG_0001.jpg", photo);
    expect(file).toMatchObject({ kind: "image", mime: "image/jpeg", name: "IMG_0001.jpg" });
    const meta = await sharp(file.bytes).metadata();
    expect(meta.exif).toBeUndefined();
    expect(file.bytes.includes(Buffer.from("PhoneMaker"))).toBe(false);
    expect([meta.width, meta.height]).toEqual([2400, 1600]);
    expect(file.sha256).toBe(contentId(file.bytes));
  });

  it("refuses a decompression bomb (a PNG claiming 20000×20000 pixels) from its header, without decoding it", async () => {
    const file = await acceptFile({ name: "huge.png", bytes: pngBombHeader(20_000, 20_000) }, limits);
    expect(file).toEqual({ ok: false, name: "huge.png", reason: '"huge.png" is 20000×20000 pixels, more than the 100 megapixels I open; send a smaller image.' });
  });

  it("keeps a zip bomb named .png as a file it never opens, and says it is not an image", async () => {
    const file = await accepted("cat.png", zipBomb(), "image/png");
    expect(file).toMatchObject({ kind: "other", mime: "application/zip" });
    expect(file.note).toBe('"cat.png" was sent as an image but it is a ZIP archive; I kept it as a file.');
  });

  it("reads a PDF's pages, refuses a password-protected one and keeps one past the model's 100 pages as a plain file", async () => {
    expect(await accepted("contract.pdf", await pdf(3))).toMatchObject({ kind: "pdf", pages: 3 });
    const locked = await acceptFile({ name: "locked.pdf", bytes: await encryptedPdf() }, limits);
    expect(locked).toMatchObject({ ok: false, reason: '"locked.pdf" is password-protected; send a copy without the password.' });
    const long = await accepted("book.pdf", await pdf(101));
    expect(long).toMatchObject({ kind: "other", mime: "application/pdf" });
    expect(long.note).toBe('"book.pdf" is kept but I can\'t read it: it has 101 pages and the model reads at most 100.');
  });

  it("goes by the bytes when a 'PDF' is really an HTML page, and says so", async () => {
    const file = await accepted("invoice.pdf", Buffer.from("<!doctype html><html><body>Sign in</body></html>"), "application/pdf");
    expect(file).toMatchObject({ kind: "text", mime: "text/plain" });
    expect(file.note).toBe('"invoice.pdf" was sent as a PDF but it is a text file.');
  });

  it("drops any path from a file name, and the characters a name must not carry", async () => {
    expect(sanitizeFilename("../../etc/passwd")).toBe("passwd");
    expect(sanitizeFilename("C:\\Users\\me\\report.pdf")).toBe("report.pdf");
    expect(sanitizeFilename("..")).toBe("file");
    expect(sanitizeFilename("evil\u202Efdp.exe")).toBe("evilfdp.exe");
    expect(sanitizeFilename(`${"a".repeat(300)}.csv`)).toMatch(/^a{124}\.csv$/);
    expect(sanitizeFilename("CON.txt")).toBe("_CON.txt");
    const file = await accepted("../../../root/.ssh/notes.txt", Buffer.from("hello\n"));
    expect(file.name).toBe("notes.txt");
    expect(contentDisposition("attachment", 'r"é.txt')).toBe(`attachment; filename="r__.txt"; filename*=UTF-8''r%22%C3%A9.txt`);
  });

  it("names a file past MAX_FILE_BYTES and the limit, and an empty file", async () => {
    const big = await acceptFile({ name: "big.bin", bytes: Buffer.alloc(1025) }, { maxFileBytes: 1024 });
    expect(big).toMatchObject({ ok: false, reason: '"big.bin" is 1 KB; files can be at most 1 KB (MAX_FILE_BYTES). Send a smaller file or a link to it.' });
    expect(await acceptFile({ name: "e.txt", bytes: Buffer.alloc(0) }, limits)).toMatchObject({ ok: false, reason: '"e.txt" is empty.' });
  });

  it("makes download ids that are unguessable and unrelated to the content", () => {
    const a = publicFileId();
    const b = publicFileId();
    expect(a).not.toBe(b);
    expect(isPublicFileId(a)).toBe(true);
    expect(isPublicFileId("file_../../x")).toBe(false);
  });
});

describe("a file on its way to the model", () => {
  it("downscales an image so its long edge is at most 1568 px and its base64 under 5 MB", async () => {
    const file = await accepted("wide.png", await png(4000, 1000));
    const blocks = await modelBlocks(file);
    expect(blocks[0]).toEqual({ type: "text", text: expect.stringContaining("wide.png (image/png") });
    const image = blocks[1]!;
    if (image.type !== "image") throw new Error("no image block");
    const meta = await sharp(Buffer.from(image.source.data, "base64")).metadata();
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(1568);
    expect(image.source.data.length).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(image.source.media_type).toBe("image/png");
    expect(estimateTokens([{ role: "user", content: blocks }])).toBeLessThan(IMAGE_TOKENS + 100);
  });

  it("sends a PDF as a document block titled with its name, counted by its pages", async () => {
    const blocks = await modelBlocks(await accepted("contract.pdf", await pdf(4)));
    expect(blocks[1]).toMatchObject({ type: "document", title: "contract.pdf", source: { type: "base64", media_type: "application/pdf" } });
    expect(estimateTokens(blocks)).toBeGreaterThanOrEqual(4 * PDF_PAGE_TOKENS);
  });

  it("sends text files as text documents and names the rest by name, type and size", async () => {
    const csv = await modelBlocks(await accepted("sales.csv", Buffer.from("month,total\njan,3\n")));
    expect(csv[1]).toEqual({ type: "document", source: { type: "text", media_type: "text/plain", data: "month,total\njan,3\n" }, title: "sales.csv" });
    const zip = await modelBlocks(await accepted("a.zip", zipBomb(1024)));
    expect(zip).toEqual([{ type: "text", text: expect.stringMatching(/^\[Attached file: a\.zip \(application\/zip, \d+ bytes\); its contents are not shown to you/) }]);
  });
});
