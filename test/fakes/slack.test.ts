// Drives the REAL @slack/web-api client (and a real Bolt App) against the
// Slack fake: every validation rule fails with the platform error code the
// real Web API would answer, and the signed-request helpers pass Bolt's own
// signature verification.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { App, LogLevel, verifySlackRequest } from "@slack/bolt";
import { ErrorCode, WebClient, WebClientEvent, type WebAPIPlatformError } from "@slack/web-api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { appMention, eventCallback, interactivity, messageEvent, sendSigned, signature, slashCommand, urlVerification } from "./slack/events.js";
import { startFakeSlack, type FakeSlack } from "./slack/server.js";

let fake: FakeSlack;
let client: WebClient;

/** The client logs Slack's `response_metadata.messages` at error level; keep expected rejections quiet. */
const quiet = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};

beforeAll(async () => {
  fake = await startFakeSlack();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logger: quiet });
});

const CHANNEL = "C0GENERAL";
const DM = "D0ALICE";
const ALICE = "U0ALICE";

/** The platform error code a call failed with (fails the test if it succeeded). */
async function slackError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => {
      throw new Error("expected the Web API call to fail");
    },
    (e: unknown) => e as WebAPIPlatformError,
  );
  expect(err.code).toBe(ErrorCode.PlatformError);
  return err.data.error;
}

