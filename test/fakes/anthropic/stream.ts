// Server-sent events for the fake Anthropic Messages API ("stream": true).
//
// The event shapes and their order follow the "Streaming Messages" page of the
// Anthropic docs (https://docs.claude.com/en/api/messages-streaming, formerly
// docs.anthropic.com/en/api/messages-streaming):
//
//   message_start        the Message with content [], stop_reason null, usage with output_tokens 1-ish
//   content_block_start  per block: {type:"text", text:""} or {type:"tool_use", id, name, input:{}}
//   ping                 after the first content_block_start, as in the docs' example
//   content_block_delta  text_delta {text} or input_json_delta {partial_json}, the first one ""
//   content_block_stop
//   message_delta        {delta: {stop_reason, stop_sequence}, usage: cumulative totals}
//   message_stop
//
// Each frame is `event: <type>\ndata: <json>\n\n`. A failure mid-stream is an
// `event: error` frame ({"type":"error","error":{type,message}}) after which
// the response ends; the status stays 200 because the headers are long gone.

import type { ServerResponse } from "node:http";
import type { FakeBlock } from "./server.js";

/**
 * How the fake streams a scripted reply. Deltas are counted across the whole
 * message (text and tool_use blocks alike), starting at 1; 0 means "right
 * after message_start, before any content block".
 */
export interface FakeStreamOptions {
  /** Hold the stream right after this many deltas were written, until `gate` settles. */
  pauseAfterDeltas?: number;
  /** Releases a paused stream. Without one, a paused stream stays held until the client goes away or close(). */
  gate?: Promise<unknown>;
  /** Called once the paused point's bytes were handed to the socket. */
  onPaused?: () => void;
  /** End the stream right after this many deltas with `failWith` (after the pause, if both name the same delta). */
  failAfterDeltas?: number;
  /** An `event: error` frame (default overloaded_error "Overloaded"), or "disconnect" to destroy the socket. */
  failWith?: { type: string; message: string } | "disconnect";
  /** Real-timer delay before each delta, for demos that want a visible stream. Tests should use a gate. */
  delayMs?: number;
}

/** A stream that holds after `afterDeltas` deltas: `paused` resolves once it holds, `release()` lets it finish. */
export interface StreamHold {
  stream: FakeStreamOptions;
  paused: Promise<void>;
  release(): void;
}

export function holdStream(afterDeltas: number): StreamHold {
  let release!: () => void;
  let onPaused!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const paused = new Promise<void>((resolve) => (onPaused = resolve));
  return { stream: { pauseAfterDeltas: afterDeltas, gate, onPaused }, paused, release: () => release() };
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  server_tool_use?: { web_search_requests: number };
}

/** The non-streaming response body; streaming sends the same message in pieces. */
export interface FakeMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: FakeBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: Usage;
}

type StreamEvent = { type: string; [k: string]: unknown };

// Text streams a word (with the whitespace after it) per delta: "one two" → "one ", "two".
function textPieces(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

const JSON_PIECE_UNITS = 16;

// Tool input streams as an empty first piece (as the docs' example shows), then
// slices of the JSON that never cut an escape sequence or a surrogate pair.
function jsonPieces(input: Record<string, unknown>): string[] {
  const units = JSON.stringify(input).match(/\\u[0-9a-fA-F]{4}|\\.|[\s\S]/gu) ?? [];
  const pieces = [""];
  for (let i = 0; i < units.length; i += JSON_PIECE_UNITS) pieces.push(units.slice(i, i + JSON_PIECE_UNITS).join(""));
  return pieces;
}

// A search's result comes whole in its content_block_start; a cited text block starts with `citations: []` and gets each
// citation in a citations_delta before its text (the web search tool page's streaming example).
function blockEvents(block: FakeBlock, index: number): StreamEvent[] {
  if (block.type === "text") {
    return [
      { type: "content_block_start", index, content_block: { type: "text", text: "", ...(block.citations ? { citations: [] } : {}) } },
      ...(block.citations ?? []).map((citation) => ({ type: "content_block_delta", index, delta: { type: "citations_delta", citation } })),
      ...textPieces(block.text).map((text) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text } })),
    ];
  }
  if (block.type === "web_search_tool_result") return [{ type: "content_block_start", index, content_block: block }];
  return [
    { type: "content_block_start", index, content_block: { type: block.type, id: block.id, name: block.name, input: {} } },
    ...jsonPieces(block.input).map((partial_json) => ({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })),
  ];
}

