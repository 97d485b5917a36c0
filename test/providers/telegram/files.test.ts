// Files through the Telegram provider: real grammY against the fake Bot API's getFile, file downloads and
// multipart uploads, with the real gateway and runtime. What the provider hands the gateway is read from
// gateway.submit; what the user sees, from the fake chat.
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import type { TelegramOptions } from "../../../providers/telegram/telegram.js";
import { publicFileId } from "../../../src/files/ids.js";
import type { OutboundFile, ReceivedFile } from "../../../src/files/types.js";
import type { InboundMessage } from "../../../src/gateway/types.js";
import { text } from "../../fakes/anthropic/server.js";
import { jpegWithGps, oggOpus, pdf, png, pngBombHeader, zipBomb } from "../../helpers/files.js";
import { ALICE, useTelegramWorld } from "../../helpers/telegram-world.js";
import { recordSubmits } from "../../helpers/submitted.js";
import { manualTimeouts } from "../../helpers/timers.js";
import { systemTimers } from "../../../src/runtime/deps.js";

const world = useTelegramWorld();
const MB = 1024 * 1024;

let nextId = 500;
function media(fields: Record<string, unknown>, chat = ALICE) {
  return {
    message: {
      message_id: nextId++,
      from: { id: chat, is_bot: false, first_name: "Alice" },
      chat: { id: chat, type: "private", first_name: "Alice" },
      date: Math.floor(Date.now() / 1000),
      ...fields,
    },
  };
}

async function boot(options: Partial<TelegramOptions> = {}) {
  const clock = manualTimeouts();
  // Albums wait on these timers; `armed(n)` resolves once an album's wait was (re)started n times.
  let arms = 0;
  const listeners: Array<() => void> = [];
  const fileTimers = {
    setTimeout: (fn: () => void, ms: number) => {
      const handle = clock.timers.setTimeout(fn, ms);
      arms++;
      listeners.splice(0).forEach((l) => l());
      return handle;
    },
    clearTimeout: (handle: unknown) => clock.timers.clearTimeout(handle),
  };
  const armed = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (arms >= n ? resolve() : void listeners.push(check));
      check();
    });
  const started = await world.boot({ fileTimers, downloadBackoffMs: 1, ...options });
  const submitted = recordSubmits(started.h.gateway);
  world.model.fallback(() => text("ok"));
  return {
    ...started,
    submitted,
    clock,
    armed,
    until: async (n: number) => {
      await world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).length >= n);
      return world.tg.sent(ALICE).map((m) => m.text);
    },
  };
}

/** What the model was last shown of the user's newest message. */
const lastUserBlocks = () => world.model.accepted().at(-1)!.messages.at(-1)!.content;
const received = (m: InboundMessage | undefined) => (m?.files ?? []).filter((f): f is ReceivedFile => f.ok);

