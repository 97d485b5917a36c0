import { z } from "zod";

// Speech to text for voice notes and audio files, through any endpoint that speaks OpenAI's transcription API
// (`POST` multipart `file` + `model`, answered `{"text": …}`): OpenAI, Groq, a local whisper.cpp or
// faster-whisper server. Injected beside the model; the gateway calls it.

export type TranscriptionResult = { ok: true; text: string } | { ok: false; error: string };

export interface Transcriber {
  /** False when TRANSCRIPTION_URL is unset: voice notes cannot be heard, and `setupHint` says what to set. */
  readonly configured: boolean;
  readonly setupHint: string;
  transcribe(audio: { bytes: Buffer; name: string; mime: string }, signal?: AbortSignal): Promise<TranscriptionResult>;
}

export const DEFAULT_TRANSCRIPTION_MODEL = "whisper-1";
export const TRANSCRIPTION_SETUP_HINT =
  "voice notes cannot be transcribed: set TRANSCRIPTION_URL to an OpenAI-compatible transcription endpoint (e.g. https://api.openai.com/v1/audio/transcriptions) and TRANSCRIPTION_API_KEY, then restart";

/** What the user is told when a voice note arrives and no endpoint is configured. */
export const VOICE_UNAVAILABLE = "I can't listen to voice messages here (speech-to-text is not set up on this bot). Please type your message instead.";

export interface HttpTranscriberOptions {
  /** The full endpoint URL (TRANSCRIPTION_URL). */
  url: string;
  apiKey?: string | undefined;
  model?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const answer = z.object({ text: z.string() });
const failure = z.object({ error: z.object({ message: z.string() }).or(z.string()) });

export class HttpTranscriber implements Transcriber {
  readonly configured = true;
  readonly setupHint = "";

  constructor(private readonly options: HttpTranscriberOptions) {}

  async transcribe(audio: { bytes: Buffer; name: string; mime: string }, signal?: AbortSignal): Promise<TranscriptionResult> {
    const form = new FormData();
    form.append("file", new Blob([audio.bytes], { type: audio.mime }), audio.name);
    form.append("model", this.options.model ?? DEFAULT_TRANSCRIPTION_MODEL);
    form.append("response_format", "json");
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
    let response: Response;
    try {
      response = await (this.options.fetch ?? fetch)(this.options.url, {
        method: "POST",
        body: form,
        headers: this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {},
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      return { ok: false, error: `cannot reach TRANSCRIPTION_URL (${code ?? (error instanceof Error ? error.name : "network error")})` };
    }
    const body: unknown = await response.json().catch(() => null);
    if (!response.ok) {
      const parsed = failure.safeParse(body);
      const message = parsed.success ? (typeof parsed.data.error === "string" ? parsed.data.error : parsed.data.error.message) : "no error message";
      const hint =
        response.status === 401 || response.status === 403
          ? "; check TRANSCRIPTION_API_KEY"
          : response.status === 404
            ? "; check TRANSCRIPTION_URL (the full endpoint URL)"
            : "";
      return { ok: false, error: `the transcription endpoint answered ${response.status}: ${message.slice(0, 300)}${hint}` };
    }
    const parsed = answer.safeParse(body);
    if (!parsed.success)
      return { ok: false, error: "the transcription endpoint's answer has no text field (is TRANSCRIPTION_URL an OpenAI-compatible /audio/transcriptions endpoint?)" };
    return { ok: true, text: parsed.data.text };
  }
}

/** Stands in when TRANSCRIPTION_URL is unset. */
export class NoTranscriber implements Transcriber {
  readonly configured = false;
  readonly setupHint = TRANSCRIPTION_SETUP_HINT;
  transcribe(): Promise<TranscriptionResult> {
    return Promise.resolve({ ok: false, error: TRANSCRIPTION_SETUP_HINT });
  }
}
