// The order at Telegram's door: a re-delivered update is recognised before anything else (no flood token, no
// download, no transcription), then the flood limit, and only then are files fetched. Real grammY in webhook mode
// against the fake Bot API: Telegram re-sends an update with the same update_id when the webhook did not answer in
// time (core.telegram.org/bots/api#setwebhook: "in case of an unsuccessful request … we will repeat the request").
import { afterEach, describe, expect, it } from "vitest";
import type { SubmitResult } from "../../../src/gateway/types.js";
import { HttpTranscriber } from "../../../src/llm/transcription.js";
import { text } from "../../fakes/anthropic/server.js";
import { startFakeTranscription, type FakeTranscription } from "../../fakes/transcription.js";
import { oggOpus, png } from "../../helpers/files.js";
import { ALICE, useTelegramWorld } from "../../helpers/telegram-world.js";

const world = useTelegramWorld();
const SECRET = "door-secret";
let stt: FakeTranscription | undefined;
afterEach(async () => {
  await stt?.close();
  stt = undefined;
});

/** A webhook bot limited to `perMinute` messages a minute; `post` hands Telegram's POST over and resolves with what the gateway answered. */
async function boot(perMinute: number, transcriber?: HttpTranscriber) {
  const now = 1_700_000_000_000;
  const { h, bot } = await world.boot({ webhook: { url: "https://bot.example.com/tg", secret: SECRET, port: 0 } }, [], {
    userMessagesPerMinute: perMinute,
    clock: { now: () => now },
    ...(transcriber ? { transcriber } : {}),
  });
  world.tg.addChat({ id: ALICE, type: "private" });
  world.model.fallback(() => text("ok"));
  const waiting: Array<(result: SubmitResult) => void> = [];
  const submit = h.gateway.submit.bind(h.gateway);
  h.gateway.submit = async (message) => {
    const result = await submit(message);
    waiting.shift()?.(result);
    return result;
  };
  const post = async (update: object): Promise<SubmitResult> => {
    const handed = new Promise<SubmitResult>((resolve) => waiting.push(resolve));
    const response = await fetch(`http://127.0.0.1:${bot.webhookPort()}/tg`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
      body: JSON.stringify(update),
    });
    expect(response.status).toBe(200);
    const result = await handed;
    await h.gateway.idle();
    return result;
  };
  return { h, post };
}

let nextId = 7000;
function update(fields: Record<string, unknown>) {
  const id = nextId++;
  return {
    update_id: id,
    message: {
      message_id: id,
      from: { id: ALICE, is_bot: false, first_name: "Alice" },
      chat: { id: ALICE, type: "private", first_name: "Alice" },
      date: 1_700_000_000,
      ...fields,
    },
  };
}

async function photo() {
  const f = world.tg.addFile(await png(40, 30), { folder: "photos", ext: "jpg" });
  return { photo: [{ file_id: f.file_id, file_unique_id: f.file_unique_id, file_size: f.file_size, width: 40, height: 30 }] };
}

const getFiles = () => world.tg.calls.filter((c) => c.method === "getFile").length;
const botSaid = () => world.tg.sent(ALICE).map((m) => m.text);

describe("Telegram's door: duplicates first, then the flood limit, then downloads", () => {
  it("a re-delivered update with a photo downloads once, takes no flood token and is answered once", async () => {
    const { post } = await boot(2);
    const first = update({ ...(await photo()), caption: "what is this?" });
    expect((await post(first)).status).toBe("accepted");
    expect(await post(first)).toMatchObject({ status: "duplicate" });
    expect(getFiles()).toBe(1);
    expect(botSaid()).toEqual(["ok"]);
    // The re-delivery took no token: Alice's second message of the minute is still hers to send.
    expect((await post(update({ text: "and another thing" }))).status).toBe("accepted");
    expect(botSaid()).toEqual(["ok", "ok"]);
    expect(world.model.accepted()).toHaveLength(2);
  });

  it("a re-delivered voice note is transcribed once", async () => {
    stt = await startFakeTranscription({ apiKey: "sk-test" });
    const { post } = await boot(10, new HttpTranscriber({ url: stt.url, apiKey: "sk-test" }));
    const voice = world.tg.addFile(oggOpus(), { folder: "voice", ext: "oga" });
    const note = update({ voice: { file_id: voice.file_id, file_unique_id: voice.file_unique_id, duration: 3, mime_type: "audio/ogg", file_size: voice.file_size } });
    expect((await post(note)).status).toBe("accepted");
    expect((await post(note)).status).toBe("duplicate");
    expect(stt.calls).toHaveLength(1);
    expect(getFiles()).toBe(1);
    expect(botSaid()).toEqual(["ok"]);
  });

  it("a flooding sender's photos past the limit are not downloaded", async () => {
    const { post } = await boot(2);
    const results: string[] = [];
    for (let i = 0; i < 4; i++) results.push((await post(update(await photo()))).status);
    expect(results).toEqual(["accepted", "accepted", "limited", "limited"]);
    expect(getFiles()).toBe(2);
    expect(botSaid()).toEqual(["ok", "ok", expect.stringMatching(/^You're sending messages faster than I can take them \(at most 2 a minute\)/)]);
  });
});
