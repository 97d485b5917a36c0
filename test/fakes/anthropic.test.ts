// Drives the REAL @anthropic-ai/sdk client against the fake, proving that
// scripted replies arrive and that every validation rule rejects with a 400
// the way the real API would.

import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  lastUserText,
  reply,
  startFakeAnthropic,
  systemText,
  text,
  toolUse,
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
    fake.script({ hang: true });
    const controller = new AbortController();
    const p = client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
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

  it("rejects streaming", () => expect400(send([user("hi")], { stream: true }), "fake: streaming is not supported by this fake"));

  it("2: model is required", () => expect400(send([user("hi")], { model: undefined }), "model: Field required"));
  it("2: max_tokens is required", () => expect400(send([user("hi")], { max_tokens: undefined }), "max_tokens: Field required"));
  it("2: max_tokens must be >= 1", () => expect400(send([user("hi")], { max_tokens: 0 }), "max_tokens: Input should be greater than or equal to 1"));

  it("3: messages must be non-empty", () => expect400(send([]), "messages: at least one message is required"));
  it("4: first message must be user", () => expect400(send([assistant("hi")]), 'messages: first message must use the "user" role'));
  it("5: roles are user or assistant", () =>
    expect400(send([user("hi"), { role: "system", content: "x" }]), "messages.1.role: Input should be 'user' or 'assistant'"));

  const nonEmpty = "all messages must have non-empty content except for the optional final assistant message";
  it("6: empty string content", () => expect400(send([user("")]), `messages.0: ${nonEmpty}`));
  it("6: empty array content (non-final assistant)", () => expect400(send([user("a"), assistant([]), user("b")]), `messages.1: ${nonEmpty}`));
  it("6: an empty final assistant message is allowed", async () => {
    fake.script(text("continued"));
    const msg = await send([user("a"), assistant("")]);
    expect(msg.content).toEqual([{ type: "text", text: "continued" }]);
  });

  it("7: empty text block", () =>
    expect400(send([user([{ type: "text", text: "ok" }, { type: "text", text: "" }])]), "messages.0.content.1.text: text content blocks must be non-empty"));
  it("7: whitespace-only text", () =>
    expect400(send([user([{ type: "text", text: "  \n" }])]), "messages: text content blocks must contain non-whitespace text"));

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

  it("16: system blocks must be text", () =>
    expect400(send([user("hi")], { system: [{ type: "image", text: "x" }] }), "system.0.type: Input should be 'text'"));
  it("16: system text must be non-empty", () =>
    expect400(send([user("hi")], { system: [{ type: "text", text: "" }] }), "system.0.text: text content blocks must be non-empty"));
});