describe("Web API", () => {
  it("answers auth.test and rejects a missing or unknown token", async () => {
    expect(await client.auth.test()).toMatchObject({
      ok: true,
      team: "Test Team",
      user: "switchboard",
      team_id: fake.teamId,
      user_id: fake.botUserId,
      bot_id: fake.botId,
      is_enterprise_install: false,
    });
    const stranger = new WebClient("xoxb-wrong", { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    expect(await slackError(stranger.auth.test())).toBe("invalid_auth");
    const anonymous = new WebClient(undefined, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    expect(await slackError(anonymous.auth.test())).toBe("not_authed");
    expect(await slackError(client.apiCall("chat.telepathy", { channel: CHANNEL }))).toBe("unknown_method");
  });

  it("posts messages and thread replies; a reply to an unknown ts is thread_not_found", async () => {
    const root = await client.chat.postMessage({ channel: CHANNEL, text: "hello" });
    expect(root).toMatchObject({ ok: true, channel: CHANNEL, message: { type: "message", text: "hello", user: "U0BOT", bot_id: "B0BOT" } });
    expect(root.ts).toMatch(/^\d{10}\.\d{6}$/);

    const userTs = fake.userMessage({ channel: DM, user: ALICE, text: "hi bot" });
    const reply = await client.chat.postMessage({ channel: DM, text: "hi Alice", thread_ts: userTs, mrkdwn: true, unfurl_links: false });
    expect(reply.message).toMatchObject({ thread_ts: userTs });
    // A reply to a reply lands in the root's thread.
    const nested = await client.chat.postMessage({ channel: DM, text: "again", thread_ts: reply.ts! });
    expect(nested.message?.thread_ts).toBe(userTs);
    expect(Number(reply.ts) > Number(root.ts) && Number(nested.ts) > Number(reply.ts)).toBe(true);

    expect(await slackError(client.chat.postMessage({ channel: DM, text: "lost", thread_ts: "1234567890.000001" }))).toBe("thread_not_found");
    // The ts exists, but in another channel.
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "wrong channel", thread_ts: userTs }))).toBe("thread_not_found");

    expect(fake.posted().map((p) => [p.channel, p.text, p.thread_ts])).toEqual([
      [CHANNEL, "hello", undefined],
      [DM, "hi Alice", userTs],
      [DM, "again", userTs],
    ]);
    expect(fake.posted(DM)[0]!.params).toMatchObject({ mrkdwn: "true", unfurl_links: "false" });
  });

  it("validates text: no_text, channel_not_found, msg_too_long at 40,001 characters", async () => {
    expect(await slackError(client.apiCall("chat.postMessage", { channel: CHANNEL }))).toBe("no_text");
    expect(await slackError(client.apiCall("chat.postMessage", { text: "where?" }))).toBe("channel_not_found");
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "x".repeat(40_001) }))).toBe("msg_too_long");
    await client.chat.postMessage({ channel: CHANNEL, text: "x".repeat(40_000) });
    expect(fake.posted()).toHaveLength(1);
  });

  it("validates blocks: an over-long section is invalid_blocks, a markdown block is accepted", async () => {
    const section = (text: string) => [{ type: "section" as const, text: { type: "mrkdwn" as const, text } }];
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "fallback", blocks: section("y".repeat(3001)) }))).toBe("invalid_blocks");
    const tooMany = Array.from({ length: 51 }, () => ({ type: "divider" as const }));
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "fallback", blocks: tooMany }))).toBe("invalid_blocks");
    expect(await slackError(client.apiCall("chat.postMessage", { channel: CHANNEL, text: "t", blocks: "{not json" }))).toBe("invalid_blocks_format");

    await client.chat.postMessage({ channel: CHANNEL, text: "fallback", blocks: section("y".repeat(3000)) });
    const md = await client.chat.postMessage({ channel: CHANNEL, text: "fallback", blocks: [{ type: "markdown", text: "**bold** " + "z".repeat(11_000) }] });
    expect(md.ok).toBe(true);
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "f", blocks: [{ type: "markdown", text: "z".repeat(12_001) }] }))).toBe("invalid_blocks");

    // Blocks without text: Slack stores its own fallback text.
    await client.chat.postMessage({ channel: CHANNEL, blocks: [{ type: "markdown", text: "only blocks" }] });
    const posted = fake.posted();
    expect(posted).toHaveLength(3);
    expect(posted[1]!.blocks).toEqual([{ type: "markdown", text: "**bold** " + "z".repeat(11_000) }]);
    expect(posted[2]!.text).toBe("This content can't be displayed.");
  });

  it("updates and deletes the bot's messages", async () => {
    const { ts } = await client.chat.postMessage({ channel: CHANNEL, text: "draft" });
    const updated = await client.chat.update({ channel: CHANNEL, ts: ts!, text: "final" });
    expect(updated).toMatchObject({ ok: true, channel: CHANNEL, ts, text: "final" });
    expect(fake.posted()).toMatchObject([{ ts, text: "final", edits: 1 }]);
    expect(await slackError(client.chat.update({ channel: CHANNEL, ts: "1111111111.000001", text: "x" }))).toBe("message_not_found");
    const userTs = fake.userMessage({ channel: CHANNEL, user: ALICE, text: "mine" });
    expect(await slackError(client.chat.update({ channel: CHANNEL, ts: userTs, text: "x" }))).toBe("cant_update_message");

    await client.chat.delete({ channel: CHANNEL, ts: ts! });
    expect(fake.posted()).toMatchObject([{ ts, deleted: true }]);
    expect(await slackError(client.chat.update({ channel: CHANNEL, ts: ts!, text: "x" }))).toBe("message_not_found");
  });

  it("records ephemerals apart from messages", async () => {
    const res = await client.chat.postEphemeral({ channel: CHANNEL, user: ALICE, text: "only you can see this" });
    expect(res.message_ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(fake.ephemerals()).toMatchObject([{ channel: CHANNEL, user: ALICE, text: "only you can see this" }]);
    expect(fake.ephemerals("C0OTHER")).toEqual([]);
    expect(fake.posted()).toEqual([]);
  });

  it("keeps reactions per message: add, already_reacted, remove, no_reaction, message_not_found", async () => {
    const ts = fake.userMessage({ channel: DM, user: ALICE, text: "do it" });
    await client.reactions.add({ channel: DM, timestamp: ts, name: "eyes" });
    expect(await slackError(client.reactions.add({ channel: DM, timestamp: ts, name: "eyes" }))).toBe("already_reacted");
    await client.reactions.add({ channel: DM, timestamp: ts, name: "white_check_mark" });
    await client.reactions.remove({ channel: DM, timestamp: ts, name: "eyes" });
    expect(await slackError(client.reactions.remove({ channel: DM, timestamp: ts, name: "eyes" }))).toBe("no_reaction");
    expect(await slackError(client.reactions.add({ channel: DM, timestamp: "1111111111.000001", name: "eyes" }))).toBe("message_not_found");

    expect(fake.reactions(DM, ts)).toEqual(["white_check_mark"]);
    const log = fake.reactionLog();
    expect(log.map((r) => [r.op, r.name])).toEqual([
      ["add", "eyes"],
      ["add", "white_check_mark"],
      ["remove", "eyes"],
    ]);
    expect(log.every((r, i) => i === 0 || r.seq > log[i - 1]!.seq)).toBe(true);
  });

  it("records assistant statuses, and can make setStatus unavailable", async () => {
    const ts = fake.userMessage({ channel: DM, user: ALICE, text: "think" });
    await client.assistant.threads.setStatus({ channel_id: DM, thread_ts: ts, status: "is thinking…" });
    await client.assistant.threads.setStatus({ channel_id: DM, thread_ts: ts, status: "" });
    expect(fake.statuses()).toMatchObject([
      { channel_id: DM, thread_ts: ts, status: "is thinking…" },
      { channel_id: DM, thread_ts: ts, status: "" },
    ]);

    fake.setStatusAvailable(false);
    const err = await client.assistant.threads.setStatus({ channel_id: DM, thread_ts: ts, status: "x" }).catch((e: WebAPIPlatformError) => e);
    expect(err).toMatchObject({ code: ErrorCode.PlatformError, data: { ok: false, error: "missing_scope", needed: "assistant:write" } });
    fake.setStatusAvailable(false, "not_allowed_token_type");
    expect(await slackError(client.assistant.threads.setStatus({ channel_id: DM, thread_ts: ts, status: "x" }))).toBe("not_allowed_token_type");
    fake.setStatusAvailable(true);
    await client.assistant.threads.setStatus({ channel_id: DM, thread_ts: ts, status: "back" });
    expect(fake.statuses()).toHaveLength(3);
  });

  it("records suggested prompts and validates them like Slack (1 to 4, each with a title and a message)", async () => {
    const ts = fake.userMessage({ channel: DM, user: ALICE, text: "New chat" });
    const prompts = [{ title: "Ask", message: "What can you do?" }];
    await client.assistant.threads.setSuggestedPrompts({ channel_id: DM, thread_ts: ts, title: "Try:", prompts });
    expect(fake.suggestedPrompts()).toMatchObject([{ channel_id: DM, thread_ts: ts, title: "Try:", prompts }]);
    const five = Array.from({ length: 5 }, () => prompts[0]!);
    expect(await slackError(client.assistant.threads.setSuggestedPrompts({ channel_id: DM, thread_ts: ts, prompts: five }))).toBe("invalid_arguments");
    expect(await slackError(client.assistant.threads.setSuggestedPrompts({ channel_id: DM, thread_ts: ts, prompts: [{ title: "x", message: "" }] }))).toBe(
      "invalid_arguments",
    );
  });

  it("refuses posts where Slack would: not_in_channel for a channel the bot left, is_archived for an archived one", async () => {
    fake.addChannel({ id: CHANNEL, is_member: false });
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "hi" }))).toBe("not_in_channel");
    fake.addChannel({ id: CHANNEL, is_archived: true });
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "hi" }))).toBe("is_archived");
    fake.addChannel({ id: DM, is_member: false });
    await client.chat.postMessage({ channel: DM, text: "an IM is always open to its bot" });
    expect(fake.posted().map((p) => p.text)).toEqual(["an IM is always open to its bot"]);
  });

  it("answers conversations.info for channels it knows", async () => {
    fake.userMessage({ channel: DM, user: ALICE, text: "hi" });
    expect((await client.conversations.info({ channel: DM })).channel).toMatchObject({ id: DM, is_im: true, is_channel: false });
    fake.addChannel({ id: CHANNEL, name: "general" });
    expect((await client.conversations.info({ channel: CHANNEL })).channel).toMatchObject({ id: CHANNEL, is_im: false, is_channel: true, name: "general" });
    expect(await slackError(client.conversations.info({ channel: "C0NOPE" }))).toBe("channel_not_found");
  });

  it("injects failures: an error code, a predicate, and a 429 the client retries after Retry-After", async () => {
    fake.failNext("chat.postMessage", { error: "channel_not_found" });
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "a" }))).toBe("channel_not_found");
    await client.chat.postMessage({ channel: CHANNEL, text: "b" });

    fake.failWhen("chat.postMessage", (params) => (params.text === "boom" ? { error: "is_archived" } : null));
    expect(await slackError(client.chat.postMessage({ channel: CHANNEL, text: "boom" }))).toBe("is_archived");
    fake.failWhen("chat.postMessage", null);
    await client.chat.postMessage({ channel: CHANNEL, text: "boom" });

    fake.failNext("chat.postMessage", { status: 429, retryAfter: 0 });
    const retrying = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 }, logLevel: LogLevel.ERROR });
    const rateLimited: number[] = [];
    retrying.on(WebClientEvent.RATE_LIMITED, (sec: number) => rateLimited.push(sec));
    expect((await retrying.chat.postMessage({ channel: CHANNEL, text: "eventually" })).ok).toBe(true);
    expect(rateLimited).toEqual([0]);
    const attempts = fake.calls.filter((c) => c.params.text === "eventually");
    expect(attempts.map((c) => [c.status, c.response.error])).toEqual([
      [429, "ratelimited"],
      [200, undefined],
    ]);
    expect(fake.posted().map((p) => p.text)).toEqual(["b", "boom", "eventually"]);

    // Without retries the client surfaces the rate limit.
    fake.failNext("chat.postMessage", { status: 429, retryAfter: 1 });
    const strict = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
    await expect(strict.chat.postMessage({ channel: CHANNEL, text: "c" })).rejects.toMatchObject({ code: ErrorCode.RateLimitedError, retryAfter: 1 });
  });

  it("accepts JSON bodies with the token in the Authorization header", async () => {
    const post = (body: unknown, token = fake.botToken) =>
      fetch(`${fake.apiUrl}chat.postMessage`, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as Record<string, unknown> }));
    const blocks = [{ type: "section", text: { type: "plain_text", text: "hi" } }];
    expect(await post({ channel: CHANNEL, text: "hi", blocks })).toMatchObject({ status: 200, json: { ok: true, message: { blocks } } });
    expect(await post({ channel: CHANNEL, text: "hi" }, "xoxb-nope")).toEqual({ status: 200, json: { ok: false, error: "invalid_auth" } });
    expect(fake.posted()[0]!.params.blocks).toEqual(blocks);
  });

  it("waitFor resolves for calls answered before and after it was called", async () => {
    await client.chat.postMessage({ channel: CHANNEL, text: "first" });
    await expect(fake.waitFor("chat.postMessage")).resolves.toMatchObject({ params: { text: "first" } });
    const later = fake.waitFor("chat.postMessage", (p) => p.text === "second");
    await client.chat.postMessage({ channel: CHANNEL, text: "second" });
    await expect(later).resolves.toMatchObject({ status: 200, response: { ok: true } });
  });
});

