// Files through the HTTP API: `{content_type, content, filename?}` items and multipart/form-data uploads on POST
// /v1/messages, and GET /v1/files/{id}. The real HttpProvider, gateway and runtime; what reaches the gateway is read
// from gateway.submit, what a client sees from the responses.
import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import { publicFileId } from "../../../src/files/ids.js";
import type { FileLimits } from "../../../src/files/limits.js";
import type { ReceivedFile, StoredFileView } from "../../../src/files/types.js";
import type { InboundMessage } from "../../../src/gateway/types.js";
import type { HttpProvider } from "../../../providers/http/server.js";
import { text } from "../../fakes/anthropic/server.js";
import { jpegWithGps, pdf, pngBombHeader, zipBomb } from "../../helpers/files.js";
import type { Harness } from "../../helpers/harness.js";
import { post, startApi, type ApiExtra } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
});

async function boot(extra: ApiExtra = {}) {
  let base: string;
  ({ h, api, base } = await startApi({}, extra));
  const submitted: InboundMessage[] = [];
  const submit = h.gateway.submit.bind(h.gateway);
  h.gateway.submit = (m) => {
    submitted.push(m);
    return submit(m);
  };
  h.fake.fallback(() => text("seen"));
  return { base, submitted };
}

const errorOf = async (r: Response) => [r.status, ((await r.json()) as { error: { message: string } }).error.message];
const b64 = (bytes: Buffer) => bytes.toString("base64");
const files = (m: InboundMessage | undefined) => (m?.files ?? []) as ReceivedFile[];

describe("POST /v1/messages with files", () => {
  it("takes an image item beside the text, re-encoded without its GPS data, and a name without its path", async () => {
    const { base, submitted } = await boot();
    const photo = await jpegWithGps(800, 600);
    const res = await post(base, "/v1/messages", {
      items: [
        { content_type: "text", content: "what is on this whiteboard?" },
        { content_type: "image/jpeg", content: b64(photo), filename: "../../home/alice/IMG_0001.jpg" },
        { content_type: "text/csv", content: b64(Buffer.from("a,b\n1,2\n")), filename: "C:\\Users\\alice\\sales.csv" },
      ],
    });
    expect(res.status).toBe(200);
    expect(submitted[0]!.text).toBe("what is on this whiteboard?");
    const [image, csv] = files(submitted[0]);
    expect(image).toMatchObject({ ok: true, kind: "image", mime: "image/jpeg", name: "IMG_0001.jpg" });
    expect((await sharp(image!.bytes).metadata()).exif).toBeUndefined();
    expect(csv).toMatchObject({ kind: "text", name: "sales.csv" });
  });

  it("answers bad base64, a lying content_type, a decompression bomb and a PDF sent as a JPEG with 400 naming the item", async () => {
    const { base } = await boot();
    const send = (item: Record<string, unknown>) => post(base, "/v1/messages", { items: [{ content_type: "text", content: "look" }, item] });
    expect(await errorOf(await send({ content_type: "image/png", content: "not base64!" }))).toEqual([
      400,
      "items[1].content is not valid base64 (a file's content is its bytes in standard base64)",
    ]);
    expect(await errorOf(await send({ content_type: "image/png", content: b64(zipBomb()), filename: "cat.png" }))).toEqual([
      400,
      'items[1] ("cat.png") has content_type image/png but its content is a ZIP archive; send its real type, or application/octet-stream',
    ]);
    expect(await errorOf(await send({ content_type: "image/png", content: b64(pngBombHeader(20_000, 20_000)), filename: "huge.png" }))).toEqual([
      400,
      'items[1]: "huge.png" is 20000×20000 pixels, more than the 100 megapixels I open; send a smaller image.',
    ]);
    expect(await errorOf(await send({ content_type: "image/jpeg", content: b64(await pdf(1)), filename: "scan.jpg" }))).toEqual([
      400,
      'items[1] ("scan.jpg") has content_type image/jpeg but its content is a PDF; send its real type, or application/octet-stream',
    ]);
    expect(await errorOf(await send({ content_type: "nonsense", content: "eA==" }))).toEqual([
      400,
      'items[1].content_type must be "text" or a MIME type such as image/png',
    ]);
    expect(h.fake.calls).toHaveLength(0);
  });

  it("answers a file over MAX_FILE_BYTES with 413 naming the limit, and too many files with 400", async () => {
    const limits: FileLimits = { maxFileBytes: 2048, maxFilesPerMessage: 2, maxSessionBytes: 0 };
    const { base } = await boot({ fileLimits: limits });
    const big = await post(base, "/v1/messages", { items: [{ content_type: "application/octet-stream", content: b64(Buffer.alloc(4096, 1)), filename: "blob.bin" }] });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({
      error: { message: 'items[0] ("blob.bin") is 4 KB; files can be at most 2 KB (MAX_FILE_BYTES)', limit: { setting: "MAX_FILE_BYTES", max: 2048 } },
    });
    const small = { content_type: "text/plain", content: b64(Buffer.from("hi\n")) };
    expect(await errorOf(await post(base, "/v1/messages", { items: [small, small, small] }))).toEqual([
      400,
      "the message has 3 files; at most 2 are taken per message (MAX_FILES_PER_MESSAGE)",
    ]);
    // A body larger than any message may be is refused from its Content-Length, before it is read.
    const huge = await fetch(`${base}/v1/messages`, {
      method: "POST",
      headers: { authorization: "Bearer tok-alice", "content-type": "application/json" },
      body: JSON.stringify({ items: [{ content_type: "application/octet-stream", content: "A".repeat(3 * 1024 * 1024) }] }),
    });
    expect(await errorOf(huge)).toEqual([
      413,
      expect.stringMatching(/^the body is over [\d.]+ MB \(at most 2 files of at most 2 KB each: MAX_FILES_PER_MESSAGE, MAX_FILE_BYTES\)$/),
    ]);
    expect(h.fake.calls).toHaveLength(0);
  });

  it("takes a multipart/form-data upload: text fields and file parts", async () => {
    const { base, submitted } = await boot();
    const form = new FormData();
    form.append("text", "sign this?");
    form.append("file", new Blob([await pdf(3)], { type: "application/pdf" }), "../contract.pdf");
    const res = await fetch(`${base}/v1/messages`, { method: "POST", headers: { authorization: "Bearer tok-alice" }, body: form });
    expect(res.status).toBe(200);
    expect(submitted[0]).toMatchObject({ text: "sign this?", files: [{ ok: true, kind: "pdf", name: "contract.pdf", pages: 3 }] });

    const bad = new FormData();
    bad.append("txt", "typo");
    const refused = await fetch(`${base}/v1/messages`, { method: "POST", headers: { authorization: "Bearer tok-alice" }, body: bad });
    expect(await errorOf(refused)).toEqual([400, 'part 0 ("txt") is not a field of a message (session_id, task_id, expires_at, metadata, text, or a file)']);
  });
});

