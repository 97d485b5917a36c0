// An HTTP fake of the Anthropic Messages API (POST /v1/messages).
//
// Tests point the real @anthropic-ai/sdk client at `url` and script replies.
// Requests are validated as strictly as the real API (see validate.ts), so a
// client that builds a malformed history gets the same 400 it would get in
// production instead of a happy scripted reply.
//
// Streaming: a request with "stream": true gets the same scripted FakeReply as
// server-sent events (see stream.ts for the event shapes and where they come
// from): text in one text_delta per word, tool input in input_json_delta
// pieces, the same content, stop_reason and usage in the end. Errors before the
// stream starts (validation, scripted FakeError) stay JSON responses with their
// status. `FakeReply.stream` controls the timing without sleeps:
//
//   const hold = holdStream(1);                       // hold after the first delta
//   fake.script({ ...text("one two three"), stream: hold.stream });
//   const s = client.messages.stream(params);         // … see "one " arrive, then:
//   hold.release();
//
//   fake.script({ ...text("one two three"), stream: { failAfterDeltas: 2 } });
//   // "one ", "two ", then `event: error` overloaded_error; or failWith: "disconnect"
//
// Failures as the API documents them (errors.ts): overloaded() is 529, rateLimited(30) a 429 with
// `retry-after: 30`, serverError() a 500, { drop: true } a connection closed before any answer. A key the test
// revoked (revokeKey) gets 401 authentication_error before its request is read, as the real API authenticates first.
//
// Pausing or failing a reply to a request that does not stream is a 500: the
// test expected a stream the client did not ask for.

import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { countDeltas, messageEvents, streamOptionsProblem, writeEvents, type FakeMessage, type FakeStreamOptions } from "./stream.js";
import { estimateTokens as switchboardEstimate } from "../../../src/llm/tokens.js";
import { parseAndValidate, validateRequest, type MessagesRequest, type ValidationError } from "./validate.js";

export type { MessagesRequest } from "./validate.js";
export { overloaded, rateLimited, serverError } from "./errors.js";
export { holdStream, type FakeStreamOptions, type StreamHold } from "./stream.js";

/** A passage of a web search result that text cites (the Messages API's web_search_result_location). */
export interface FakeCitation {
  type: "web_search_result_location";
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}

export interface FakeSearchResult {
  type: "web_search_result";
  url: string;
  title: string;
  encrypted_content: string;
  page_age: string | null;
}

// The web search tool's blocks follow the Messages API reference ("Web search tool" page and the SDK's
// ServerToolUseBlock / WebSearchToolResultBlock): the API runs the search itself, inside the same assistant message.
export type FakeBlock =
  | { type: "text"; text: string; citations?: FakeCitation[] }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "server_tool_use"; id: string; name: "web_search"; input: Record<string, unknown> }
  | {
      type: "web_search_tool_result";
      tool_use_id: string;
      content: FakeSearchResult[] | { type: "web_search_tool_result_error"; error_code: string };
    };

export interface FakeReply {
  content: FakeBlock[];
  /** Default: "tool_use" if any tool_use block, else "end_turn". "pause_turn": a long server-tool turn, sent back to go on. */
  stop_reason?: "end_turn" | "tool_use" | "max_tokens" | "pause_turn";
  /** Default: a chars/4 estimate (at least 1) of the request / the reply. */
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  /** Models do sometimes name a tool they were not offered; set this to script that on purpose. */
  allowUnoffered?: boolean;
  /** Timing and failures when the request streams (see stream.ts); `delayMs` alone is ignored otherwise. */
  stream?: FakeStreamOptions;
}

/** e.g. 500 api_error, 529 overloaded_error, 429 rate_limit_error. */
export interface FakeError {
  error: {
    status: number;
    type: string;
    message: string;
    /** send `x-should-retry: false` */
    noRetry?: boolean;
    /** send `retry-after-ms`, which the SDK honours (0 keeps retry tests fast) */
    retryAfterMs?: number;
    /** send `retry-after` in seconds, as the Messages API does with a 429 */
    retryAfter?: number;
  };
}

/** Closes the connection without an answer (a proxy or the network dropping it). */
export interface FakeDrop {
  drop: true;
}

