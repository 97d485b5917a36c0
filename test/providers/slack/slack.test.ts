// The Slack provider end to end: a real Bolt app (HTTP receiver, signature checks) receiving signed events,
// talking to the fake Web API, with the real gateway and runtime and the strict fake Messages API.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { SlackProvider, type SlackOptions } from "../../../providers/slack/slack.js";
import { lastUserText, reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../../fakes/anthropic/server.js";
import { appMention, eventCallback, interactivity, messageEvent, sendSigned, slashCommand, urlVerification } from "../../fakes/slack/events.js";
import { startFakeSlack, type FakeSlack } from "../../fakes/slack/server.js";
import { skillFile, startHarness, type Harness } from "../../helpers/harness.js";
import { transferTool } from "../../helpers/tools.js";

const SECRET = "test-signing-secret";
const CHANNEL = "C0GENERAL";
const DM = "D0ALICE";
const ALICE = "U0ALICE";
const BOB = "U0BOB";

let model: FakeAnthropic;
let slack: FakeSlack;
let dir: string;
let running: Array<{ h: Harness; bot: SlackProvider }> = [];

beforeEach(async () => {
  model = await startFakeAnthropic();
  slack = await startFakeSlack();
  dir = mkdtempSync(join(tmpdir(), "switchboard-slack-"));
  running = [];
});
afterEach(async () => {
  for (const { h, bot } of running) {
    await bot.stop();
    await h.close();
  }
  await slack.close();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
});

async function boot(options: Partial<SlackOptions> = {}, tools: import("../../../src/runtime/tools/tool.js").Tool[] = []) {
  const h = await startHarness({ files: skillFile("interview", "Ask."), fake: model, dbFile: join(dir, "switchboard.db"), tools });
  const bot = new SlackProvider(h.gateway, {
    botToken: slack.botToken,
    signingSecret: SECRET,
    port: 0,
    apiUrl: slack.apiUrl,
    maxRetries: 0,
    allowedUsers: [],
    allowedChannels: [],
    log: silentLogger(),
    ...options,
  });
  await bot.start();
  h.gateway.recover();
  running.push({ h, bot });
  const url = `http://127.0.0.1:${bot.httpPort()}/slack/events`;
  const send = (event: Record<string, unknown>, opts: { eventId?: string; retryNum?: number } = {}) =>
    sendSigned(url, eventCallback(event, { teamId: slack.teamId, ...(opts.eventId ? { eventId: opts.eventId } : {}) }), "application/json", {
      secret: SECRET,
      ...(opts.retryNum !== undefined ? { retryNum: opts.retryNum, retryReason: "http_timeout" } : {}),
    });
  return { h, bot, url, send };
}

/** A user message Slack knows about, as the event Slack would send for it. */
function said(o: { channel: string; user: string; text: string; thread?: string; im?: boolean; mention?: boolean }) {
  const ts = slack.userMessage({ channel: o.channel, user: o.user, text: o.text, ...(o.thread ? { thread_ts: o.thread } : {}) });
  const base = { channel: o.channel, user: o.user, text: o.text, ts, ...(o.thread ? { thread_ts: o.thread } : {}) };
  return { ts, event: o.mention ? appMention(base) : messageEvent({ ...base, channel_type: o.im ? "im" : "channel" }) };
}

async function nthPost(n: number, channel = CHANNEL) {
  await slack.waitFor("chat.postMessage", () => slack.posted(channel).length >= n);
  return slack.posted(channel)[n - 1]!;
}

describe("direct messages", () => {
  it("hold a whole takeover conversation with the subagent labelled", async () => {
    const { send } = await boot();
    model.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })), text("Where **to**?"));
    await send(said({ channel: DM, user: ALICE, text: "plan a trip", im: true }).event);
    const question = await nthPost(1, DM);
    expect(question).toMatchObject({ text: "*🧩 interview*\nWhere *to*?" });
    expect(question.thread_ts).toBeUndefined();

    model.script(reply(toolUse("complete", { result: "Lisbon" })), text("Booked: Lisbon."));
    await send(said({ channel: DM, user: ALICE, text: "Lisbon", im: true }).event);
    expect((await nthPost(2, DM)).text).toBe("Booked: Lisbon.");
    expect(model.rejected()).toEqual([]);
  });
});