/** The events that stream `message`; folding them as the SDK does gives back `message` exactly. */
export function messageEvents(message: FakeMessage): StreamEvent[] {
  const { content, stop_reason, stop_sequence, usage } = message;
  const start = { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: Math.min(1, usage.output_tokens) } };
  const events: StreamEvent[] = [{ type: "message_start", message: start }];
  content.forEach((block, index) => {
    const [blockStart, ...deltas] = blockEvents(block, index);
    events.push(blockStart!);
    if (index === 0) events.push({ type: "ping" });
    events.push(...deltas, { type: "content_block_stop", index });
  });
  // The docs' example carries only output_tokens here; today's API (and the SDK's MessageDeltaUsage) carries the
  // cumulative totals, which the SDK copies onto its snapshot, so finalMessage().usage equals the non-streaming usage.
  events.push({ type: "message_delta", delta: { stop_reason, stop_sequence }, usage: { ...usage } });
  events.push({ type: "message_stop" });
  return events;
}

export function countDeltas(events: StreamEvent[]): number {
  return events.filter((e) => e.type === "content_block_delta").length;
}

/** What is wrong with a reply's stream options, or null; checked before the stream starts so mistakes are a 500. */
export function streamOptionsProblem(opts: FakeStreamOptions, deltas: number): string | null {
  for (const key of ["pauseAfterDeltas", "failAfterDeltas"] as const) {
    const n = opts[key];
    if (n === undefined) continue;
    if (!Number.isInteger(n) || n < 0) return `fake: stream.${key} must be a whole number >= 0, got ${n}`;
    if (n > deltas) return `fake: stream.${key} is ${n} but the scripted reply streams only ${deltas} deltas`;
  }
  if ((opts.gate || opts.onPaused) && opts.pauseAfterDeltas === undefined) return "fake: stream.gate and stream.onPaused need stream.pauseAfterDeltas";
  if (opts.failWith && opts.failAfterDeltas === undefined) return "fake: stream.failWith needs stream.failAfterDeltas";
  return null;
}

const noop = () => {};
const frame = (event: StreamEvent) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/**
 * Writes `events` to a response whose 200 text/event-stream headers were set,
 * pausing or failing where `opts` says. `onFailure` hears the scripted failure's message.
 * Stops quietly if the client goes away (abort, timeout, close()).
 */
export async function writeEvents(res: ServerResponse, events: StreamEvent[], opts: FakeStreamOptions, onFailure: (message: string) => void): Promise<void> {
  const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
  const written = (chunk: string) => Promise.race([new Promise<void>((resolve) => res.write(chunk, () => resolve())), closed]);
  let deltas = 0;
  for (const event of events) {
    if (event.type === "content_block_delta" && opts.delayMs) {
      await Promise.race([new Promise((resolve) => setTimeout(resolve, opts.delayMs)), closed]);
    }
    if (res.destroyed) return;
    await written(frame(event));
    if (event.type !== "message_start" && event.type !== "content_block_delta") continue;
    if (event.type === "content_block_delta") deltas++;
    if (opts.pauseAfterDeltas === deltas) {
      if (res.destroyed) return;
      opts.onPaused?.();
      // A gate that rejects releases the stream too: the hold is about timing, not about outcomes.
      const gate = opts.gate ? opts.gate.then(noop, noop) : new Promise<void>(noop);
      await Promise.race([gate, closed]);
      if (res.destroyed) return;
    }
    if (opts.failAfterDeltas === deltas) {
      const failure = opts.failWith ?? { type: "overloaded_error", message: "Overloaded" };
      if (failure === "disconnect") {
        onFailure("fake: connection dropped mid-stream");
        res.destroy();
        return;
      }
      onFailure(failure.message);
      await written(frame({ type: "error", error: failure }));
      res.end();
      return;
    }
  }
  res.end();
}