/** Never answers until the client aborts (to test AbortSignal / timeouts). */
export interface FakeHang {
  hang: true;
}

type Outcome = FakeReply | FakeError | FakeHang | FakeDrop;
/** `call.apiKey`: the x-api-key the request came with (to script a reply per key). */
type StepFn = (req: MessagesRequest, call: { apiKey: string | null }) => Outcome | Promise<Outcome>;
export type FakeStep = Outcome | StepFn;

export interface RecordedCall {
  /** Parsed body; for an unparseable body this is `{ raw: "<text>" }`. */
  body: MessagesRequest;
  /** HTTP status answered; 0 while unanswered (e.g. a hang). */
  status: number;
  /** Error message of an error response. */
  error?: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeAnthropic {
  url: string;
  calls: RecordedCall[];
  accepted(): MessagesRequest[];
  rejected(): RecordedCall[];
  script(...steps: FakeStep[]): void;
  fallback(fn: StepFn | null): void;
  pending(): number;
  reset(): void;
  /** Requests over this many tokens (chars/4) get "prompt is too long"; GET /v1/models/:id reports it. Null: no limit. */
  setContextLimit(tokens: number | null): void;
  /** From now on, requests with this x-api-key get 401 authentication_error (the key was revoked). */
  revokeKey(key: string): void;
  close(): Promise<void>;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

// ---- helpers for writing scripts --------------------------------------------

export function reply(...blocks: FakeBlock[]): FakeReply {
  return { content: blocks };
}

export function text(t: string): FakeReply {
  return reply({ type: "text", text: t });
}

export function toolUse(name: string, input: Record<string, unknown>, id = `toolu_${hex(12)}`): FakeBlock {
  return { type: "tool_use", id, name, input };
}

/**
 * A web search the API ran: its server_tool_use and its result, the results' encrypted_content made up (it is opaque).
 * Pages as [title, url]; a string instead is an error code (e.g. "max_uses_exceeded"), answered as the API does.
 */
export function webSearch(query: string, pages: Array<[string, string]> | string, id = `srvtoolu_${hex(12)}`): FakeBlock[] {
  const content =
    typeof pages === "string"
      ? { type: "web_search_tool_result_error" as const, error_code: pages }
      : pages.map(([title, url]) => ({ type: "web_search_result" as const, url, title, encrypted_content: `enc_${hex(16)}`, page_age: null }));
  return [
    { type: "server_tool_use", id, name: "web_search", input: { query } },
    { type: "web_search_tool_result", tool_use_id: id, content },
  ];
}

/** Text citing a page of a search result, as the API splits cited text into its own block. */
export function citedText(text: string, url: string, title: string, citedPassage = text): FakeBlock {
  return { type: "text", text, citations: [{ type: "web_search_result_location", url, title, cited_text: citedPassage, encrypted_index: `idx_${hex(8)}` }] };
}

function joinText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("\n");
}

/** Text of the last user message (text blocks joined); "" if it only has tool_results. */
export function lastUserText(req: MessagesRequest): string {
  const last = [...req.messages].reverse().find((m) => m.role === "user");
  return last ? joinText(last.content) : "";
}

/** The system prompt as a plain string (text blocks joined). */
export function systemText(req: MessagesRequest): string {
  return joinText(req.system);
}

// ---- the server ----------------------------------------------------------------

/** Switchboard's own estimate (chars/4, images and PDFs by what the model reads of them), so a test's limit means what it says. */
function estimateTokens(value: unknown): number {
  return Math.max(1, switchboardEstimate(value ?? ""));
}

/** The Messages API's request size limit; over it the answer is 413 request_too_large (the API's errors page). */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

// validate.ts also serves the simulation's in-process model, which does not stream, so it rejects
// `stream: true`; this server speaks both, so it checks `stream` itself and validates the rest.
function parseRequest(raw: string): { body: unknown; error: ValidationError | null; stream: boolean } {
  const parsed = parseAndValidate(raw);
  const body = parsed.body;
  if (typeof body !== "object" || body === null || Array.isArray(body) || !("stream" in body)) return { ...parsed, stream: false };
  const { stream, ...rest } = body as Record<string, unknown>;
  if (stream !== undefined && typeof stream !== "boolean") {
    return { body, error: { status: 400, type: "invalid_request_error", message: "stream: Input should be a valid boolean" }, stream: false };
  }
  return { body, error: validateRequest(rest), stream: stream === true };
}

export async function startFakeAnthropic(opts: { port?: number; contextLimit?: number } = {}): Promise<FakeAnthropic> {
  let contextLimit: number | null = opts.contextLimit ?? null;
  let queue: FakeStep[] = [];
  let fallbackFn: StepFn | null = null;
  const revoked = new Set<string>();
  const calls: RecordedCall[] = [];
  // Kept beside `calls` (not as a field) so RecordedCall stays exactly as documented.
  const acceptedCalls = new WeakSet<RecordedCall>();
  const rejectedCalls = new WeakSet<RecordedCall>();

  function send(res: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}) {
    // The client may have gone away while an async step was running.
    if (res.destroyed || res.writableEnded) return;
    // Too late for a status once a stream has started; dropping the connection is what a broken server does.
    if (res.headersSent) return void res.destroy();
    const requestId = `req_${hex(12)}`;
    const payload = status >= 400 ? { ...(body as object), request_id: requestId } : body;
    res.writeHead(status, { "content-type": "application/json", "request-id": requestId, ...extraHeaders });
    res.end(JSON.stringify(payload));
  }