// The streaming methods' rules and error names come from the method pages (docs.slack.dev/reference/methods/
// chat.startStream, chat.appendStream, chat.stopStream) and their JSON copies; what is assumed is listed at the top
// of slack/streaming.ts. client.chatStream() is @slack/web-api's own ChatStreamer, run unchanged against the fake.
describe("streaming (chat.startStream, chat.appendStream, chat.stopStream)", () => {
  const textOf = (messages: Array<{ text?: string }> | undefined) => (messages ?? []).map((m) => m.text);

  it("streams a reply into a DM thread: the text grows with each append, shows while streaming, and is final once", async () => {
    const asked = fake.userMessage({ channel: DM, user: ALICE, text: "explain streams" });
    // In an IM no recipient ids are needed ("Required when streaming to channels").
    const start = await client.chat.startStream({ channel: DM, thread_ts: asked, markdown_text: "Streams " });
    expect(start).toMatchObject({ ok: true, channel: DM, ts: expect.stringMatching(/^\d{10}\.\d{6}$/) });
    const ts = start.ts!;
    // A streamed message is a message in the thread, partial text and all, while it streams.
    expect(textOf((await client.conversations.replies({ channel: DM, ts: asked })).messages)).toEqual(["explain streams", "Streams "]);

    expect(await client.chat.appendStream({ channel: DM, ts, markdown_text: "send text " })).toMatchObject({ ok: true, channel: DM, ts });
    expect(fake.streams(DM)[0]).toMatchObject({ text: "Streams send text ", status: "streaming", mode: "markdown_text" });
    await client.chat.appendStream({ channel: DM, ts, markdown_text: "bit by bit." });
    // Editing a message that is streaming is refused (chat.update's documented streaming_state_conflict).
    expect(await slackError(client.chat.update({ channel: DM, ts, text: "edited" }))).toBe("streaming_state_conflict");

    const stop = await client.chat.stopStream({ channel: DM, ts, markdown_text: " Done." });
    expect(stop).toMatchObject({ ok: true, channel: DM, ts, message: { text: "Streams send text bit by bit. Done.", ts, thread_ts: asked, bot_id: fake.botId } });

    const [streamed] = fake.streams(DM);
    expect(streamed!.updates.map((u) => [u.method, u.markdown, u.text])).toEqual([
      ["chat.startStream", "Streams ", "Streams "],
      ["chat.appendStream", "send text ", "Streams send text "],
      ["chat.appendStream", "bit by bit.", "Streams send text bit by bit."],
      ["chat.stopStream", " Done.", "Streams send text bit by bit. Done."],
    ]);
    expect(streamed).toMatchObject({ status: "stopped", thread_ts: asked });
    expect(fake.posted(DM)).toMatchObject([{ ts, thread_ts: asked, text: "Streams send text bit by bit. Done.", stream: "stopped" }]);
    // The final text appears once, as one message of the thread; the thread's root counts it.
    expect(textOf((await client.conversations.replies({ channel: DM, ts: asked })).messages)).toEqual(["explain streams", "Streams send text bit by bit. Done."]);
    expect((await client.conversations.history({ channel: DM })).messages).toMatchObject([{ ts: asked, reply_count: 1 }]);
    // Once stopped it is an ordinary message again.
    await client.chat.update({ channel: DM, ts, text: "edited" });
  });

  it("streams into a channel thread only with recipient ids, in the chunks mode it started with", async () => {
    const asked = fake.userMessage({ channel: CHANNEL, user: ALICE, text: "<@U0BOT> summarize" });
    const recipient = { recipient_team_id: fake.teamId, recipient_user_id: ALICE };
    expect(await slackError(client.chat.startStream({ channel: CHANNEL, thread_ts: asked, markdown_text: "x" }))).toBe("missing_recipient_team_id");
    expect(await slackError(client.chat.startStream({ channel: CHANNEL, thread_ts: asked, recipient_team_id: fake.teamId, markdown_text: "x" }))).toBe(
      "missing_recipient_user_id",
    );
    // thread_ts is required (method page's JSON copies; @slack/web-api's types); its absence answers invalid_arguments (assumed).
    expect(await slackError(client.apiCall("chat.startStream", { channel: CHANNEL, ...recipient, markdown_text: "x" }))).toBe("invalid_arguments");
    expect(await slackError(client.chat.startStream({ channel: CHANNEL, thread_ts: "1111111111.000001", ...recipient }))).toBe("thread_not_found");
    expect(
      await slackError(
        client.apiCall("chat.startStream", { channel: CHANNEL, thread_ts: asked, ...recipient, markdown_text: "a", chunks: [{ type: "markdown_text", text: "b" }] }),
      ),
    ).toBe("cannot_provide_both_markdown_text_and_chunks");
    expect(await slackError(client.apiCall("chat.startStream", { channel: CHANNEL, thread_ts: asked, ...recipient, chunks: [{ type: "sparkles" }] }))).toBe(
      "invalid_chunks",
    );
    expect(await slackError(client.chat.startStream({ channel: CHANNEL, thread_ts: asked, ...recipient, markdown_text: "m".repeat(12_001) }))).toBe("msg_too_long");
    expect(fake.streams()).toEqual([]);

    const { ts } = await client.chat.startStream({ channel: CHANNEL, thread_ts: asked, ...recipient, chunks: [{ type: "markdown_text", text: "Reading the thread. " }] });
    const task = { type: "task_update" as const, id: "t1", title: "Read 12 messages", status: "complete" as const };
    await client.chat.appendStream({ channel: CHANNEL, ts: ts!, chunks: [task, { type: "markdown_text", text: "Three decisions were made." }] });
    // "If you started the stream with `chunks`, you must append with `chunks`."
    expect(await slackError(client.chat.appendStream({ channel: CHANNEL, ts: ts!, markdown_text: "mixed" }))).toBe("streaming_mode_mismatch");
    const feedback = [{ type: "context" as const, elements: [{ type: "mrkdwn" as const, text: "Was this useful?" }] }];
    await client.chat.stopStream({ channel: CHANNEL, ts: ts!, blocks: feedback });

    expect(fake.streams(CHANNEL)).toMatchObject([
      { ts, thread_ts: asked, text: "Reading the thread. Three decisions were made.", status: "stopped", mode: "chunks", blocks: feedback, ...recipient },
    ]);
    expect(fake.streams(CHANNEL)[0]!.updates[1]!.chunks).toEqual([task, { type: "markdown_text", text: "Three decisions were made." }]);

    fake.addChannel({ id: "C0LEFT", is_member: false });
    const elsewhere = fake.userMessage({ channel: "C0LEFT", user: ALICE, text: "hi" });
    expect(await slackError(client.chat.startStream({ channel: "C0LEFT", thread_ts: elsewhere, ...recipient, markdown_text: "x" }))).toBe("not_in_channel");
  });

  it("refuses appends and stops to a stream that ended, to unknown messages and to messages that never streamed", async () => {
    const asked = fake.userMessage({ channel: DM, user: ALICE, text: "go" });
    const { ts } = await client.chat.startStream({ channel: DM, thread_ts: asked, markdown_text: "one" });
    expect(await slackError(client.apiCall("chat.appendStream", { channel: DM, ts }))).toBe("markdown_text_or_chunks_required");
    expect(await slackError(client.apiCall("chat.appendStream", { channel: DM, markdown_text: "x" }))).toBe("invalid_arguments");
    await client.chat.stopStream({ channel: DM, ts: ts! });

    expect(await slackError(client.chat.appendStream({ channel: DM, ts: ts!, markdown_text: " two" }))).toBe("message_not_in_streaming_state");
    expect(await slackError(client.chat.stopStream({ channel: DM, ts: ts! }))).toBe("message_not_in_streaming_state");
    expect(await slackError(client.chat.appendStream({ channel: DM, ts: "1111111111.000001", markdown_text: "x" }))).toBe("message_not_found");
    expect(await slackError(client.chat.appendStream({ channel: DM, ts: asked, markdown_text: "x" }))).toBe("message_not_owned_by_app");
    const plain = await client.chat.postMessage({ channel: DM, text: "not streamed", thread_ts: asked });
    expect(await slackError(client.chat.appendStream({ channel: DM, ts: plain.ts!, markdown_text: "x" }))).toBe("message_not_in_streaming_state");
    expect(fake.streams(DM)).toMatchObject([{ text: "one", status: "stopped" }]);
    expect(fake.streams(DM)[0]!.updates).toHaveLength(2);
  });

  it("answers stopped_by_user after the user pressed Stop, and message_not_in_streaming_state after expiry", async () => {
    const asked = fake.userMessage({ channel: DM, user: ALICE, text: "long task" });
    const first = await client.chat.startStream({ channel: DM, thread_ts: asked, markdown_text: "Working" });
    fake.endStream(DM, first.ts!, "stopped_by_user");
    expect(await slackError(client.chat.appendStream({ channel: DM, ts: first.ts!, markdown_text: "…" }))).toBe("stopped_by_user");
    expect(await slackError(client.chat.stopStream({ channel: DM, ts: first.ts! }))).toBe("message_not_in_streaming_state");

    const second = await client.chat.startStream({ channel: DM, thread_ts: asked, markdown_text: "Again" });
    fake.endStream(DM, second.ts!, "expired");
    expect(await slackError(client.chat.appendStream({ channel: DM, ts: second.ts!, markdown_text: "…" }))).toBe("message_not_in_streaming_state");
    expect(fake.streams(DM).map((s) => [s.text, s.status])).toEqual([
      ["Working", "stopped_by_user"],
      ["Again", "expired"],
    ]);
    expect(() => fake.endStream(DM, second.ts!, "expired")).toThrow(/not a message that is streaming/);
  });

  it("runs client.chatStream(): buffers below buffer_size, starts on the first flush, appends, stops with the rest", async () => {
    const asked = fake.userMessage({ channel: CHANNEL, user: ALICE, text: "<@U0BOT> a haiku please" });
    const streamer = client.chatStream({ channel: CHANNEL, thread_ts: asked, recipient_team_id: fake.teamId, recipient_user_id: ALICE, buffer_size: 16 });
    const visible = () => fake.streams(CHANNEL)[0]?.text;
    const streamCalls = () => fake.calls.filter((c) => c.method.endsWith("Stream")).map((c) => c.method);

    expect(await streamer.append({ markdown_text: "An old " })).toBeNull(); // 7 < 16 characters: only buffered
    expect([visible(), streamer.ts, streamCalls()]).toEqual([undefined, undefined, []]);
    await streamer.append({ markdown_text: "silent pond... " }); // 22 ≥ 16: chat.startStream with the buffer as a chunk
    expect(visible()).toBe("An old silent pond... ");
    expect(fake.calls.at(-1)).toMatchObject({ method: "chat.startStream", params: { chunks: [{ type: "markdown_text", text: "An old silent pond... " }] } });
    expect(streamer.ts).toBe(fake.streams(CHANNEL)[0]!.ts);

    await streamer.append({ markdown_text: "A frog " });
    expect(visible()).toBe("An old silent pond... ");
    await streamer.append({ markdown_text: "jumps into the pond, " });
    expect(visible()).toBe("An old silent pond... A frog jumps into the pond, ");

    const feedback = [{ type: "context" as const, elements: [{ type: "mrkdwn" as const, text: "Liked it?" }] }];
    const stopped = await streamer.stop({ markdown_text: "splash! Silence again.", blocks: feedback });
    const final = "An old silent pond... A frog jumps into the pond, splash! Silence again.";
    expect(stopped).toMatchObject({ ok: true, message: { text: final } });
    expect(streamCalls()).toEqual(["chat.startStream", "chat.appendStream", "chat.stopStream"]);
    expect(fake.streams(CHANNEL)).toMatchObject([{ text: final, status: "stopped", mode: "chunks", blocks: feedback, recipient_user_id: ALICE }]);
    expect(fake.streams(CHANNEL)[0]!.updates.map((u) => u.text)).toEqual(["An old silent pond... ", "An old silent pond... A frog jumps into the pond, ", final]);
    const thread = textOf((await client.conversations.replies({ channel: CHANNEL, ts: asked })).messages);
    expect(thread).toEqual(["<@U0BOT> a haiku please", final]);
    await expect(streamer.append({ markdown_text: "more" })).rejects.toThrow(/stream state is completed/);
  });

  it("runs client.chatStream() for a short answer: stop() starts the stream empty and sends everything at stop", async () => {
    const asked = fake.userMessage({ channel: DM, user: ALICE, text: "yes or no?" });
    const streamer = client.chatStream({ channel: DM, thread_ts: asked });
    await streamer.append({ markdown_text: "Yes." });
    await streamer.stop();
    expect(fake.calls.filter((c) => c.method.endsWith("Stream")).map((c) => [c.method, c.params.chunks])).toEqual([
      ["chat.startStream", undefined],
      ["chat.stopStream", [{ type: "markdown_text", text: "Yes." }]],
    ]);
    expect(fake.streams(DM)).toMatchObject([{ text: "Yes.", status: "stopped", mode: "chunks" }]);
    expect(fake.streams(DM)[0]!.updates.map((u) => u.text)).toEqual(["", "Yes."]);
  });

  it("pages conversations.replies and conversations.history with Slack's cursors", async () => {
    const root = fake.userMessage({ channel: CHANNEL, user: ALICE, text: "root" });
    for (const text of ["a", "b"]) await client.chat.postMessage({ channel: CHANNEL, text, thread_ts: root });
    const first = await client.conversations.replies({ channel: CHANNEL, ts: root, limit: 2 });
    expect(first).toMatchObject({
      has_more: true,
      messages: [
        { text: "root", reply_count: 2 },
        { text: "a", parent_user_id: ALICE },
      ],
    });
    const rest = await client.conversations.replies({ channel: CHANNEL, ts: root, limit: 2, cursor: first.response_metadata!.next_cursor! });
    expect([textOf(rest.messages), rest.has_more]).toEqual([["b"], false]);
    await client.chat.postMessage({ channel: CHANNEL, text: "later" });
    expect(textOf((await client.conversations.history({ channel: CHANNEL })).messages)).toEqual(["later", "root"]);
    expect(await slackError(client.conversations.replies({ channel: CHANNEL, ts: "1111111111.000001" }))).toBe("thread_not_found");
    expect(await slackError(client.conversations.history({ channel: CHANNEL, cursor: "bm9wZQ==" }))).toBe("invalid_cursor");
    expect(await slackError(client.conversations.history({ channel: "C0NOPE" }))).toBe("channel_not_found");
  });

  it("shows a conversation as its members see it: a thread or the top level, edits applied, deleted ones gone, streams with their state", async () => {
    const root = fake.userMessage({ channel: CHANNEL, user: ALICE, text: "<@U0BOT> plan" });
    const recipient = { recipient_team_id: fake.teamId, recipient_user_id: ALICE };
    const half = (await client.chat.startStream({ channel: CHANNEL, thread_ts: root, markdown_text: "Rome is", ...recipient })).ts!;
    const notice = (await client.chat.postMessage({ channel: CHANNEL, text: "one moment", thread_ts: root })).ts!;
    const gone = (await client.chat.postMessage({ channel: CHANNEL, text: "a second copy", thread_ts: root })).ts!;
    await client.chat.delete({ channel: CHANNEL, ts: gone });
    await client.chat.postMessage({ channel: CHANNEL, text: "elsewhere" });
    expect(fake.visible(CHANNEL, root)).toEqual([
      { ts: root, fromBot: false, text: "<@U0BOT> plan" },
      { ts: half, fromBot: true, text: "Rome is", stream: "streaming" },
      { ts: notice, fromBot: true, text: "one moment" },
    ]);
    await client.chat.stopStream({ channel: CHANNEL, ts: half });
    await client.chat.update({ channel: CHANNEL, ts: half, text: "Rome is warm." });
    expect(fake.visible(CHANNEL, root)[1]).toEqual({ ts: half, fromBot: true, text: "Rome is warm.", stream: "stopped" });
    expect(fake.visible(CHANNEL).map((m) => m.text)).toEqual(["<@U0BOT> plan", "elsewhere"]);
    expect(fake.visible("C0NOPE")).toEqual([]);
  });
});

