// Files through the Slack provider: real Bolt (signed events over HTTP) and the real Web API client against the
// fake's file host (url_private_download, files.info, the files v2 upload), with the real gateway and runtime.
// What the provider hands the gateway is read from gateway.submit; what the user sees, from the fake workspace.
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { FILES_SCOPE_FIX } from "../../../providers/slack/files.js";
import type { SlackOptions } from "../../../providers/slack/slack.js";
import { publicFileId } from "../../../src/files/ids.js";
import type { OutboundFile, ReceivedFile } from "../../../src/files/types.js";
import type { InboundMessage } from "../../../src/gateway/types.js";
import { systemTimers } from "../../../src/runtime/deps.js";
import { text } from "../../fakes/anthropic/server.js";
import { eventBody } from "../../fixtures/slack/load.js";
import { jpegWithGps, pdf } from "../../helpers/files.js";
import { capturedLog } from "../../helpers/mcp.js";
import { recordSubmits } from "../../helpers/submitted.js";
import { ALICE, BOT, CHANNEL, DM, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();
let nextTs = 1_700_000_100;

async function boot(options: Partial<SlackOptions> = {}) {
  const captured = capturedLog();
  const started = await world.run({ log: captured.log, fileTimers: systemTimers, downloadBackoffMs: 1, ...options });
  const submitted = recordSubmits(started.h.gateway);
  world.model.fallback(() => text("seen"));
  return { ...started, submitted, lines: captured.lines };
}

/** A DM from Alice carrying `files` (the recorded file_share event, its text and files replaced). */
function dmWithFiles(files: unknown[], words = "") {
  const ts = `${nextTs++}.000100`;
  world.known(DM, ALICE, words, ts);
  return eventBody("file_share", { ts, event_ts: ts, text: words, files }, { event_id: `Ev${ts}` });
}

const received = (m: InboundMessage | undefined) => (m?.files ?? []).filter((f): f is ReceivedFile => f.ok);

describe("files from Slack", () => {
  it("downloads a shared photo with the bot token, re-encoded without its GPS data; a file alone is a message too", async () => {
    const { send, h, submitted } = await boot();
    const photo = world.slack.addFile(await jpegWithGps(900, 600), "IMG_0001.jpg", "image/jpeg").object;
    await send(dmWithFiles([photo], "what is this?"));
    await world.posts(1, DM);
    const contract = world.slack.addFile(await pdf(2), "contract.pdf", "application/pdf").object;
    await send(dmWithFiles([contract]));
    await world.posts(2, DM);
    await h.gateway.idle();
    const [image] = received(submitted[0]);
    expect(submitted[0]!.text).toBe("what is this?");
    expect(image).toMatchObject({ kind: "image", mime: "image/jpeg", name: "IMG_0001.jpg" });
    expect((await sharp(image!.bytes).metadata()).exif).toBeUndefined();
    expect(submitted[1]).toMatchObject({ text: "", files: [{ ok: true, kind: "pdf", name: "contract.pdf", pages: 2 }] });
  });

  it("reads a Slack Connect file through files.info", async () => {
    const { send, h, submitted } = await boot();
    const stored = world.slack.addFile(Buffer.from("name,total\nAda,3\n"), "partners.csv", "text/csv");
    // What a message in a Slack Connect channel carries for a file shared from the other workspace.
    await send(dmWithFiles([{ id: stored.id, mode: "file_access", file_access: "check_file_info", created: 0, timestamp: 0, user: "" }], "totals?"));
    await world.posts(1, DM);
    await h.gateway.idle();
    expect(world.slack.calls.filter((c) => c.method === "files.info").map((c) => c.params.file)).toEqual([stored.id]);
    expect(received(submitted[0])).toMatchObject([{ kind: "text", name: "partners.csv" }]);
  });

  it("recognises Slack's sign-in page (no files:read): the admin is told the fix once, each user which file was not read", async () => {
    const { send, h, submitted, lines } = await boot();
    world.slack.filesScope(false);
    const a = world.slack.addFile(Buffer.from("a"), "a.txt", "text/plain").object;
    const b = world.slack.addFile(Buffer.from("b"), "b.txt", "text/plain").object;
    await send(dmWithFiles([a, b], "read these"));
    const posted = await world.posts(1, DM);
    expect(posted[0]!.text).toBe(
      'I could not read "a.txt": this bot may not read files in Slack yet (the admin has been told how to fix it).\nI could not read "b.txt": this bot may not read files in Slack yet (the admin has been told how to fix it).',
    );
    await h.gateway.idle();
    // The text still reached the agents.
    expect(submitted[0]).toMatchObject({
      text: "read these",
      files: [
        { ok: false, name: "a.txt" },
        { ok: false, name: "b.txt" },
      ],
    });
    expect(lines.filter((l) => l.msg === FILES_SCOPE_FIX)).toHaveLength(1);
  });

  it("answers a file over MAX_FILE_BYTES from Slack's size, retries a failing download, and never sends the token elsewhere", async () => {
    const { send, h, submitted } = await boot({ fileLimits: { maxFileBytes: 1024 * 1024, maxFilesPerMessage: 10, maxSessionBytes: 0 } });
    const big = world.slack.addFile(Buffer.from("small really"), "video.mov", "video/quicktime", 30 * 1024 * 1024).object;
    const flaky = world.slack.addFile(Buffer.from("x,y\n"), "flaky.csv", "text/csv");
    world.slack.failDownload(flaky.id, 503, 2);
    const foreign = { ...flaky.object, id: "FOTHER", name: "elsewhere.txt", url_private_download: "https://files.example.com/steal-the-token" };
    await send(dmWithFiles([big, flaky.object, foreign], "three files"));
    const [notice] = await world.posts(1, DM);
    expect(notice!.text).toBe(
      [
        '"video.mov" is 30 MB; files can be at most 1 MB (MAX_FILE_BYTES). Send a smaller file or a link to it.',
        'I could not download "elsewhere.txt" from Slack; please upload it again.',
      ].join("\n"),
    );
    await h.gateway.idle();
    // The flaky file came on the third try.
    expect(received(submitted[0])).toMatchObject([{ name: "flaky.csv", kind: "text" }]);
  });
});

describe("files to Slack", () => {
  it("uploads with files v2 into the conversation's thread, the caption as the initial comment", async () => {
    const { bot } = await boot();
    const root = world.known(CHANNEL, ALICE, `<@${BOT}> chart please`, `${nextTs++}.000200`);
    const bytes = Buffer.from("month,total\nJan,3\n");
    const file: OutboundFile = {
      id: "out_1",
      sessionKey: `slack:T0TEST:${CHANNEL}:thread:${root}`,
      requestId: null,
      agent: "main",
      depth: 1,
      name: "sales.csv",
      mime: "text/csv",
      kind: "text",
      size: bytes.length,
      bytes,
      publicId: publicFileId(),
      caption: "Sales by month",
    };
    await bot.sink.deliverFile!(file);
    const [shared] = world.slack.shared(CHANNEL);
    expect(shared).toMatchObject({ thread_ts: root, filename: "sales.csv", initial_comment: "Sales by month" });
    expect(shared!.bytes.equals(bytes)).toBe(true);
    expect(world.slack.calls.map((c) => c.method).filter((m) => m.startsWith("files."))).toEqual(["files.getUploadURLExternal", "files.completeUploadExternal"]);
  });
});