describe("channels", () => {
  it("a top-level mention starts a thread session and every reply stays in that thread", async () => {
    const { send } = await boot();
    model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Where to?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> plan a trip`, mention: true });
    await send(root.event);
    expect(await nthPost(1)).toMatchObject({ thread_ts: root.ts, text: "*🧩 interview*\nWhere to?" });
    expect(lastUserText(model.accepted()[0]!)).toBe("plan a trip");

    // The owner answers in the thread without a mention.
    model.script(reply(toolUse("complete", { result: "Rome" })), text("Rome it is."));
    await send(said({ channel: CHANNEL, user: ALICE, text: "Rome", thread: root.ts }).event);
    expect(await nthPost(2)).toMatchObject({ thread_ts: root.ts, text: "Rome it is." });
    expect(slack.posted(CHANNEL).every((p) => p.thread_ts === root.ts)).toBe(true);
  });

  it("keeps two threads in one channel independent", async () => {
    const { send } = await boot();
    model.fallback((req) => text(`${lastUserText(req)} (history ${req.messages.length})`));
    const a = said({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> first`, mention: true });
    const b = said({ channel: CHANNEL, user: BOB, text: `<@${slack.botUserId}> second`, mention: true });
    await send(a.event);
    await send(b.event);
    await nthPost(2);
    const byThread = Object.fromEntries(slack.posted(CHANNEL).map((p) => [p.thread_ts, p.text]));
    expect(byThread).toEqual({ [a.ts]: "first (history 1)", [b.ts]: "second (history 1)" });
  });

  it("refuses a non-owner with an ephemeral message and ignores their unaddressed chatter", async () => {
    const { send, h } = await boot();
    model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Alice, where to?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> plan`, mention: true });
    await send(root.event);
    await nthPost(1);
    await send(said({ channel: CHANNEL, user: BOB, text: "nice thread", thread: root.ts }).event);
    await send(said({ channel: CHANNEL, user: BOB, text: `<@${slack.botUserId}> me too`, thread: root.ts, mention: true }).event);
    await slack.waitFor("chat.postEphemeral");
    expect(slack.ephemerals(CHANNEL)).toEqual([
      expect.objectContaining({ user: BOB, thread_ts: root.ts, text: expect.stringMatching(/^Sorry, I'm in the middle of a task/) }),
    ]);
    await h.gateway.idle();
    expect(model.calls).toHaveLength(2);
  });

  it("ignores edits, deletions and bot messages without calling the model", async () => {
    const { send, h } = await boot();
    const ts = slack.userMessage({ channel: DM, user: ALICE, text: "hello" });
    await send(messageEvent({ channel: DM, user: ALICE, text: "hello (edited)", ts, channel_type: "im", subtype: "message_changed" }));
    await send(messageEvent({ channel: DM, text: "beep", ts, channel_type: "im", subtype: "bot_message", bot_id: "B0OTHER" }));
    model.script(text("only this"));
    await send(said({ channel: DM, user: ALICE, text: "real one", im: true }).event);
    await nthPost(1, DM);
    await h.gateway.idle();
    expect(model.accepted().map(lastUserText)).toEqual(["real one"]);
  });
});

describe("requests from Slack", () => {
  it("rejects a bad signature or a stale timestamp with 401 and processes nothing", async () => {
    const { url } = await boot();
    const body = eventCallback(said({ channel: DM, user: ALICE, text: "hi", im: true }).event, { teamId: slack.teamId });
    expect((await sendSigned(url, body, "application/json", { secret: SECRET, badSignature: true })).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 10 * 60;
    expect((await sendSigned(url, body, "application/json", { secret: SECRET, timestamp: stale })).status).toBe(401);
    expect((await sendSigned(url, urlVerification("abc"), "application/json", { secret: SECRET })).body).toContain("abc");
    expect(model.calls).toHaveLength(0);
  });

  it("processes an event Slack retries only once", async () => {
    const { send, h } = await boot();
    model.script(text("once"));
    const { event } = said({ channel: DM, user: ALICE, text: "hi", im: true });
    await send(event, { eventId: "Ev1" });
    await send(event, { eventId: "Ev1", retryNum: 1 });
    await nthPost(1, DM);
    await h.gateway.idle();
    expect(slack.posted(DM)).toHaveLength(1);
    expect(model.calls).toHaveLength(1);
  });

  it("/switchboard cancel stops the user's running task in that channel and says so in its thread", async () => {
    const { send, url } = await boot();
    model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> go`, mention: true });
    await send(root.event);
    await nthPost(1);
    const body = slashCommand({ command: "/switchboard", text: "cancel", user_id: ALICE, channel_id: CHANNEL, team_id: slack.teamId, response_url: slack.responseUrl() });
    expect((await sendSigned(url, body, "application/x-www-form-urlencoded", { secret: SECRET })).status).toBe(200);
    expect(await nthPost(2)).toMatchObject({ thread_ts: root.ts, text: "Cancelled. Stopped: skill:interview." });
  });
});