describe("rate limits (opt-in)", () => {
  let now = 1_700_000_000_000;
  let limited: FakeSlack;
  let strict: WebClient;

  beforeAll(async () => {
    limited = await startFakeSlack({ clock: () => now });
  });
  afterAll(async () => {
    await limited.close();
  });
  beforeEach(() => {
    limited.reset();
    strict = new WebClient(limited.botToken, { slackApiUrl: limited.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logger: quiet });
  });

  it("limits chat.update to its Tier 3 budget (50 a minute) with 429, Retry-After and ratelimited", async () => {
    const { ts } = await strict.chat.postMessage({ channel: CHANNEL, text: "0" });
    for (let i = 1; i <= 60; i++) await strict.chat.update({ channel: CHANNEL, ts: ts!, text: String(i) }); // off by default
    limited.rateLimit("chat.update");
    for (let i = 1; i <= 50; i++) {
      await strict.chat.update({ channel: CHANNEL, ts: ts!, text: `limited ${i}` });
      now += 100;
    }
    // The 51st within the minute: the oldest call leaves the window 55 s from now.
    await expect(strict.chat.update({ channel: CHANNEL, ts: ts!, text: "too many" })).rejects.toMatchObject({ code: ErrorCode.RateLimitedError, retryAfter: 55 });
    // The answer failNext({ status: 429 }) injects; a retrying client would wait Retry-After in real seconds (the
    // "injects failures" test shows that path with Retry-After: 0), so this client rejects instead.
    expect(limited.calls.at(-1)).toMatchObject({ method: "chat.update", status: 429, response: { ok: false, error: "ratelimited" } });
    expect(limited.posted()).toMatchObject([{ text: "limited 50" }]);
    // Other methods are not limited by it.
    await strict.chat.postMessage({ channel: CHANNEL, text: "still fine" });

    now += 55_000;
    await strict.chat.update({ channel: CHANNEL, ts: ts!, text: "after the wait" });
    expect(limited.posted()[0]!.text).toBe("after the wait");
  });

  it("can hold edits to one message to one a second (not documented for chat.update: opt-in)", async () => {
    const a = (await strict.chat.postMessage({ channel: CHANNEL, text: "a" })).ts!;
    const b = (await strict.chat.postMessage({ channel: CHANNEL, text: "b" })).ts!;
    limited.rateLimit("chat.update", { perMessagePerSecond: 1 });
    await strict.chat.update({ channel: CHANNEL, ts: a, text: "a1" });
    await expect(strict.chat.update({ channel: CHANNEL, ts: a, text: "a2" })).rejects.toMatchObject({ code: ErrorCode.RateLimitedError, retryAfter: 1 });
    await strict.chat.update({ channel: CHANNEL, ts: b, text: "b1" });
    now += 1000;
    await strict.chat.update({ channel: CHANNEL, ts: a, text: "a2" });
    expect(limited.posted().map((p) => p.text)).toEqual(["a2", "b1"]);
    expect(() => limited.rateLimit("chat.postMessage")).toThrow(/no documented tier/);
  });
});

