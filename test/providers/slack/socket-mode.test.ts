// The Slack provider in Socket Mode end to end: a real Bolt app with its Socket Mode client, which calls
// apps.connections.open on the fake Web API and connects to the fake's WebSocket endpoint, with the real
// gateway and runtime and the strict fake Messages API. The conversations are the HTTP-mode tests' own.
import type { Writable } from "node:stream";
import { WebClient, type WebAPIPlatformError } from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { SlackProvider, type SlackOptions } from "../../../providers/slack/slack.js";
import { createLogger } from "../../../src/log.js";
import type { Tool } from "../../../src/runtime/tools/tool.js";
import { lastUserText, reply, text, toolUse, type FakeReply } from "../../fakes/anthropic/server.js";
import { messageEvent } from "../../fakes/slack/events.js";
import { startFakeSlack, type FakeSlack, type Posted } from "../../fakes/slack/server.js";
import { startFakeSocketMode, type FakeSocketMode } from "../../fakes/slack/socket-mode.js";
import { heldStep } from "../../helpers/deferred.js";
import { skillFile } from "../../helpers/harness.js";
import { ProviderWorld } from "../../helpers/provider-world.js";
import { ALICE, BOB, CHANNEL, DM, nthPost as nthPostIn, providerOptions, said as saidIn } from "../../helpers/slack-world.js";
import { transferTool } from "../../helpers/tools.js";

interface SocketSlack {
  slack: FakeSlack;
  socket: FakeSocketMode;
  close(): Promise<void>;
}

async function startSocketSlack(): Promise<SocketSlack> {
  const slack = await startFakeSlack();
  const socket = await startFakeSocketMode(slack);
  return {
    slack,
    socket,
    close: async () => {
      await socket.close();
      await slack.close();
    },
  };
}

class SocketWorld extends ProviderWorld<SocketSlack, SlackProvider> {
  get slack(): FakeSlack {
    return this.platform.slack;
  }

  get socket(): FakeSocketMode {
    return this.platform.socket;
  }

  /** A bot in Socket Mode (appToken set, no signing secret) on a new harness with an "interview" skill; started means connected. */
  async boot(options: Partial<SlackOptions> = {}, tools: Tool[] = []) {
    const h = await this.harness({ files: skillFile("interview", "Ask."), tools });
    const bot = new SlackProvider(h.gateway, providerOptions(this.slack, { appToken: this.socket.appToken }, options));
    await bot.start();
    this.started(h, bot);
    await h.gateway.recover();
    return { h, bot };
  }
}

const world = new SocketWorld(startSocketSlack, "switchboard-slack-socket-");
const BOB_DM = "D0BOB";

/** Protocol errors a test provokes on purpose; any other one fails the test. */
let expectedErrors: RegExp[] = [];
beforeEach(() => {
  expectedErrors = [];
});
afterEach(() => {
  // Whatever the client sent that Slack would refuse (a bad ack, a spent ticket) fails the test that caused it.
  expect(world.socket.errors()).toEqual(expectedErrors.map((e) => expect.stringMatching(e)));
});

const said = (o: Parameters<typeof saidIn>[1]) => saidIn(world.slack, o);
const nthPost = (n: number, channel = CHANNEL) => nthPostIn(world.slack, n, channel);

const opens = () => world.slack.calls.filter((c) => c.method === "apps.connections.open" && c.status === 200);

/** The block_actions payload Slack sends over the socket when `user` clicks button `actionId` of a bot message. */
function click(message: Posted, actionId: string, user: string) {
  const actions = (message.blocks as Array<{ type: string; elements?: Array<{ action_id: string; value: string }> }>).find((b) => b.type === "actions")!;
  const button = actions.elements!.find((e) => e.action_id === actionId)!;
  return world.socket.interactive({
    type: "block_actions",
    team: { id: world.slack.teamId, domain: "test-team" },
    user: { id: user, username: user.toLowerCase(), team_id: world.slack.teamId },
    api_app_id: "A0TEST",
    token: "fake-verification-token",
    trigger_id: `tr-${user}-${message.ts}`,
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
    channel: { id: message.channel, name: message.channel.toLowerCase() },
    message: { type: "message", text: message.text, ts: message.ts, user: world.slack.botUserId, bot_id: world.slack.botId },
    response_url: world.slack.responseUrl(),
    actions: [{ action_id: button.action_id, block_id: "b", value: button.value, type: "button", action_ts: "1700000000.000001" }],
  });
}

