import type { Timers } from "../runtime/deps.js";

// Platform files (Telegram's file URL, Slack's url_private_download) are fetched here: the size is checked before
// (the platform's own figure, then Content-Length) and enforced while streaming, whatever the headers said;
// network failures and 5xx/429 are retried with backoff on the injected timers; an HTML page where a file was
// expected (Slack's login page for a request without a valid token) is recognised, not stored as the file.

export interface DownloadOptions {
  url: string;
  headers?: Record<string, string>;
  maxBytes: number;
  /** Tries in all (default 3). */
  attempts?: number;
  /** First wait between tries, doubling (default 500 ms). */
  backoffMs?: number;
  timers: Timers;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export type DownloadResult =
  | { ok: true; bytes: Buffer; contentType: string | null }
  /** Over maxBytes: `size` when the server said it (Content-Length) or as far as it was read. */
  | { ok: false; problem: "too_large"; size: number | null }
  /** An HTML page came back instead of the file (a login page: the token is missing, wrong, or lacks a scope). */
  | { ok: false; problem: "html"; status: number }
  | { ok: false; problem: "failed"; status: number | null; detail: string };

class TooLarge extends Error {
  constructor(readonly size: number | null) {
    super("too large");
  }
}

export async function download(options: DownloadOptions): Promise<DownloadResult> {
  const attempts = Math.max(1, options.attempts ?? 3);
  let last: DownloadResult = { ok: false, problem: "failed", status: null, detail: "not tried" };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    last = await once(options);
    const retryable = !last.ok && last.problem === "failed" && (last.status === null || last.status === 429 || last.status >= 500);
    if (!retryable || attempt === attempts || options.signal?.aborted) return last;
    await wait(options.timers, (options.backoffMs ?? 500) * 2 ** (attempt - 1));
  }
  return last;
}

async function once(options: DownloadOptions): Promise<DownloadResult> {
  const fetcher = options.fetch ?? fetch;
  let response: Response;
  try {
    response = await fetcher(options.url, { headers: options.headers ?? {}, redirect: "follow", ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    return { ok: false, problem: "failed", status: null, detail: describe(error) };
  }
  const type = response.headers.get("content-type");
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    return { ok: false, problem: "failed", status: response.status, detail: `HTTP ${response.status}` };
  }
  if (type?.toLowerCase().startsWith("text/html")) {
    await response.body?.cancel().catch(() => {});
    return { ok: false, problem: "html", status: response.status };
  }
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    await response.body?.cancel().catch(() => {});
    return { ok: false, problem: "too_large", size: declared };
  }
  try {
    const bytes = await readCapped(response.body, options.maxBytes);
    return { ok: true, bytes, contentType: type };
  } catch (error) {
    if (error instanceof TooLarge) return { ok: false, problem: "too_large", size: error.size };
    return { ok: false, problem: "failed", status: null, detail: describe(error) };
  }
}

/** Reads a body to its end, giving up as soon as it passes `max` bytes (a Content-Length may lie). */
export async function readCapped(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | null, max: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const iterable = Symbol.asyncIterator in body ? (body as AsyncIterable<Uint8Array>) : streamChunks(body as ReadableStream<Uint8Array>);
  for await (const chunk of iterable) {
    size += chunk.length;
    if (size > max) throw new TooLarge(null);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(chunks, size);
}

async function* streamChunks(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

export function isTooLarge(error: unknown): boolean {
  return error instanceof TooLarge;
}

function wait(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => timers.setTimeout(resolve, ms));
}

/** A network error without its URL (a Telegram file URL carries the bot token). */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/https?:\/\/\S+/g, "<url>");
}