describe("signed requests", () => {
  const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

  it("signs bodies the way Bolt's verifier checks them", async () => {
    const seen: Array<{ ok: boolean; error?: string; retryNum?: string }> = [];
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        try {
          verifySlackRequest({
            signingSecret: SECRET,
            body: Buffer.concat(chunks).toString("utf8"),
            headers: {
              "x-slack-signature": String(req.headers["x-slack-signature"]),
              "x-slack-request-timestamp": Number(req.headers["x-slack-request-timestamp"]),
            },
          });
          seen.push({ ok: true, ...(req.headers["x-slack-retry-num"] !== undefined && { retryNum: String(req.headers["x-slack-retry-num"]) }) });
          res.writeHead(200).end("ok");
        } catch (err) {
          seen.push({ ok: false, error: (err as Error).message });
          res.writeHead(401).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    try {
      const body = eventCallback(appMention({ channel: CHANNEL, user: ALICE, text: "<@U0BOT> hi", ts: "1700000000.000100" }));
      expect((await sendSigned(url, body, "application/json", { secret: SECRET, retryNum: 1, retryReason: "http_timeout" })).status).toBe(200);
      const form = slashCommand({ command: "/ask", text: "what's up & why?", user_id: ALICE, channel_id: CHANNEL });
      expect((await sendSigned(url, form, "application/x-www-form-urlencoded", { secret: SECRET })).status).toBe(200);
      expect((await sendSigned(url, interactivity({ type: "block_actions", actions: [] }), "application/x-www-form-urlencoded", { secret: SECRET })).status).toBe(200);
      expect((await sendSigned(url, body, "application/json", { secret: SECRET, badSignature: true })).status).toBe(401);
      expect((await sendSigned(url, body, "application/json", { secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 301 })).status).toBe(401);
      expect(seen).toMatchObject([
        { ok: true, retryNum: "1" },
        { ok: true },
        { ok: true },
        { ok: false, error: expect.stringContaining("signature mismatch") },
        { ok: false, error: expect.stringContaining("stale") },
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // Slack's documented example: https://docs.slack.dev/authentication/verifying-requests-from-slack
    const documented =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar" +
      "&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com" +
      "%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    expect(signature("8f742231b10e8888abcd99yyyzzz85a5", 1531420618, documented)).toBe("v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503");
  });

  it("builds slash commands and messages the way Slack sends them", () => {
    const form = new URLSearchParams(slashCommand({ command: "/ask", text: "a b", user_id: ALICE, channel_id: CHANNEL, response_url: "http://x/response/1" }));
    expect(Object.fromEntries(form)).toMatchObject({
      command: "/ask",
      text: "a b",
      user_id: ALICE,
      channel_id: CHANNEL,
      team_id: "T0TEST",
      response_url: "http://x/response/1",
    });
    expect(messageEvent({ channel: DM, user: ALICE, text: "hi", ts: "1700000000.000100", channel_type: "im" })).toMatchObject({
      type: "message",
      channel_type: "im",
      user: ALICE,
      event_ts: "1700000000.000100",
      client_msg_id: expect.any(String),
    });
    const envelope = JSON.parse(eventCallback({ type: "message" }, { eventId: "Ev1" })) as Record<string, unknown>;
    expect(envelope).toMatchObject({ type: "event_callback", event_id: "Ev1", team_id: "T0TEST", authorizations: [{ user_id: "U0BOT", is_bot: true }] });
  });

  describe("a real Bolt App", () => {
    let app: App;
    let url: string;
    const mentions: string[] = [];

    beforeAll(async () => {
      app = new App({ signingSecret: SECRET, token: fake.botToken, clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } }, logLevel: LogLevel.ERROR });
      app.event("app_mention", async ({ event, say }) => {
        mentions.push(event.text);
        await say({ text: `you said: ${event.text}`, thread_ts: event.thread_ts ?? event.ts });
      });
      app.command("/ask", async ({ command, ack, respond }) => {
        await ack();
        await respond({ text: `answer to ${command.text}`, response_type: "ephemeral" });
      });
      const server = await app.start(0);
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    });
    afterAll(async () => {
      await app.stop();
    });

    it("handles a signed app_mention and replies in the thread through the fake", async () => {
      const ts = fake.userMessage({ channel: CHANNEL, user: ALICE, text: "<@U0BOT> ping" });
      const res = await sendSigned(url, eventCallback(appMention({ channel: CHANNEL, user: ALICE, text: "<@U0BOT> ping", ts })), "application/json", { secret: SECRET });
      expect(res.status).toBe(200);
      await fake.waitFor("chat.postMessage");
      expect(mentions).toEqual(["<@U0BOT> ping"]);
      expect(fake.posted()).toMatchObject([{ channel: CHANNEL, thread_ts: ts, text: "you said: <@U0BOT> ping" }]);
    });

    it("answers a slash command through a response_url on the fake", async () => {
      const body = slashCommand({ command: "/ask", text: "life", user_id: ALICE, channel_id: CHANNEL, response_url: fake.responseUrl() });
      expect((await sendSigned(url, body, "application/x-www-form-urlencoded", { secret: SECRET })).status).toBe(200);
      await fake.waitFor("response_url");
      expect(fake.responses()).toMatchObject([{ body: { text: "answer to life", response_type: "ephemeral" } }]);
    });

    it("rejects a bad signature and a stale timestamp with 401, and answers url_verification", async () => {
      const body = eventCallback(appMention({ channel: CHANNEL, user: ALICE, text: "<@U0BOT> x", ts: "1700000000.000100" }));
      expect((await sendSigned(url, body, "application/json", { secret: SECRET, badSignature: true })).status).toBe(401);
      const stale = Math.floor(Date.now() / 1000) - 6 * 60;
      expect((await sendSigned(url, body, "application/json", { secret: SECRET, timestamp: stale })).status).toBe(401);
      const verification = await sendSigned(url, urlVerification("challenge-123"), "application/json", { secret: SECRET });
      expect(verification.status).toBe(200);
      expect(JSON.parse(verification.body)).toEqual({ challenge: "challenge-123" });
      expect(mentions).toHaveLength(1);
    });
  });
});