describe("connecting", () => {
  it("opens the socket with the app-level token through SLACK_API_URL and is greeted before it counts as started", async () => {
    await world.boot();
    expect(world.socket.connections()).toBe(1);
    const [open] = opens();
    expect(open!.response).toMatchObject({ ok: true, url: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=/) });
    expect(world.slack.calls.find((c) => c.method === "auth.test")?.response).toMatchObject({ ok: true });
  });

  it("the fake's apps.connections.open takes only the app-level token, and each URL opens one connection", async () => {
    const open = (token: string) => new WebClient(token, { slackApiUrl: world.slack.apiUrl, retryConfig: { retries: 0 } }).apps.connections.open();
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: unknown) => (e as WebAPIPlatformError).data.error,
      );
    expect(await refusal(open("xapp-1-wrong"))).toBe("invalid_auth");
    expect(await refusal(open(world.slack.botToken))).toBe("not_allowed_token_type");
    const { url } = await open(world.socket.appToken);
    const first = await rawClient(url!);
    expect(await first.next()).toMatchObject({ type: "hello", num_connections: 1, connection_info: { app_id: "A0TEST" } });
    await expect(rawClient(url!)).rejects.toThrow(/401/);
    expectedErrors = [/spent ticket/];
    first.ws.close();
  });

  it("the fake sends an envelope left unacked on a closed connection again on the next one, retry_attempt + 1", async () => {
    const open = () => new WebClient(world.socket.appToken, { slackApiUrl: world.slack.apiUrl, retryConfig: { retries: 0 } }).apps.connections.open();
    const first = await rawClient((await open()).url!);
    await first.next(); // hello
    const delivery = world.socket.event(messageEvent({ channel: DM, user: ALICE, text: "hi", ts: "1700000000.000100", channel_type: "im" }), { eventId: "Ev9" });
    expect(await first.next()).toMatchObject({
      envelope_id: delivery.envelopeId,
      type: "events_api",
      retry_attempt: 0,
      retry_reason: "",
      payload: { type: "event_callback", event_id: "Ev9" },
    });
    await world.socket.disconnect("warning");
    const second = await rawClient((await open()).url!);
    await second.next(); // hello
    expect(await second.next()).toMatchObject({ envelope_id: delivery.envelopeId, retry_attempt: 1, retry_reason: "timeout", payload: { event_id: "Ev9" } });
    second.ws.send(JSON.stringify({ envelope_id: delivery.envelopeId }));
    expect(await delivery.acked).toEqual({ envelope_id: delivery.envelopeId, connection: 2 });
    second.ws.close();
  });
});

