import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HttpTranscriber, NoTranscriber } from "../../src/llm/transcription.js";
import { startFakeTranscription, type FakeTranscription } from "../fakes/transcription.js";

let fake: FakeTranscription;
beforeEach(async () => {
  fake = await startFakeTranscription({ apiKey: "sk-test" });
});
afterEach(() => fake.close());

const voice = { bytes: Buffer.from("OggS fake opus"), name: "voice-note.ogg", mime: "audio/ogg" };

describe("speech to text", () => {
  it("posts the file and the model as multipart and reads the text", async () => {
    fake.script("Buy milk on the way home.");
    const transcriber = new HttpTranscriber({ url: fake.url, apiKey: "sk-test" });
    expect(await transcriber.transcribe(voice)).toEqual({ ok: true, text: "Buy milk on the way home." });
    expect(fake.calls).toEqual([{ model: "whisper-1", filename: "voice-note.ogg", mime: "audio/ogg", size: voice.bytes.length, authorization: "Bearer sk-test" }]);
  });

  it("says which setting to check when the key is refused or the URL is wrong", async () => {
    const wrongKey = await new HttpTranscriber({ url: fake.url, apiKey: "sk-wrong", model: "whisper-large-v3" }).transcribe(voice);
    expect(wrongKey).toEqual({ ok: false, error: "the transcription endpoint answered 401: Incorrect API key provided.; check TRANSCRIPTION_API_KEY" });
    const wrongUrl = await new HttpTranscriber({ url: fake.url.replace("/transcriptions", "/translate"), apiKey: "sk-test" }).transcribe(voice);
    expect(wrongUrl).toMatchObject({ ok: false, error: expect.stringContaining("check TRANSCRIPTION_URL") });
    const gone = fake.url;
    await fake.close();
    const closed = await new HttpTranscriber({ url: gone }).transcribe(voice);
    fake = await startFakeTranscription();
    expect(closed).toEqual({ ok: false, error: expect.stringMatching(/^cannot reach TRANSCRIPTION_URL \(E[A-Z]+\)$/) });
  });

  it("without TRANSCRIPTION_URL, says which variable to set", async () => {
    const none = new NoTranscriber();
    expect(none.configured).toBe(false);
    expect(none.setupHint).toContain("set TRANSCRIPTION_URL");
  });
});
