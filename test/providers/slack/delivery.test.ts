// Replies Slack refuses: the real error bodies of the Web API (HTTP 200 `{ok:false,error}`, a 429 with Retry-After)
// from the fake, met by the real @slack/web-api client inside the real Bolt adapter, and what the gateway's outbox
// does with them (undeliverable once; a platform wait honoured instead of a quick retry).
import { describe, expect, it } from "vitest";
import { slackSessionKey } from "../../../providers/slack/inbound.js";
import { DeliveryError, type DeliveryReceipt, type OutboundMessage } from "../../../src/gateway/types.js";
import { text } from "../../fakes/anthropic/server.js";
import { eventBody } from "../../fixtures/slack/load.js";
import { heldStep } from "../../helpers/deferred.js";
import { ALICE, BOT, CHANNEL, DM, TEAM, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();

const posts = () => world.slack.calls.filter((c) => c.method === "chat.postMessage");

/** A reply for the sink to deliver by itself, as the outbox hands it over. */
function outbound(sessionKey: string, body = "Hello."): OutboundMessage {
  return { id: "out_1", sessionKey, requestId: null, agent: "main", depth: 1, text: body, kind: "message" };
}

function receipt(): DeliveryReceipt & { sent: Array<[number, string]> } {
  const sent: Array<[number, string]> = [];
  return { sentChunks: new Set(), chunkSent: async (i, id) => void sent.push([i, id]), sent };
}

async function deliveryError(promise: Promise<unknown>): Promise<DeliveryError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

describe("permanent refusals", () => {
  it("a reply to a channel the bot was removed from is marked undeliverable once and not sent again after a restart", async () => {
    const first = await world.run();
    const held = heldStep<ReturnType<typeof text>>();
    world.model.script(held.step);
    const root = "1700000001.000100";
    world.known(CHANNEL, ALICE, `<@${BOT}> report`, root);
    await first.send(eventBody("app_mention", { ts: root, event_ts: root, text: `<@${BOT}> report` }));
    await held.entered;
    // While the model works, someone removes the bot from the channel: Slack now answers not_in_channel.
    world.slack.addChannel({ id: CHANNEL, is_member: false });
    held.release(text("Here is the report."));
    await first.h.gateway.idle();
    const key = slackSessionKey(TEAM, CHANNEL, root);
    expect(posts().map((c) => c.response)).toEqual([{ ok: false, error: "not_in_channel" }]);
    expect(await first.h.store.outbox.undeliverable(key)).toEqual([expect.objectContaining({ text: "Here is the report.", failure: "not_in_channel" })]);

    await world.stopProviders();
    const second = await world.run();
    await second.h.gateway.idle();
    expect(posts()).toHaveLength(1);
    expect(await second.h.store.outbox.pending(key)).toEqual([]);
  });

  it.each(["not_in_channel", "channel_not_found", "is_archived", "account_inactive"])("the sink reports Slack's %s as a permanent DeliveryError", async (code) => {
    const { bot } = await world.run();
    world.slack.failNext("chat.postMessage", { error: code });
    const error = await deliveryError(bot.sink.deliver(outbound(slackSessionKey(TEAM, CHANNEL, "1700000001.000100")), receipt()));
    expect(error.disposition).toEqual({ kind: "permanent", reason: code });
  });

  it.each(["invalid_auth", "token_revoked"])("treats %s as the token's problem, not the reply's: it stays pending for a new token", async (code) => {
    const { bot } = await world.run();
    world.slack.failNext("chat.postMessage", { error: code });
    const error = await bot.sink.deliver(outbound(slackSessionKey(TEAM, DM)), receipt()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(DeliveryError);
    expect(error).toMatchObject({ code: "slack_webapi_platform_error", data: { error: code } });
  });
});

describe("rate limits", () => {
  it("a Retry-After beyond the retry budget becomes DeliveryError retry_after at once, without waiting here", async () => {
    const waits: number[] = [];
    const { bot } = await world.run({ maxRetries: 3, sleep: async (ms) => void waits.push(ms) });
    world.slack.failNext("chat.postMessage", { status: 429, retryAfter: 120 });
    const error = await deliveryError(bot.sink.deliver(outbound(slackSessionKey(TEAM, DM)), receipt()));
    expect(error.disposition).toEqual({ kind: "retry_after", ms: 120_000 });
    expect(waits).toEqual([]);
    expect(posts().map((c) => c.status)).toEqual([429]);
  });

  it("a Retry-After within the budget is waited out and the reply goes through", async () => {
    const waits: number[] = [];
    const { bot } = await world.run({ maxRetries: 2, sleep: async (ms) => void waits.push(ms) });
    world.slack.failNext("chat.postMessage", { status: 429, retryAfter: 2 });
    const r = receipt();
    await bot.sink.deliver(outbound(slackSessionKey(TEAM, DM)), r);
    expect(waits).toEqual([2000]);
    expect(posts().map((c) => c.status)).toEqual([429, 200]);
    expect(r.sent).toHaveLength(1);
    expect(world.slack.posted(DM).map((p) => p.text)).toEqual(["Hello."]);
  });

  it("a long rate limit on a reply is not hammered with quick retries: the outbox waits what Slack asked", async () => {
    const { send, h } = await world.run({ maxRetries: 0 });
    world.model.script(text("Hello."));
    world.slack.failNext("chat.postMessage", { status: 429, retryAfter: 30 });
    const ts = "1700000001.000100";
    world.known(DM, ALICE, "hi", ts);
    await send(eventBody("message.im", { ts, event_ts: ts, text: "hi" }));
    await world.slack.waitFor("chat.postMessage");
    await h.gateway.idle();
    // retryBaseMs is 1 ms in tests: a plain failure would have been retried (and posted) by now.
    expect(posts().map((c) => c.status)).toEqual([429]);
    expect((await h.store.outbox.pending(slackSessionKey(TEAM, DM))).map((o) => o.text)).toEqual(["Hello."]);
  });
});