/** A bare WebSocket client of the fake endpoint: `next()` is the next JSON message it received. */
async function rawClient(url: string) {
  const ws = new WebSocket(url);
  const inbox: unknown[] = [];
  const waiting: Array<(m: unknown) => void> = [];
  ws.on("message", (data) => {
    const message: unknown = JSON.parse(String(data as Buffer)); // a Buffer, as ws gives unless binaryType is changed
    const w = waiting.shift();
    if (w) w(message);
    else inbox.push(message);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, next: () => (inbox.length > 0 ? Promise.resolve(inbox.shift()) : new Promise<unknown>((resolve) => waiting.push(resolve))) };
}

describe("conversations over the socket", () => {
  it("answers a DM and acks its envelope", async () => {
    await world.boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })), text("Where **to**?"));
    const delivery = world.socket.event(said({ channel: DM, user: ALICE, text: "plan a trip", im: true }).event);
    expect(await delivery.acked).toEqual({ envelope_id: delivery.envelopeId, payload: {}, connection: 1 });
    expect(await nthPost(1, DM)).toMatchObject({ text: "*🧩 interview*\nWhere *to*?" });
    expect(world.model.rejected()).toEqual([]);
  });

  it("a channel mention is answered in a thread and the owner continues there without mentioning the bot", async () => {
    await world.boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Where to?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> plan a trip`, mention: true });
    await world.socket.event(root.event).acked;
    expect(await nthPost(1)).toMatchObject({ thread_ts: root.ts, text: "*🧩 interview*\nWhere to?" });
    expect(lastUserText(world.model.accepted()[0]!)).toBe("plan a trip");

    world.model.script(reply(toolUse("complete", { result: "Rome" })), text("Rome it is."));
    await world.socket.event(said({ channel: CHANNEL, user: ALICE, text: "Rome", thread: root.ts }).event).acked;
    expect(await nthPost(2)).toMatchObject({ thread_ts: root.ts, text: "Rome it is." });
    expect(world.slack.posted(CHANNEL).every((p) => p.thread_ts === root.ts)).toBe(true);
  });

  it("/switchboard status is acked and answered in the thread of the user's running task", async () => {
    const { h } = await world.boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> go`, mention: true });
    await world.socket.event(root.event).acked;
    await nthPost(1);
    await h.gateway.idle();
    const command = world.socket.command({ command: "/switchboard", text: "status", user_id: ALICE, channel_id: CHANNEL });
    expect((await command.acked).envelope_id).toBe(command.envelopeId);
    const status = await nthPost(2);
    expect(status.thread_ts).toBe(root.ts);
    expect(status.text).toMatch(/^main → skill:interview \(iteration \d+\/\d+\)\ntask \S+: waiting user$/);
    expect(world.slack.responses()).toEqual([]);
    expect(world.model.calls).toHaveLength(2);
  });

  it("an Approve click (interactive envelope) runs the tool once for the owner; others are told privately", async () => {
    const runs: string[] = [];
    const { h } = await world.boot({}, [transferTool(runs)]);
    world.model.script(reply(toolUse("transfer", { amount: 5 })), text("Done, sent."));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> send 5`, mention: true });
    await world.socket.event(root.event).acked;
    const prompt = await nthPost(1);
    expect(prompt.thread_ts).toBe(root.ts);

    await click(prompt, "switchboard_approve", BOB).acked;
    await world.slack.waitFor("response_url");
    expect(JSON.stringify(world.slack.responses())).toContain("Only the person who started this task can approve or deny its tool calls.");
    await click(prompt, "switchboard_approve", ALICE).acked;
    expect((await nthPost(2)).text).toBe("Done, sent.");
    await h.gateway.idle();
    expect(runs).toEqual(["sent"]);
    await world.slack.waitFor("chat.update");
    expect(world.slack.posted(CHANNEL)[0]!.text).toMatch(new RegExp(`— approved by <@${ALICE}>$`));
  });

  it("processes an envelope Slack redelivers (retry_attempt 1) only once, acking both deliveries", async () => {
    const { h } = await world.boot();
    world.model.script(text("once"));
    const first = world.socket.event(said({ channel: DM, user: ALICE, text: "hi", im: true }).event, { eventId: "Ev1" });
    await first.acked;
    const again = world.socket.redeliver(first.envelopeId);
    await again.acked;
    await nthPost(1, DM);
    await h.gateway.idle();
    expect(world.socket.sent().map((s) => [s.envelope_id, s.retry_attempt, s.retry_reason])).toEqual([
      [first.envelopeId, 0, ""],
      [first.envelopeId, 1, "timeout"],
    ]);
    expect(world.socket.acks()).toHaveLength(2);
    expect(world.slack.posted(DM)).toHaveLength(1);
    expect(world.model.calls).toHaveLength(1);
  });
});

describe("reconnecting", () => {
  it("a refresh_requested disconnect mid-turn: the client fetches a new URL, the held reply is posted once, the new socket works", async () => {
    const { h } = await world.boot();
    const held = heldStep<FakeReply>();
    world.model.script(held.step);
    world.model.fallback((req) => text(`re: ${lastUserText(req)}`));
    const slow = world.socket.event(said({ channel: DM, user: ALICE, text: "think hard", im: true }).event);
    await slow.acked;
    await held.entered;

    await world.socket.disconnect("refresh_requested");
    // Slack holds what happens while no socket is open and sends it on the next one.
    const meanwhile = world.socket.event(said({ channel: BOB_DM, user: BOB, text: "anyone?", im: true }).event);
    // @slack/socket-mode waits clientPingTimeout (5 s) before it reconnects; this awaits that, it does not sleep.
    await world.socket.connected(2);
    expect(opens()).toHaveLength(2);
    expect((await meanwhile.acked).connection).toBe(2);
    expect((await nthPost(1, BOB_DM)).text).toBe("re: anyone?");

    held.release(text("thought it through"));
    expect((await nthPost(1, DM)).text).toBe("thought it through");

    const fresh = world.socket.event(said({ channel: DM, user: ALICE, text: "you there?", im: true }).event);
    expect((await fresh.acked).connection).toBe(2);
    expect((await nthPost(2, DM)).text).toBe("re: you there?");
    await h.gateway.idle();
    expect(world.slack.posted(DM).map((p) => p.text)).toEqual(["thought it through", "re: you there?"]);
    expect(world.slack.posted(BOB_DM)).toHaveLength(1);
    // Every envelope went out once: each was acked before its connection closed, so nothing was redelivered.
    expect(world.socket.sent().map((s) => [s.envelope_id, s.connection, s.retry_attempt])).toEqual([
      [slow.envelopeId, 1, 0],
      [meanwhile.envelopeId, 2, 0],
      [fresh.envelopeId, 2, 0],
    ]);
    expect(world.model.calls).toHaveLength(3);
  }, 20_000);

  it("keeps reconnecting when apps.connections.open fails with a 5xx in between", async () => {
    await world.boot();
    world.slack.failNext("apps.connections.open", { status: 503 }, 2);
    await world.socket.disconnect("refresh_requested");
    // Two failed opens (the Web API client's retries), then a URL: the bot is not left deaf.
    await world.socket.connected(2);
    const after = world.socket.event(said({ channel: DM, user: ALICE, text: "back?", im: true }).event);
    expect((await after.acked).connection).toBe(2);
    world.model.script(text("back."));
    expect((await nthPost(1, DM)).text).toBe("back.");
    expect(world.slack.calls.filter((c) => c.method === "apps.connections.open").map((c) => c.status)).toEqual([200, 503, 503, 200]);
  }, 30_000);
});

describe("logging", () => {
  it("the Socket Mode client logs through the provider's logger at its level, never to the console", async () => {
    const consoleSpies = (["log", "info", "warn", "error", "debug"] as const).map((m) => vi.spyOn(console, m));
    try {
      const lines = (level: string) => {
        const out: string[] = [];
        const stream = { write: (line: string) => void out.push(line) } as unknown as Writable;
        return { out, log: createLogger(level, stream) };
      };
      const debug = lines("debug");
      await world.boot({ log: debug.log });
      const boltDebug = debug.out.map((l) => JSON.parse(l) as { level: number; bolt?: boolean; msg: string }).filter((l) => l.bolt && l.level === 20);
      expect(boltDebug.map((l) => l.msg)).toEqual(expect.arrayContaining([expect.stringMatching(/WSS URL/), expect.stringMatching(/WebSocket/)]));
      // Even at debug, the app-level token is redacted from the request headers @slack/web-api logs.
      expect(debug.out.join("\n")).not.toContain(world.socket.appToken);
      await world.stopProviders();

      const info = lines("info");
      await world.boot({ log: info.log });
      expect(info.out.map((l) => JSON.parse(l) as { level: number }).filter((l) => l.level < 30)).toEqual([]);
      expect(info.out.join("\n")).toContain("slack provider started");
      for (const spy of consoleSpies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of consoleSpies) spy.mockRestore();
    }
  });
});
