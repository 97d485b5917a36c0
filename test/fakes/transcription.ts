// An HTTP fake of OpenAI's transcription endpoint (POST /v1/audio/transcriptions, the "Create transcription"
// reference of the OpenAI API: multipart/form-data with `file` and `model`, answered `{"text": "…"}`), which
// Groq, whisper.cpp's server and faster-whisper servers copy. Errors have OpenAI's shape
// `{"error":{"message","type","param","code"}}`; a missing or wrong key is 401 `invalid_api_key`.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface TranscriptionCall {
  model: string | null;
  filename: string | null;
  mime: string | null;
  size: number;
  authorization: string | undefined;
}

export interface FakeTranscription {
  url: string;
  calls: TranscriptionCall[];
  /** The text the next calls answer, in order; after them, "transcript of <filename>". */
  script(...texts: Array<string | { status: number; message: string }>): void;
  close(): Promise<void>;
}

export async function startFakeTranscription(options: { apiKey?: string } = {}): Promise<FakeTranscription> {
  const calls: TranscriptionCall[] = [];
  const queue: Array<string | { status: number; message: string }> = [];
  const error = (res: ServerResponse, status: number, message: string, code: string | null = null) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } }));

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    if (req.method !== "POST" || new URL(req.url ?? "/", "http://x").pathname !== "/v1/audio/transcriptions")
      return error(res, 404, "Invalid URL (POST /v1/audio/transcriptions)");
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) return error(res, 401, "Incorrect API key provided.", "invalid_api_key");
    let form: FormData;
    try {
      form = await new Request("http://x", { method: "POST", headers: { "content-type": req.headers["content-type"] ?? "" }, body }).formData();
    } catch {
      return error(res, 400, "Could not parse multipart form");
    }
    const file = form.get("file");
    const model = form.get("model");
    calls.push({
      model: typeof model === "string" ? model : null,
      filename: file instanceof File ? file.name : null,
      mime: file instanceof File ? file.type : null,
      size: file instanceof File ? file.size : 0,
      authorization: req.headers.authorization,
    });
    if (!(file instanceof File)) return error(res, 400, "1 validation error for Request\nbody -> file\n  field required");
    if (typeof model !== "string" || model === "") return error(res, 400, "you must provide a model parameter");
    const next = queue.shift() ?? `transcript of ${file.name}`;
    if (typeof next !== "string") return error(res, next.status, next.message);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ text: next }));
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => void handle(req, res, Buffer.concat(chunks)).catch(() => error(res, 500, "fake: internal error")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/audio/transcriptions`,
    calls,
    script: (...texts) => void queue.push(...texts),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
