// Drives the REAL @anthropic-ai/sdk client against the fake, proving that
// scripted replies arrive (whole or streamed) and that every validation rule
// rejects with a 400 the way the real API would.

import Anthropic from "@anthropic-ai/sdk";
import type { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  citedText,
  holdStream,
  lastUserText,
  reply,
  startFakeAnthropic,
  systemText,
  text,
  toolUse,
  webSearch,
  type FakeAnthropic,
  type MessagesRequest,
} from "./anthropic/server.js";

let fake: FakeAnthropic;
let client: Anthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  client = new Anthropic({ apiKey: "test-key", baseURL: fake.url, maxRetries: 0 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

const MODEL = "claude-test";
const weatherTool = { name: "get_weather", description: "weather", input_schema: { type: "object", properties: {} } };

/** Send a deliberately malformed body; the cast is the point (the SDK's types would forbid it). */
function send(messages: unknown[], extra: Record<string, unknown> = {}) {
  const body = { model: MODEL, max_tokens: 100, messages, ...extra };
  return client.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming);
}

/** The API error the SDK threw, with its server-side message. */
async function apiError(p: Promise<unknown>): Promise<{ err: InstanceType<typeof Anthropic.APIError>; message: string }> {
  const err = await p.then(
    () => {
      throw new Error("expected the request to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Anthropic.APIError);
  const apiErr = err as InstanceType<typeof Anthropic.APIError>;
  return { err: apiErr, message: apiErr.apiMessage ?? "" };
}

/** Assert a 400 invalid_request_error whose message contains `expected`, and that no step was consumed. */
async function expect400(p: Promise<unknown>, expected: string) {
  fake.script(text("must not be used"));
  const { err, message } = await apiError(p);
  expect(err).toBeInstanceOf(Anthropic.BadRequestError);
  expect(err.status).toBe(400);
  expect(err.type).toBe("invalid_request_error");
  expect(message).toContain(expected);
  expect(fake.pending()).toBe(1);
  expect(fake.rejected()).toHaveLength(1);
  expect(fake.accepted()).toHaveLength(0);
}

const user = (content: unknown) => ({ role: "user", content });
const assistant = (content: unknown) => ({ role: "assistant", content });
const use = (id: string, name = "get_weather") => ({ type: "tool_use", id, name, input: {} });
const result = (id: string, content: unknown = "ok") => ({ type: "tool_result", tool_use_id: id, content });

describe("scripted replies", () => {
  it("delivers a scripted text reply", async () => {
    fake.script(text("hello there"));
    const msg = await client.messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(msg.content).toEqual([{ type: "text", text: "hello there" }]);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.model).toBe(MODEL);
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
    expect(msg.id).toMatch(/^msg_[0-9a-f]+$/);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]?.status).toBe(200);
    expect(fake.accepted()[0]?.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("delivers a tool_use reply with stop_reason tool_use", async () => {
    fake.script(reply({ type: "text", text: "checking" }, toolUse("get_weather", { city: "Oslo" }, "toolu_1")));
    const msg = await send([user("weather?")], { tools: [weatherTool] });
    expect(msg.stop_reason).toBe("tool_use");
    expect(msg.content[1]).toEqual({ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } });
    expect(toolUse("x", {})).toMatchObject({ id: expect.stringMatching(/^toolu_[0-9a-f]+$/) });
  });

  it("accepts a well-formed tool round trip", async () => {
    fake.script(text("sunny"));
    const msg = await send([user("weather?"), assistant([use("toolu_a")]), user([result("toolu_a"), { type: "text", text: "thanks" }])], {
      tools: [weatherTool],
    });
    expect(msg.content).toEqual([{ type: "text", text: "sunny" }]);
  });

  it("passes the request to a function step and honours explicit usage", async () => {
    let seen: MessagesRequest | undefined;
    fake.script(async (req) => {
      seen = req;
      return { ...text(`you said: ${lastUserText(req)} / ${systemText(req)}`), usage: { input_tokens: 7, output_tokens: 3 } };
    });
    const msg = await send([user([{ type: "text", text: "ping" }])], { system: [{ type: "text", text: "be brief" }] });
    expect(seen?.model).toBe(MODEL);
    expect(msg.content).toEqual([{ type: "text", text: "you said: ping / be brief" }]);
    expect(msg.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
  });

  it("uses the fallback once the queue is empty", async () => {
    fake.script(text("first"));
    fake.fallback(() => text("again"));
    const a = await send([user("1")]);
    const b = await send([user("2")]);
    expect([a.content, b.content]).toEqual([[{ type: "text", text: "first" }], [{ type: "text", text: "again" }]]);
  });

  it("answers 500 when nothing is scripted", async () => {
    const { err, message } = await apiError(send([user("hi")]));
    expect(err.status).toBe(500);
    expect(message).toContain("fake: no scripted response left for this request");
    expect(fake.calls[0]).toMatchObject({ status: 500, error: "fake: no scripted response left for this request" });
  });

  it("answers 500 when the script calls a tool the request did not offer", async () => {
    fake.script(reply(toolUse("dropped_tool", {})));
    const { err, message } = await apiError(send([user("hi")], { tools: [weatherTool] }));
    expect(err.status).toBe(500);
    expect(message).toContain("fake: scripted tool_use names tool dropped_tool which the request did not offer");
  });

  it("returns a scripted 529 as an APIError", async () => {
    fake.script({ error: { status: 529, type: "overloaded_error", message: "Overloaded" } });
    const { err, message } = await apiError(send([user("hi")]));
    expect(err.status).toBe(529);
    expect(err.type).toBe("overloaded_error");
    expect(err.requestID).toMatch(/^req_/);
    expect(message).toBe("Overloaded");
  });

  it("lets an AbortSignal end a hanging request", async () => {
    let arrived!: () => void;
    const hanging = new Promise<void>((resolve) => (arrived = resolve));
    fake.script(() => {
      arrived();
      return { hang: true };
    });
    const controller = new AbortController();
    const p = client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, { signal: controller.signal });
    // Abort once the fake holds the request (a fixed 50 ms could come before it arrived on a busy machine).
    await hanging;
    controller.abort();
    await expect(p).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    expect(fake.calls[0]?.status).toBe(0);
  });

  it("close() does not wait for a hanging request", async () => {
    const own = await startFakeAnthropic();
    const ownClient = new Anthropic({ apiKey: "test-key", baseURL: own.url, maxRetries: 0 });
    let arrived!: () => void;
    const hanging = new Promise<void>((resolve) => (arrived = resolve));
    own.script(() => {
      arrived();
      return { hang: true };
    });
    const p = ownClient.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    await hanging;
    await own.close();
    await expect(p).rejects.toBeInstanceOf(Anthropic.APIConnectionError);
  });

  it("404s unknown paths", async () => {
    const res = await fetch(`${fake.url}/v1/complete`, { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "not_found_error", message: "Not found: /v1/complete" } });
  });
});

describe("header checks", () => {
  const post = (headers: Record<string, string>) =>
    fetch(`${fake.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify({ model: MODEL, max_tokens: 5, messages: [user("hi")] }) });

  it("requires an API key", async () => {
    const res = await post({ "anthropic-version": "2023-06-01" });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { type: "authentication_error", message: "x-api-key header is required" } });
  });

  it("requires anthropic-version", async () => {
    const res = await post({ "x-api-key": "k" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { message: "anthropic-version: header is required" } });
    expect(fake.rejected()).toHaveLength(1);
  });
});

describe("validation (one test per rule)", () => {
  it("1: body must be JSON", async () => {
    const res = await fetch(`${fake.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "x-api-key": "k", "anthropic-version": "2023-06-01" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string }; request_id: string };
    expect(body.error.message).toBe("There was an error parsing the body of your request");
    expect(body.request_id).toMatch(/^req_/);
  });

  it("2: model is required", () => expect400(send([user("hi")], { model: undefined }), "model: Field required"));
  it("2: max_tokens is required", () => expect400(send([user("hi")], { max_tokens: undefined }), "max_tokens: Field required"));
  it("2: max_tokens must be >= 1", () => expect400(send([user("hi")], { max_tokens: 0 }), "max_tokens: Input should be greater than or equal to 1"));

  it("3: messages must be non-empty", () => expect400(send([]), "messages: at least one message is required"));
  it("4: first message must be user", () => expect400(send([assistant("hi")]), 'messages: first message must use the "user" role'));
  it("5: roles are user or assistant", () => expect400(send([user("hi"), { role: "system", content: "x" }]), "messages.1.role: Input should be 'user' or 'assistant'"));

  const nonEmpty = "all messages must have non-empty content except for the optional final assistant message";
  it("6: empty string content", () => expect400(send([user("")]), `messages.0: ${nonEmpty}`));
  it("6: empty array content (non-final assistant)", () => expect400(send([user("a"), assistant([]), user("b")]), `messages.1: ${nonEmpty}`));
  it("6: an empty final assistant message is allowed", async () => {
    fake.script(text("continued"));
    const msg = await send([user("a"), assistant("")]);
    expect(msg.content).toEqual([{ type: "text", text: "continued" }]);
  });

  it("7: empty text block", () =>
    expect400(
      send([
        user([
          { type: "text", text: "ok" },
          { type: "text", text: "" },
        ]),
      ]),
      "messages.0.content.1.text: text content blocks must be non-empty",
    ));
  it("7: whitespace-only text", () => expect400(send([user([{ type: "text", text: "  \n" }])]), "messages: text content blocks must contain non-whitespace text"));

  it("8: tool_use only in assistant messages", () =>
    expect400(send([user([use("toolu_a")])]), "messages.0.content.0: tool_use blocks can only be in assistant messages"));
  it("8: tool_result only in user messages", () =>
    expect400(send([user("hi"), assistant([result("toolu_a")])]), "messages.1.content.0: tool_result blocks can only be in user messages"));

  it("9: tool_use ids are unique", () =>
    expect400(
      send([user("hi"), assistant([use("toolu_a")]), user([result("toolu_a")]), assistant([use("toolu_a")]), user([result("toolu_a")])]),
      "messages.3.content.0: `tool_use` ids must be unique",
    ));

  it("10: every tool_use needs a tool_result in the next message", () =>
    expect400(
      send([user("hi"), assistant([use("toolu_a"), use("toolu_b")]), user("no results")]),
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a, toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ));
  it("10: a trailing assistant tool_use is an error too", () =>
    expect400(send([user("hi"), assistant([use("toolu_a")])]), "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a."));

  it("11: tool_result must answer a tool_use in the previous message", () =>
    expect400(
      send([user("hi"), assistant([use("toolu_a")]), user([result("toolu_a"), result("toolu_zzz")])]),
      "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zzz. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ));

  it("12: one tool_result per tool_use", () =>
    expect400(
      send([user("hi"), assistant([use("toolu_a")]), user([result("toolu_a"), result("toolu_a")])]),
      "messages.2.content.1: each `tool_use` must have a single result. Found multiple `tool_result` blocks with id: toolu_a",
    ));

  it("13: tool_result blocks come first", () =>
    expect400(
      send([user("hi"), assistant([use("toolu_a")]), user([{ type: "text", text: "here" }, result("toolu_a")])]),
      "messages.2: `tool_result` blocks must come first in the user message content, before any other blocks",
    ));

  it("14: tool_result content text blocks must be non-empty", () =>
    expect400(
      send([user("hi"), assistant([use("toolu_a")]), user([result("toolu_a", [{ type: "text", text: "" }])])]),
      "messages.2.content.0.content.0.text: text content blocks must be non-empty",
    ));
  it("14: an empty tool_result string is allowed", async () => {
    fake.script(text("fine"));
    await send([user("hi"), assistant([use("toolu_a")]), user([result("toolu_a", "")])], { tools: [weatherTool] });
    expect(fake.accepted()).toHaveLength(1);
  });

  it("15: tool names match the pattern", () =>
    expect400(send([user("hi")], { tools: [{ ...weatherTool, name: "bad name!" }] }), "tools.0.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"));
  it("15: tool names are unique", () => expect400(send([user("hi")], { tools: [weatherTool, weatherTool] }), "tools: Tool names must be unique."));
  it("15: input_schema must be an object schema", () =>
    expect400(send([user("hi")], { tools: [{ name: "t", input_schema: { type: "string" } }] }), "tools.0.input_schema.type: Input should be 'object'"));

  it("16: system blocks must be text", () => expect400(send([user("hi")], { system: [{ type: "image", text: "x" }] }), "system.0.type: Input should be 'text'"));
  it("16: system text must be non-empty", () =>
    expect400(send([user("hi")], { system: [{ type: "text", text: "" }] }), "system.0.text: text content blocks must be non-empty"));
});

// The event shapes asserted here are those of the "Streaming Messages" page of the Anthropic docs
// (https://docs.claude.com/en/api/messages-streaming); test/fakes/anthropic/stream.ts says which part is which.
describe("streaming", () => {
  const params = (extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}): Anthropic.MessageCreateParamsNonStreaming => ({
    model: MODEL,
    max_tokens: 100,
    messages: [{ role: "user", content: "hi" }],
    ...extra,
  });
  const tools = [weatherTool] as Anthropic.Tool[];

  /** The SDK's events for one streamed request, as `type` or `type:index` strings, and its text deltas. */
  function record(stream: MessageStream) {
    const events: string[] = [];
    const texts: string[] = [];
    const partials: string[] = [];
    stream.on("streamEvent", (e) => void events.push("index" in e ? `${e.type}:${e.index}` : e.type));
    stream.on("text", (delta) => void texts.push(delta));
    stream.on("inputJson", (partial) => void partials.push(partial));
    return { events, texts, partials };
  }

  it("streams text deltas in order that concatenate to the scripted text", async () => {
    fake.script(text("The quick brown fox jumps"));
    const stream = client.messages.stream(params());
    const { events, texts } = record(stream);
    const msg = await stream.finalMessage();
    expect(texts).toEqual(["The ", "quick ", "brown ", "fox ", "jumps"]);
    expect(msg.content).toEqual([{ type: "text", text: "The quick brown fox jumps" }]);
    expect(events).toEqual([
      "message_start",
      "content_block_start:0",
      ...texts.map(() => "content_block_delta:0"),
      "content_block_stop:0",
      "message_delta",
      "message_stop",
    ]);
    expect(stream.request_id).toMatch(/^req_/);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]).toMatchObject({ status: 200, body: { stream: true } });
    expect(fake.calls[0]?.error).toBeUndefined();
  });

  it("finalMessage() equals the non-streaming response to the same script", async () => {
    const scripted = reply({ type: "text", text: "Checking the weather." }, toolUse("get_weather", { city: "Oslo" }, "toolu_1"));
    fake.script(scripted, scripted, { ...text("cached"), usage: { input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 5 } });
    // The fields the API sends; the SDK adds its own (parsed_output) to a streamed final message.
    const sent = ({ id, type, role, model, content, stop_reason, stop_sequence, usage }: Anthropic.Message) => ({
      id,
      type,
      role,
      model,
      content,
      stop_reason,
      stop_sequence,
      usage,
    });
    const { id: plainId, ...plain } = sent(await client.messages.create(params({ tools })));
    const { id: streamedId, ...streamed } = sent(await client.messages.stream(params({ tools })).finalMessage());
    expect(streamedId).toMatch(/^msg_[0-9a-f]+$/);
    expect(streamedId).not.toBe(plainId);
    expect(streamed).toEqual(plain);
    expect(streamed.stop_reason).toBe("tool_use");

    const explicit = await client.messages.stream(params()).finalMessage();
    expect(explicit.usage).toEqual({ input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 });
  });

  it("streams tool input as input_json_delta pieces that parse to the scripted input", async () => {
    const input = { city: "Oslo", note: 'say "hei" \u{1F44B} \\ back', days: [1, 2, 3], nested: { metric: true } };
    fake.script(reply(toolUse("get_weather", input, "toolu_1")));
    const stream = client.messages.stream(params({ tools }));
    const { partials } = record(stream);
    const msg = await stream.finalMessage();
    // The docs' example opens with an empty partial_json; the rest are slices of the JSON.
    expect(partials[0]).toBe("");
    expect(partials.length).toBeGreaterThan(3);
    expect(partials.join("")).toBe(JSON.stringify(input));
    expect(msg.content).toEqual([{ type: "tool_use", id: "toolu_1", name: "get_weather", input }]);
    expect(msg.stop_reason).toBe("tool_use");
  });

  it("streams the text before a tool_use in the same reply first", async () => {
    fake.script(reply({ type: "text", text: "Let me check." }, toolUse("get_weather", { city: "Oslo" }, "toolu_1")));
    const stream = client.messages.stream(params({ tools }));
    const { events } = record(stream);
    const order: string[] = [];
    stream.on("text", () => void order.push("text")).on("inputJson", () => void order.push("json"));
    const msg = await stream.finalMessage();
    expect(events.indexOf("content_block_stop:0")).toBeLessThan(events.indexOf("content_block_start:1"));
    expect(order.lastIndexOf("text")).toBeLessThan(order.indexOf("json"));
    expect(msg.content.map((b) => b.type)).toEqual(["text", "tool_use"]);
  });

  it("holds a gated stream after the first delta until the test releases it", async () => {
    const hold = holdStream(1);
    fake.script({ ...text("one two three"), stream: hold.stream });
    const stream = client.messages.stream(params());
    const { texts } = record(stream);
    const firstSnapshot = new Promise<string>((resolve) => stream.once("text", (_delta, snapshot) => resolve(snapshot)));
    expect(await firstSnapshot).toBe("one ");
    await hold.paused;
    // One more turn of the event loop: anything else the fake had sent would have arrived by now.
    await new Promise((resolve) => setImmediate(resolve));
    expect(texts).toEqual(["one "]);
    expect(stream.currentMessage?.content).toEqual([{ type: "text", text: "one " }]);
    expect(stream.ended).toBe(false);

    hold.release();
    const msg = await stream.finalMessage();
    expect(texts).toEqual(["one ", "two ", "three"]);
    expect(msg.content).toEqual([{ type: "text", text: "one two three" }]);
  });

  it("turns a mid-stream error event into an APIError after the deltas before it", async () => {
    fake.script({ ...text("one two three"), stream: { failAfterDeltas: 2 } });
    const stream = client.messages.stream(params());
    const { texts } = record(stream);
    const { err, message } = await apiError(stream.finalMessage());
    expect(texts).toEqual(["one ", "two "]);
    expect(err.type).toBe("overloaded_error");
    expect(message).toBe("Overloaded");
    expect(err.status).toBeUndefined(); // the 200 was sent before the error
    expect(err.requestID).toMatch(/^req_/);
    expect(fake.calls[0]).toMatchObject({ status: 200, error: "Overloaded" });
  });

  it("ends a create({ stream: true }) iteration with the scripted error type", async () => {
    fake.script({ ...text("one two three"), stream: { failAfterDeltas: 1, failWith: { type: "api_error", message: "Internal server error" } } });
    const seen: string[] = [];
    const consume = async () => {
      for await (const event of await client.messages.create({ ...params(), stream: true })) seen.push(event.type);
    };
    const { err, message } = await apiError(consume());
    expect(err.type).toBe("api_error");
    expect(message).toBe("Internal server error");
    expect(seen).toEqual(["message_start", "content_block_start", "content_block_delta"]);
  });

  it("rejects finalMessage() when the connection drops mid-stream", async () => {
    fake.script({ ...text("one two three"), stream: { failAfterDeltas: 1, failWith: "disconnect" } });
    const stream = client.messages.stream(params());
    const { texts } = record(stream);
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AnthropicError);
    expect(err).not.toBeInstanceOf(Anthropic.APIError);
    expect(texts).toEqual(["one "]);
    expect(fake.calls[0]).toMatchObject({ status: 200, error: "fake: connection dropped mid-stream" });
  });

  it("lets the client abort a stream that is held without a gate", async () => {
    fake.script({ ...text("one two"), stream: { pauseAfterDeltas: 1 } });
    const stream = client.messages.stream(params());
    await new Promise<void>((resolve) => stream.once("text", () => resolve()));
    stream.abort();
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    fake.script(text("still serving"));
    expect((await client.messages.stream(params()).finalMessage()).content).toEqual([{ type: "text", text: "still serving" }]);
  });

  it("streams with a per-delta delay", async () => {
    fake.script({ ...text("slow but sure"), stream: { delayMs: 1 } });
    expect(await client.messages.stream(params()).finalText()).toBe("slow but sure");
  });

  it("answers a scripted HTTP error before the stream as JSON with its status", async () => {
    fake.script({ error: { status: 529, type: "overloaded_error", message: "Overloaded" } });
    const { err, message } = await apiError(client.messages.stream(params()).finalMessage());
    expect(err).toBeInstanceOf(Anthropic.OverloadedError);
    expect(err.status).toBe(529);
    expect(message).toBe("Overloaded");
  });

  it("answers 500 when stream options do not fit the request or the reply", async () => {
    fake.script({ ...text("one two"), stream: { pauseAfterDeltas: 1 } }, { ...text("one two"), stream: { failAfterDeltas: 3 } });
    const plain = await apiError(client.messages.create(params()));
    expect(plain.message).toBe("fake: the scripted reply pauses or fails a stream but the request did not set stream: true");
    const tooFar = await apiError(client.messages.stream(params()).finalMessage());
    expect(tooFar.err.status).toBe(500);
    expect(tooFar.message).toBe("fake: stream.failAfterDeltas is 3 but the scripted reply streams only 2 deltas");
  });

  it("answers a malformed streaming request with a JSON 400 as before", async () => {
    await expect400(send([user("")], { stream: true }), "messages.0: all messages must have non-empty content");
    fake.reset();
    await expect400(send([user("hi")], { stream: "yes" }), "stream: Input should be a valid boolean");
    fake.reset();
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, max_tokens: 0, stream: true, messages: [user("hi")] }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: "max_tokens: Input should be greater than or equal to 1" },
    });
  });

  it("sends the documented event order on the wire", async () => {
    fake.script(reply({ type: "text", text: "Hi there" }, toolUse("get_weather", { city: "Oslo" }, "toolu_1")));
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, max_tokens: 100, stream: true, tools, messages: [user("hi")] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("request-id")).toMatch(/^req_/);
    const wire = await res.text();
    expect(wire.endsWith("\n\n")).toBe(true);
    const frames = wire
      .slice(0, -2)
      .split("\n\n")
      .map((f) => {
        const match = /^event: (\w+)\ndata: (.+)$/.exec(f);
        expect(match, `frame ${JSON.stringify(f)}`).not.toBeNull();
        const data = JSON.parse(match![2]!) as { type: string; [k: string]: unknown };
        expect(data.type).toBe(match![1]);
        return data;
      });
    const names = frames.map((f) => ("index" in f ? `${f.type}:${f.index as number}` : f.type));
    expect(names).toEqual([
      "message_start",
      "content_block_start:0",
      "ping",
      "content_block_delta:0",
      "content_block_delta:0",
      "content_block_stop:0",
      "content_block_start:1",
      ...names.filter((n) => n === "content_block_delta:1"),
      "content_block_stop:1",
      "message_delta",
      "message_stop",
    ]);
    expect(frames[0]).toEqual({
      type: "message_start",
      message: {
        id: expect.stringMatching(/^msg_/),
        type: "message",
        role: "assistant",
        model: MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: expect.any(Number), output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    expect(frames[1]).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    expect(frames[3]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi " } });
    expect(frames[6]).toEqual({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } });
    expect(frames[7]).toEqual({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } });
    expect(frames.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: expect.any(Number) } });
    expect(frames.at(-1)).toEqual({ type: "message_stop" });
  });
});