describe("files from Telegram", () => {
  it("downloads the largest photo size that may be downloaded, with its caption, re-encoded without GPS", async () => {
    const { submitted, until } = await boot();
    const photo = await jpegWithGps(1280, 960);
    const small = world.tg.addFile(await png(90, 67), { folder: "photos", ext: "jpg" });
    const medium = world.tg.addFile(photo, { folder: "photos", ext: "jpg" });
    const huge = world.tg.addFile(Buffer.alloc(10), { folder: "photos", ext: "jpg", declaredSize: 25 * MB });
    const sizes = [small, medium, huge].map((f, i) => ({
      file_id: f.file_id,
      file_unique_id: f.file_unique_id,
      file_size: f.file_size,
      width: 90 * (i + 1),
      height: 67 * (i + 1),
    }));
    world.tg.pushUpdate(media({ photo: sizes, caption: "What is on this whiteboard?" }));
    await until(1);
    expect(world.tg.calls.filter((c) => c.method === "getFile").map((c) => c.params.file_id)).toEqual([medium.file_id]);
    const [file] = received(submitted[0]);
    expect(submitted[0]!.text).toBe("What is on this whiteboard?");
    expect(file).toMatchObject({ kind: "image", mime: "image/jpeg", name: expect.stringMatching(/^photo-\d+\.jpg$/) });
    expect((await sharp(file!.bytes).metadata()).exif).toBeUndefined();
    // Stored with the message and shown to the model as an image, after the caption.
    expect(lastUserBlocks()).toEqual([
      { type: "text", text: "What is on this whiteboard?" },
      { type: "text", text: expect.stringMatching(/^\[Attached image: photo-\d+\.jpg \(image\/jpeg, /) },
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: expect.any(String) } },
    ]);
  });

  it("takes a document and a voice note, keeping the document's name and marking the voice note", async () => {
    const { submitted, until } = await boot();
    const doc = world.tg.addFile(await pdf(2), { ext: "pdf" });
    world.tg.pushUpdate(
      media({
        document: { file_id: doc.file_id, file_unique_id: doc.file_unique_id, file_name: "../contract.pdf", mime_type: "application/pdf", file_size: doc.file_size },
      }),
    );
    await until(1);
    const voice = world.tg.addFile(oggOpus(), { folder: "voice", ext: "oga" });
    world.tg.pushUpdate(
      media({ voice: { file_id: voice.file_id, file_unique_id: voice.file_unique_id, duration: 3, mime_type: "audio/ogg", file_size: voice.file_size } }),
    );
    await until(2);
    expect(received(submitted[0])[0]).toMatchObject({ name: "contract.pdf", kind: "pdf", pages: 2 });
    expect(world.model.accepted()[0]!.messages.at(-1)!.content).toContainEqual(expect.objectContaining({ type: "document", title: "contract.pdf" }));
    expect(received(submitted[1])[0]).toMatchObject({ kind: "audio", voice: true, name: expect.stringMatching(/^voice-\d+\.ogg$/) });
  });

  it("answers a file over the Bot API's 20 MB from its file_size, without downloading it, and keeps the caption", async () => {
    const { submitted, until } = await boot();
    const big = world.tg.addFile(Buffer.alloc(16), { ext: "mp4", declaredSize: 30 * MB });
    world.tg.pushUpdate(
      media({
        video: {
          file_id: big.file_id,
          file_unique_id: big.file_unique_id,
          width: 1,
          height: 1,
          duration: 60,
          file_name: "talk.mp4",
          mime_type: "video/mp4",
          file_size: big.file_size,
        },
        caption: "summarise the talk",
      }),
    );
    const shown = await until(2);
    expect(shown[0]).toBe('"talk.mp4" is 30 MB; Telegram lets bots download files of up to 20 MB. Send a smaller file or a link to it.');
    expect(world.tg.calls.some((c) => c.method === "getFile")).toBe(false);
    expect(submitted[0]).toMatchObject({ text: "summarise the talk", files: [{ ok: false, name: "talk.mp4" }] });
  });

  it("says 'file is too big' in its own words when only getFile knows the size", async () => {
    const { until } = await boot();
    const big = world.tg.addFile(Buffer.alloc(16), { ext: "zip", declaredSize: 21 * MB });
    world.tg.pushUpdate(media({ document: { file_id: big.file_id, file_unique_id: big.file_unique_id, file_name: "backup.zip" }, caption: "keep this" }));
    expect((await until(1))[0]).toBe('"backup.zip" is too large; Telegram lets bots download files of up to 20 MB. Send a smaller file or a link to it.');
  });

  it("gathers an album's parts into one message once no part has come for a while", async () => {
    const { submitted, until, clock, armed } = await boot();
    const parts = await Promise.all([png(10, 10), png(20, 20), png(30, 30)]);
    for (const [i, bytes] of parts.entries()) {
      const f = world.tg.addFile(bytes, { folder: "photos", ext: "jpg" });
      world.tg.pushUpdate(
        media({
          media_group_id: "13579",
          photo: [{ file_id: f.file_id, file_unique_id: f.file_unique_id, file_size: f.file_size, width: 10, height: 10 }],
          ...(i === 0 ? { caption: "compare these" } : {}),
        }),
      );
    }
    await armed(3);
    expect(clock.count(1500)).toBe(1);
    expect(submitted).toEqual([]);
    clock.fire(1500);
    await until(1);
    expect(submitted).toHaveLength(1);
    expect(submitted[0]!.text).toBe("compare these");
    expect(received(submitted[0]).map((f) => f.kind)).toEqual(["image", "image", "image"]);
  });

  it("retries a failing download, then tells the user which file could not be read; the rest goes through", async () => {
    // The retries' backoff (1 ms, then 2 ms) on real timers.
    const { submitted, until } = await boot({ fileTimers: systemTimers });
    const flaky = world.tg.addFile(Buffer.from("a,b\n1,2\n"), { ext: "csv" });
    world.tg.failDownload(flaky.file_path, 500, 2);
    world.tg.pushUpdate(media({ document: { file_id: flaky.file_id, file_unique_id: flaky.file_unique_id, file_name: "sales.csv", file_size: flaky.file_size } }));
    await until(1);
    expect(received(submitted[0])[0]).toMatchObject({ name: "sales.csv", kind: "text" });

    const broken = world.tg.addFile(Buffer.from("x"), { ext: "txt" });
    world.tg.failDownload(broken.file_path, 502, 3);
    world.tg.pushUpdate(media({ document: { file_id: broken.file_id, file_unique_id: broken.file_unique_id, file_name: "notes.txt" }, caption: "and these notes" }));
    const shown = await until(3);
    expect(shown[1]).toBe('I could not download "notes.txt" from Telegram (tried 3 times); please send it again.');
    expect(submitted[1]).toMatchObject({ text: "and these notes" });
  });

  it("answers hostile files clearly and goes on: a zip bomb named .png, a 20,000×20,000 PNG, a PDF sent as a JPEG, a lying file_size", async () => {
    const { submitted, until, h } = await boot({ fileLimits: { maxFileBytes: 64 * 1024, maxFilesPerMessage: 10, maxSessionBytes: 0 } });
    const doc = (bytes: Buffer, file_name: string, mime_type: string, declaredSize?: number) => {
      const f = world.tg.addFile(bytes, { ext: "bin", ...(declaredSize !== undefined ? { declaredSize } : {}) });
      return { file_id: f.file_id, file_unique_id: f.file_unique_id, file_name, mime_type, file_size: f.file_size };
    };
    const shows = (words: string) => world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).some((m) => m.text === words));
    world.tg.pushUpdate(media({ document: doc(zipBomb(), "cat.png", "image/png"), caption: "my cat" }));
    await shows('"cat.png" was sent as an image but it is a ZIP archive; I kept it as a file.');
    world.tg.pushUpdate(media({ document: doc(pngBombHeader(20_000, 20_000), "huge.png", "image/png") }));
    await shows('"huge.png" is 20000×20000 pixels, more than the 100 megapixels I open; send a smaller image.');
    world.tg.pushUpdate(media({ document: doc(await pdf(1), "scan.jpg", "image/jpeg"), caption: "the scan" }));
    await shows('"scan.jpg" was sent as an image but it is a PDF.');
    // Telegram said 100 bytes; the file server's Content-Length says 200 KB: refused before the body is read.
    world.tg.pushUpdate(media({ document: doc(Buffer.alloc(200 * 1024, 7), "small.bin", "application/octet-stream", 100), caption: "tiny" }));
    await shows('"small.bin" is 200 KB; files can be at most 64 KB here. Send a smaller file or a link to it.');
    await until(world.tg.sent(ALICE).length);
    expect(received(submitted[0])).toMatchObject([{ name: "cat.png", kind: "other", mime: "application/zip" }]);
    expect(received(submitted.find((m) => m.text === "the scan"))).toMatchObject([{ name: "scan.jpg", kind: "pdf" }]);
    await h.gateway.idle();
    expect(submitted.find((m) => m.text === "tiny")).toMatchObject({ files: [{ ok: false, name: "small.bin" }] });
  });

  it("says politely what it cannot read", async () => {
    const { submitted, until } = await boot();
    world.tg.pushUpdate(media({ location: { latitude: 48.85, longitude: 2.35 } }));
    expect((await until(1))[0]).toBe("I can't read locations. Send text, photos, documents, voice notes, audio or video instead.");
    expect(submitted).toEqual([]);
  });
});

