// Voice notes and audio files heard at the door: each one's transcript joins the message text, marked as a voice
// message, so the agents read what was said and the stored request keeps it (transcribed once, not at every model
// call). Without TRANSCRIPTION_URL the user is told voice can't be heard here, and the admin log says once what
// to set. The audio itself is stored with the message either way.
import type { Logger } from "pino";
import type { ReceivedFile } from "../files/types.js";
import { VOICE_UNAVAILABLE, type Transcriber } from "../llm/transcription.js";
import type { InboundMessage } from "./types.js";

export interface Heard {
  text: string;
  /** What the user should be told (voice can't be heard here, or one file could not be transcribed). */
  notice: string | null;
}

export class VoiceDoor {
  private warned = false;
  constructor(
    private readonly transcriber: Transcriber | undefined,
    private readonly log: Logger,
  ) {}

  async hear(message: InboundMessage): Promise<Heard> {
    const audio = (message.files ?? []).filter((f): f is ReceivedFile => f.ok && (f.kind === "audio" || (f.kind === "video" && f.voice === true)));
    if (audio.length === 0) return { text: message.text, notice: null };
    if (!this.transcriber?.configured) {
      if (!this.warned) {
        this.warned = true;
        this.log.warn(
          { session: message.sessionKey },
          this.transcriber?.setupHint || "voice notes cannot be transcribed: set TRANSCRIPTION_URL (and TRANSCRIPTION_API_KEY), then restart",
        );
      }
      return { text: message.text, notice: VOICE_UNAVAILABLE };
    }
    const parts = message.text === "" ? [] : [message.text];
    const failed: string[] = [];
    for (const file of audio) {
      const result = await this.transcriber.transcribe({ bytes: file.bytes, name: file.name, mime: file.mime });
      if (!result.ok) {
        // The reason names the endpoint's answer, never the audio; the user hears which file was not understood.
        this.log.warn({ session: message.sessionKey, file: file.name, reason: result.error }, "a voice note could not be transcribed");
        failed.push(file.name);
        continue;
      }
      const said = result.text.trim() || "(nothing intelligible was said)";
      parts.push(file.voice ? `[Voice message, transcribed] ${said}` : `[Transcript of ${file.name}] ${said}`);
    }
    const notice = failed.length > 0 ? `Sorry, I could not transcribe ${failed.join(", ")}; please try again or type it.` : null;
    return { text: parts.join("\n\n"), notice };
  }
}