// The web search tool's blocks, as its reference page and the SDK's types give them.
describe("web search blocks", () => {
  const search = { type: "web_search_20250305", name: "web_search", max_uses: 2 };
  const call = { type: "server_tool_use", id: "srvtoolu_01", name: "web_search", input: { query: "q" } };
  const found = {
    type: "web_search_tool_result",
    tool_use_id: "srvtoolu_01",
    content: [{ type: "web_search_result", url: "https://a.example/", title: "A", encrypted_content: "enc", page_age: null }],
  };

  it("accepts a search and its result sent back in an assistant message", async () => {
    fake.script(text("ok"));
    await send([user("q"), assistant([call, found, { type: "text", text: "A says so." }]), user("more")], { tools: [search] });
    expect(fake.rejected()).toEqual([]);
  });

  it("refuses a result without its call", () =>
    expect400(
      send([user("q"), assistant([found]), user("more")]),
      "messages.1.content.0: web_search_tool_result block(s) provided without a matching server_tool_use block before it: srvtoolu_01",
    ));
  it("refuses a search call in a user message", () => expect400(send([user([call])]), "messages.0.content.0: server_tool_use blocks can only be in assistant messages"));
  it("refuses a search call whose id is not a server tool's", () =>
    expect400(
      send([user("q"), assistant([{ ...call, id: "toolu_01" }, found]), user("more")]),
      "messages.1.content.0.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'",
    ));
  it("refuses both allowed_domains and blocked_domains", () =>
    expect400(
      send([user("q")], { tools: [{ ...search, allowed_domains: ["a.example"], blocked_domains: ["b.example"] }] }),
      "tools.0: Cannot specify both allowed_domains and blocked_domains",
    ));

  it("streams a search: the call's input as JSON deltas, the result whole, the citation before the cited text", async () => {
    fake.script(reply(...webSearch("q", [["A", "https://a.example/"]], "srvtoolu_02"), citedText("A says so.", "https://a.example/", "A")));
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: "user", content: "q" }],
      tools: [search as Anthropic.WebSearchTool20250305],
    });
    const msg = await stream.finalMessage();
    expect(msg.content.map((b) => b.type)).toEqual(["server_tool_use", "web_search_tool_result", "text"]);
    expect(msg.content[0]).toMatchObject({ id: "srvtoolu_02", input: { query: "q" } });
    expect(msg.content[2]).toMatchObject({ text: "A says so.", citations: [{ type: "web_search_result_location", url: "https://a.example/", title: "A" }] });
    expect(msg.usage.server_tool_use).toEqual({ web_search_requests: 1 });
  });

  it("answers 500 when the script searches but the request did not offer web search", async () => {
    fake.script(reply(...webSearch("q", [["A", "https://a.example/"]])));
    const { message } = await apiError(send([user("q")]));
    expect(message).toContain("did not offer the web search tool");
  });
});
