// Voice notes from Telegram, through the real path: the fake Bot API's getFile and download, the gateway hearing
// the voice note through the fake OpenAI-compatible transcription endpoint, and the strict fake Messages API
// reading the transcript, marked as a voice message. Without an endpoint the user is told and the admin log says
// which variable to set.
import { afterEach, describe, expect, it } from "vitest";
import { HttpTranscriber } from "../../../src/llm/transcription.js";
import { text } from "../../fakes/anthropic/server.js";
import { startFakeTranscription, type FakeTranscription } from "../../fakes/transcription.js";
import { oggOpus } from "../../helpers/files.js";
import { ALICE, useTelegramWorld } from "../../helpers/telegram-world.js";

const world = useTelegramWorld();
let stt: FakeTranscription | undefined;
afterEach(async () => {
  await stt?.close();
  stt = undefined;
});

function sendVoice(): void {
  const voice = world.tg.addFile(oggOpus(), { folder: "voice", ext: "oga" });
  world.tg.pushUpdate({
    message: {
      message_id: 900,
      from: { id: ALICE, is_bot: false, first_name: "Alice" },
      chat: { id: ALICE, type: "private", first_name: "Alice" },
      date: Math.floor(Date.now() / 1000),
      voice: { file_id: voice.file_id, file_unique_id: voice.file_unique_id, duration: 3, mime_type: "audio/ogg", file_size: voice.file_size },
    },
  });
}

const userText = () =>
  (world.model.accepted()[0]!.messages.at(-1)!.content as Array<{ type: string; text?: string }>).filter((b) => b.type === "text").map((b) => b.text);

describe("voice notes from Telegram", () => {
  it("reach the agent as a transcript marked as a voice message", async () => {
    stt = await startFakeTranscription({ apiKey: "sk-test" });
    stt.script("Remind me to buy milk.");
    await world.boot({}, [], { transcriber: new HttpTranscriber({ url: stt.url, apiKey: "sk-test" }) });
    world.model.fallback(() => text("Noted: milk."));
    sendVoice();
    await world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).length >= 1);
    expect(world.tg.sent(ALICE).map((m) => m.text)).toEqual(["Noted: milk."]);
    expect(stt.calls).toEqual([{ model: "whisper-1", filename: "voice-900.ogg", mime: "audio/ogg; codecs=opus", size: 64, authorization: "Bearer sk-test" }]);
    expect(userText()[0]).toBe("[Voice message, transcribed] Remind me to buy milk.");
  });

  it("without TRANSCRIPTION_URL: the user is told voice can't be heard here", async () => {
    await world.boot();
    world.model.fallback(() => text("I got an audio file."));
    sendVoice();
    await world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).length >= 2);
    expect(world.tg.sent(ALICE).map((m) => m.text)).toContain(
      "I can't listen to voice messages here (speech-to-text is not set up on this bot). Please type your message instead.",
    );
  });
});