  function sendError(res: ServerResponse, call: RecordedCall | null, status: number, type: string, message: string, extra?: Record<string, string>) {
    if (call) {
      call.status = status;
      call.error = message;
    }
    send(res, status, { type: "error", error: { type, message } }, extra);
  }

  async function runStep(req: MessagesRequest, apiKey: string | null): Promise<Outcome | null> {
    const step = queue.length > 0 ? queue.shift()! : fallbackFn;
    if (!step) return null;
    return typeof step === "function" ? await step(req, { apiKey }) : step;
  }

  async function handleMessages(req: IncomingMessage, res: ServerResponse, raw: string) {
    const call: RecordedCall = { body: {} as MessagesRequest, status: 0, headers: { ...req.headers } };
    calls.push(call);
    const reject = (status: number, type: string, message: string) => {
      rejectedCalls.add(call);
      sendError(res, call, status, type, message);
    };

    if (Buffer.byteLength(raw) > MAX_REQUEST_BYTES) return reject(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.");
    const { body, error, stream } = parseRequest(raw);
    call.body = body as MessagesRequest;
    // Headers are checked first, as the real API authenticates before reading the body.
    const auth = req.headers.authorization;
    if (!req.headers["x-api-key"] && !(typeof auth === "string" && /^Bearer \S/.test(auth))) {
      return reject(401, "authentication_error", "x-api-key header is required");
    }
    // The SDK sends the key as x-api-key, or (newer versions) as a bearer token.
    const apiKey = typeof req.headers["x-api-key"] === "string" ? req.headers["x-api-key"] : typeof auth === "string" ? auth.replace(/^Bearer\s+/, "") : null;
    if (apiKey !== null && revoked.has(apiKey)) return reject(401, "authentication_error", "invalid x-api-key");
    if (!req.headers["anthropic-version"]) {
      return reject(400, "invalid_request_error", "anthropic-version: header is required");
    }
    if (error) return reject(error.status, error.type, error.message);
    // The context window: the same chars/4 estimate Switchboard uses, so a test's limit means what it says.
    if (contextLimit !== null) {
      const { system, messages, tools } = call.body;
      const tokens = estimateTokens(system ?? "") + estimateTokens(messages) + estimateTokens(tools ?? []);
      if (tokens > contextLimit) return reject(400, "invalid_request_error", `prompt is too long: ${tokens} tokens > ${contextLimit} maximum`);
    }
    acceptedCalls.add(call);

    const request = call.body;
    let outcome: Outcome | null;
    try {
      outcome = await runStep(request, apiKey);
    } catch (err) {
      return sendError(res, call, 500, "api_error", `fake: scripted step threw: ${(err as Error)?.message ?? String(err)}`);
    }
    if (!outcome) return sendError(res, call, 500, "api_error", "fake: no scripted response left for this request");
    // Leave the socket open; Node drops it when the client aborts, close() destroys it.
    if ("hang" in outcome) return;
    if ("drop" in outcome) {
      call.error = "fake: connection dropped before an answer";
      return void res.destroy();
    }
    if ("error" in outcome) {
      const { status, type, message, noRetry, retryAfterMs, retryAfter } = outcome.error;
      const headers: Record<string, string> = {};
      if (noRetry) headers["x-should-retry"] = "false";
      if (retryAfterMs !== undefined) headers["retry-after-ms"] = String(retryAfterMs);
      if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
      return sendError(res, call, status, type, message, headers);
    }

    // Catch tests whose client stopped offering a tool the script expects it to call.
    const offered = new Set((request.tools ?? []).map((t) => t.name));
    const stray = outcome.allowUnoffered ? undefined : outcome.content.find((b) => b.type === "tool_use" && !offered.has(b.name));
    if (stray && stray.type === "tool_use") {
      return sendError(res, call, 500, "api_error", `fake: scripted tool_use names tool ${stray.name} which the request did not offer`);
    }
    const searches = outcome.content.filter((b) => b.type === "server_tool_use").length;
    const searchOffered = (request.tools ?? []).some((t) => typeof t.type === "string" && t.type.startsWith("web_search_"));
    if (searches > 0 && !searchOffered && !outcome.allowUnoffered) {
      return sendError(res, call, 500, "api_error", "fake: scripted server_tool_use searches the web but the request did not offer the web search tool");
    }

    const hasToolUse = outcome.content.some((b) => b.type === "tool_use");
    const usage = outcome.usage ?? {
      input_tokens: estimateTokens([request.system, request.messages, request.tools]),
      output_tokens: estimateTokens(outcome.content),
    };
    const message: FakeMessage = {
      id: `msg_${hex(12)}`,
      type: "message",
      role: "assistant",
      model: request.model,
      content: outcome.content,
      stop_reason: outcome.stop_reason ?? (hasToolUse ? "tool_use" : "end_turn"),
      stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...(searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}), ...usage },
    };
    const streamOpts = outcome.stream ?? {};
    if (!stream) {
      if (streamOpts.pauseAfterDeltas !== undefined || streamOpts.failAfterDeltas !== undefined) {
        return sendError(res, call, 500, "api_error", "fake: the scripted reply pauses or fails a stream but the request did not set stream: true");
      }
      call.status = 200;
      return send(res, 200, message);
    }