describe("output", () => {
  it("splits a long answer below Slack's limits, all in the thread", async () => {
    const { send } = await boot();
    model.script(text(Array.from({ length: 20 }, (_, i) => `Part ${i}: ${"word ".repeat(80)}`).join("\n\n")));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> long`, mention: true });
    await send(root.event);
    await nthPost(3);
    await running[0]!.h.gateway.idle();
    const posts = slack.posted(CHANNEL);
    expect(posts.length).toBe(3);
    expect(posts.every((p) => p.text.length <= 3500 && p.thread_ts === root.ts)).toBe(true);
    expect(posts.map((p) => p.text).join("\n\n").match(/Part \d+:/g)).toHaveLength(20);
  });

  it("shows the assistant status while a turn runs, or a 👀 reaction where that is unavailable", async () => {
    const { send, h } = await boot();
    model.script(text("first"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> hi`, mention: true });
    await send(root.event);
    await nthPost(1);
    await h.gateway.idle();
    await slack.waitFor("assistant.threads.setStatus", (p) => p.status === "");
    expect(slack.statuses().map((s) => s.status)).toEqual(["is thinking…", ""]);

    slack.setStatusAvailable(false);
    model.script(text("second"));
    const dm = said({ channel: DM, user: ALICE, text: "hi", im: true });
    await send(dm.event);
    await nthPost(1, DM);
    await h.gateway.idle();
    await slack.waitFor("reactions.remove");
    expect(slack.reactionLog().map((r) => `${r.op} ${r.name}`)).toEqual(["add eyes", "remove eyes"]);
    expect(slack.reactions(DM, dm.ts)).toEqual([]);
  });
});

describe("approvals", () => {
  it("asks with buttons in the thread; the owner's click runs the tool once, others are told privately", async () => {
    const runs: string[] = [];
    const transfer = transferTool(runs);
    const { url, send } = await boot({}, [transfer]);
    model.script(reply(toolUse("transfer", { amount: 5 })), text("Done, sent."));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> send 5`, mention: true });
    await send(root.event);
    const prompt = await nthPost(1);
    expect(prompt.thread_ts).toBe(root.ts);
    const actions = (prompt.blocks as Array<{ type: string; elements?: Array<{ action_id: string; value: string }> }>).find((b) => b.type === "actions")!;
    const approve = actions.elements!.find((e) => e.action_id === "switchboard_approve")!;
    const click = (user: string) =>
      sendSigned(
        url,
        interactivity({
          type: "block_actions",
          team: { id: slack.teamId },
          user: { id: user },
          api_app_id: "A0TEST",
          token: "t",
          trigger_id: `tr-${user}`,
          container: { type: "message", message_ts: prompt.ts, channel_id: CHANNEL, is_ephemeral: false },
          channel: { id: CHANNEL },
          message: { type: "message", text: prompt.text, ts: prompt.ts },
          response_url: slack.responseUrl(),
          actions: [{ action_id: approve.action_id, block_id: "b", value: approve.value, type: "button", action_ts: "1" }],
        }),
        "application/x-www-form-urlencoded",
        { secret: SECRET },
      );
    expect((await click(BOB)).status).toBe(200);
    await slack.waitFor("response_url");
    expect(JSON.stringify(slack.responses())).toContain("Only the person who started this task can approve or deny its tool calls.");
    expect((await click(ALICE)).status).toBe(200);
    expect((await click(ALICE)).status).toBe(200);
    expect((await nthPost(2)).text).toBe("Done, sent.");
    await running[0]!.h.gateway.idle();
    expect(runs).toEqual(["sent"]);
    await slack.waitFor("chat.update");
    expect(slack.posted(CHANNEL)[0]!.text).toMatch(new RegExp(`— approved by <@${ALICE}>$`));
  });
});

describe("restarts", () => {
  it("a reply cut off after its first part continues without posting anything twice", async () => {
    const first = await boot();
    model.script(text(Array.from({ length: 20 }, (_, i) => `Part ${i}: ${"word ".repeat(80)}`).join("\n\n")));
    let posts = 0;
    slack.failWhen("chat.postMessage", () => (++posts >= 2 ? { error: "fatal_error" } : null));
    const { event } = said({ channel: DM, user: ALICE, text: "long", im: true });
    await first.send(event, { eventId: "EvLong" });
    await slack.waitFor("chat.postMessage", () => posts >= 2);
    await first.h.gateway.idle();
    expect(slack.posted(DM)).toHaveLength(1);
    await first.bot.stop();
    await first.h.close();
    running = [];
    slack.failWhen("chat.postMessage", null);

    const second = await boot();
    await nthPost(3, DM);
    // Slack retries the same event after the restart: nothing new happens.
    await second.send(event, { eventId: "EvLong", retryNum: 1 });
    await second.h.gateway.idle();
    const texts = slack.posted(DM).map((p) => p.text);
    expect(texts).toHaveLength(3);
    expect(new Set(texts).size).toBe(3);
    expect(model.calls).toHaveLength(1);
  });
});

describe("access", () => {
  it("SLACK_ALLOWED_USERS refuses others once, privately, and nothing reaches the model", async () => {
    const { send, h } = await boot({ allowedUsers: [ALICE] });
    await send(said({ channel: DM, user: BOB, text: "hi", im: true }).event);
    await send(said({ channel: DM, user: BOB, text: "hi again", im: true }).event);
    await slack.waitFor("chat.postEphemeral");
    await h.gateway.idle();
    expect(slack.ephemerals().map((e) => [e.user, e.text])).toEqual([[BOB, "Sorry, this bot is private and you are not on its list of users."]]);
    expect(model.calls).toHaveLength(0);
  });
});