describe("files to Telegram", () => {
  const outbound = (bytes: Buffer, name: string, mime: string, kind: OutboundFile["kind"], caption?: string): OutboundFile => ({
    id: `out_${name}`,
    sessionKey: `telegram:${ALICE}`,
    requestId: null,
    agent: "main",
    depth: 1,
    name,
    mime,
    kind,
    size: bytes.length,
    bytes,
    publicId: publicFileId(),
    ...(caption !== undefined ? { caption } : {}),
  });

  it("sends an image with sendPhoto and anything else with sendDocument, as multipart uploads with the caption", async () => {
    await boot();
    world.tg.addChat({ id: ALICE, type: "private" });
    const chart = await png(800, 600);
    await world.sink.deliverFile!(outbound(chart, "chart.png", "image/png", "image", "Sales by month"));
    await world.sink.deliverFile!(outbound(Buffer.from("month,total\n"), "sales.csv", "text/csv", "text"));
    // Too narrow to be a Telegram photo (ratio over 20): a document.
    await world.sink.deliverFile!(outbound(await png(2100, 100), "banner.png", "image/png", "image"));
    expect(world.tg.sentFiles(ALICE).map((f) => [f.method, f.filename, f.caption])).toEqual([
      ["sendPhoto", "chart.png", "Sales by month"],
      ["sendDocument", "sales.csv", undefined],
      ["sendDocument", "banner.png", undefined],
    ]);
    expect(world.tg.sentFiles(ALICE)[0]!.bytes.equals(chart)).toBe(true);
  });

  it("sends a caption past 1024 characters as a message after the file", async () => {
    await boot();
    world.tg.addChat({ id: ALICE, type: "private" });
    await world.sink.deliverFile!(outbound(Buffer.from("x\n"), "report.txt", "text/plain", "text", "y".repeat(1500)));
    expect(world.tg.sentFiles(ALICE)[0]!.caption).toBeUndefined();
    expect(world.tg.sent(ALICE).map((m) => m.text.length)).toEqual([1500]);
  });
});