describe("GET /v1/files/{id}", () => {
  const stored = new Map<string, StoredFileView>();
  const add = (ownerId: string, name: string, mime: string, bytes: Buffer) => {
    const publicId = publicFileId();
    stored.set(publicId, { publicId, ownerId, name, mime, size: bytes.length, bytes });
    return publicId;
  };
  const get = (base: string, id: string, token = "tok-alice") => fetch(`${base}/v1/files/${id}`, { headers: { authorization: `Bearer ${token}` } });

  it("serves a file to its owner only; another user's file is as unknown as a missing one", async () => {
    const { base } = await boot({ files: { byPublicId: async (id) => stored.get(id) ?? null } });
    const csv = add("http:alice", "sales 2026.csv", "text/csv", Buffer.from("a,b\n"));
    const mine = await get(base, csv);
    expect(mine.status).toBe(200);
    expect(mine.headers.get("content-disposition")).toBe(`attachment; filename="sales 2026.csv"; filename*=UTF-8''sales%202026.csv`);
    expect(Buffer.from(await mine.arrayBuffer()).toString()).toBe("a,b\n");
    expect(await errorOf(await get(base, csv, "tok-bob"))).toEqual([404, `no file ${csv}`]);
    expect(await errorOf(await get(base, publicFileId()))).toEqual([404, expect.stringMatching(/^no file file_/)]);
    expect(await errorOf(await get(base, "..%2F..%2Fetc%2Fpasswd"))).toEqual([400, "the file id is not one this server gives out (file_…)"]);
    // Broken percent-escapes are a bad id too, not a server error.
    expect(await errorOf(await get(base, "file_%E0%A4%A"))).toEqual([400, "the file id is not one this server gives out (file_…)"]);
    expect((await fetch(`${base}/v1/files/${csv}`)).status).toBe(401);
  });

  it("never lets a browser render an SVG or HTML file: served as an attachment of plain bytes", async () => {
    const { base } = await boot({ files: { byPublicId: async (id) => stored.get(id) ?? null } });
    const svg = add("http:alice", "chart.svg", "image/svg+xml", Buffer.from("<svg onload='alert(1)'/>"));
    const res = await get(base, svg);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    const png = add(
      "http:alice",
      "chart.png",
      "image/png",
      await sharp({ create: { width: 4, height: 4, channels: 3, background: "#fff" } })
        .png()
        .toBuffer(),
    );
    const image = await get(base, png);
    expect([image.headers.get("content-type"), image.headers.get("content-disposition")]).toEqual([
      "image/png",
      `inline; filename="chart.png"; filename*=UTF-8''chart.png`,
    ]);
  });
});