    const events = messageEvents(message);
    const problem = streamOptionsProblem(streamOpts, countDeltas(events));
    if (problem) return sendError(res, call, 500, "api_error", problem);
    if (res.destroyed) return;
    call.status = 200;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_${hex(12)}` });
    await writeEvents(res, events, streamOpts, (message) => void (call.error = message));
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const model = /^\/v1\/models\/([^/]+)$/.exec(path);
      if (req.method === "GET" && model) {
        // The Models API: max_input_tokens is the context window clients can look up.
        return send(res, 200, {
          type: "model",
          id: decodeURIComponent(model[1]!),
          display_name: "Fake model",
          created_at: "2026-01-01T00:00:00Z",
          max_input_tokens: contextLimit ?? 200_000,
          max_tokens: 64_000,
        });
      }
      if (req.method !== "POST" || path !== "/v1/messages") {
        return sendError(res, null, 404, "not_found_error", `Not found: ${path}`);
      }
      handleMessages(req, res, Buffer.concat(chunks).toString("utf8")).catch((err) => {
        sendError(res, null, 500, "api_error", `fake: internal error: ${(err as Error)?.message ?? String(err)}`);
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    accepted: () => calls.filter((c) => acceptedCalls.has(c)).map((c) => c.body),
    rejected: () => calls.filter((c) => rejectedCalls.has(c)),
    script: (...steps) => void queue.push(...steps),
    fallback: (fn) => void (fallbackFn = fn),
    pending: () => queue.length,
    setContextLimit: (tokens) => void (contextLimit = tokens),
    revokeKey: (key) => void revoked.add(key),
    reset: () => {
      queue = [];
      fallbackFn = null;
      calls.length = 0; // keep the same array so `fake.calls` references stay live
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Hanging and keep-alive sockets would otherwise keep close() waiting.
        server.closeAllConnections();
      }),
  };
}
