// The Slack provider end to end: a real Bolt app (HTTP receiver, signature checks) receiving signed events,
// talking to the fake Web API, with the real gateway and runtime and the strict fake Messages API.
import { describe, expect, it } from "vitest";
import type { SlackOptions } from "../../../providers/slack/slack.js";
import type { Tool } from "../../../src/runtime/tools/tool.js";
import { lastUserText, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { eventCallback, messageEvent, sendSigned, slashCommand, urlVerification } from "../../fakes/slack/events.js";
import { ALICE, BOB, CHANNEL, DM, nthPost as nthPostIn, SECRET, said as saidIn, useSlackWorld } from "../../helpers/slack-world.js";
import { deployTool, transferTool } from "../../helpers/tools.js";

const world = useSlackWorld();

/** The shared boot, recovering at start as main.ts does, with `send` for signed event callbacks. */
async function boot(options: Partial<SlackOptions> = {}, tools: Tool[] = []) {
  const { h, bot, url } = await world.boot(options, tools);
  await h.gateway.recover();
  const send = (event: Record<string, unknown>, opts: { eventId?: string; retryNum?: number } = {}) =>
    sendSigned(url, eventCallback(event, { teamId: world.slack.teamId, ...(opts.eventId ? { eventId: opts.eventId } : {}) }), "application/json", {
      secret: SECRET,
      ...(opts.retryNum !== undefined ? { retryNum: opts.retryNum, retryReason: "http_timeout" } : {}),
    });
  return { h, bot, url, send };
}

const said = (o: Parameters<typeof saidIn>[1]) => saidIn(world.slack, o);
const nthPost = (n: number, channel = CHANNEL) => nthPostIn(world.slack, n, channel);

describe("direct messages", () => {
  it("hold a whole takeover conversation with the subagent labelled", async () => {
    const { send } = await boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })), text("Where **to**?"));
    await send(said({ channel: DM, user: ALICE, text: "plan a trip", im: true }).event);
    const question = await nthPost(1, DM);
    expect(question).toMatchObject({ text: "*🧩 interview*\nWhere *to*?" });
    expect(question.thread_ts).toBeUndefined();

    world.model.script(reply(toolUse("complete", { result: "Lisbon" })), text("Booked: Lisbon."));
    await send(said({ channel: DM, user: ALICE, text: "Lisbon", im: true }).event);
    expect((await nthPost(2, DM)).text).toBe("Booked: Lisbon.");
    expect(world.model.rejected()).toEqual([]);
  });
});

describe("channels", () => {
  it("a top-level mention starts a thread session and every reply stays in that thread", async () => {
    const { send } = await boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Where to?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> plan a trip`, mention: true });
    await send(root.event);
    expect(await nthPost(1)).toMatchObject({ thread_ts: root.ts, text: "*🧩 interview*\nWhere to?" });
    expect(lastUserText(world.model.accepted()[0]!)).toBe("plan a trip");

    // The owner answers in the thread without a mention.
    world.model.script(reply(toolUse("complete", { result: "Rome" })), text("Rome it is."));
    await send(said({ channel: CHANNEL, user: ALICE, text: "Rome", thread: root.ts }).event);
    expect(await nthPost(2)).toMatchObject({ thread_ts: root.ts, text: "Rome it is." });
    expect(world.slack.posted(CHANNEL).every((p) => p.thread_ts === root.ts)).toBe(true);
  });

  it("keeps two threads in one channel independent", async () => {
    const { send } = await boot();
    world.model.fallback((req) => text(`${lastUserText(req)} (history ${req.messages.length})`));
    const a = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> first`, mention: true });
    const b = said({ channel: CHANNEL, user: BOB, text: `<@${world.slack.botUserId}> second`, mention: true });
    await send(a.event);
    await send(b.event);
    await nthPost(2);
    const byThread = Object.fromEntries(world.slack.posted(CHANNEL).map((p) => [p.thread_ts, p.text]));
    expect(byThread).toEqual({ [a.ts]: "first (history 1)", [b.ts]: "second (history 1)" });
  });

  it("refuses a non-owner with an ephemeral message and ignores their unaddressed chatter", async () => {
    const { send, h } = await boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Alice, where to?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> plan`, mention: true });
    await send(root.event);
    await nthPost(1);
    await send(said({ channel: CHANNEL, user: BOB, text: "nice thread", thread: root.ts }).event);
    await send(said({ channel: CHANNEL, user: BOB, text: `<@${world.slack.botUserId}> me too`, thread: root.ts, mention: true }).event);
    await world.slack.waitFor("chat.postEphemeral");
    expect(world.slack.ephemerals(CHANNEL)).toEqual([
      expect.objectContaining({ user: BOB, thread_ts: root.ts, text: expect.stringMatching(/^Sorry, I'm in the middle of a task/) }),
    ]);
    await h.gateway.idle();
    expect(world.model.calls).toHaveLength(2);
  });

  it("ignores edits, deletions and bot messages without calling the model", async () => {
    const { send, h } = await boot();
    const ts = world.slack.userMessage({ channel: DM, user: ALICE, text: "hello" });
    await send(messageEvent({ channel: DM, user: ALICE, text: "hello (edited)", ts, channel_type: "im", subtype: "message_changed" }));
    await send(messageEvent({ channel: DM, text: "beep", ts, channel_type: "im", subtype: "bot_message", bot_id: "B0OTHER" }));
    world.model.script(text("only this"));
    await send(said({ channel: DM, user: ALICE, text: "real one", im: true }).event);
    await nthPost(1, DM);
    await h.gateway.idle();
    expect(world.model.accepted().map(lastUserText)).toEqual(["real one"]);
  });
});

describe("requests from Slack", () => {
  it("rejects a bad signature or a stale timestamp with 401 and processes nothing", async () => {
    const { url } = await boot();
    const body = eventCallback(said({ channel: DM, user: ALICE, text: "hi", im: true }).event, { teamId: world.slack.teamId });
    expect((await sendSigned(url, body, "application/json", { secret: SECRET, badSignature: true })).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 10 * 60;
    expect((await sendSigned(url, body, "application/json", { secret: SECRET, timestamp: stale })).status).toBe(401);
    expect((await sendSigned(url, urlVerification("abc"), "application/json", { secret: SECRET })).body).toContain("abc");
    expect(world.model.calls).toHaveLength(0);
  });

  it("processes an event Slack retries only once", async () => {
    const { send, h } = await boot();
    world.model.script(text("once"));
    const { event } = said({ channel: DM, user: ALICE, text: "hi", im: true });
    await send(event, { eventId: "Ev1" });
    await send(event, { eventId: "Ev1", retryNum: 1 });
    await nthPost(1, DM);
    await h.gateway.idle();
    expect(world.slack.posted(DM)).toHaveLength(1);
    expect(world.model.calls).toHaveLength(1);
  });

  it("/switchboard cancel stops the user's running task in that channel and says so in its thread", async () => {
    const { send, url } = await boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q?"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> go`, mention: true });
    await send(root.event);
    await nthPost(1);
    const body = slashCommand({
      command: "/switchboard",
      text: "cancel",
      user_id: ALICE,
      channel_id: CHANNEL,
      team_id: world.slack.teamId,
      response_url: world.slack.responseUrl(),
    });
    expect((await sendSigned(url, body, "application/x-www-form-urlencoded", { secret: SECRET })).status).toBe(200);
    expect(await nthPost(2)).toMatchObject({ thread_ts: root.ts, text: "Cancelled. Stopped: skill:interview." });
  });
});

describe("output", () => {
  it("splits a long answer below Slack's limits, all in the thread", async () => {
    const { send, h } = await boot();
    world.model.script(text(Array.from({ length: 20 }, (_, i) => `Part ${i}: ${"word ".repeat(80)}`).join("\n\n")));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> long`, mention: true });
    await send(root.event);
    await nthPost(3);
    await h.gateway.idle();
    const posts = world.slack.posted(CHANNEL);
    expect(posts.length).toBe(3);
    expect(posts.every((p) => p.text.length <= 3500 && p.thread_ts === root.ts)).toBe(true);
    expect(
      posts
        .map((p) => p.text)
        .join("\n\n")
        .match(/Part \d+:/g),
    ).toHaveLength(20);
  });

  it("shows the assistant status while a turn runs, or a 👀 reaction where that is unavailable", async () => {
    const { send, h } = await boot();
    world.model.script(text("first"));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> hi`, mention: true });
    await send(root.event);
    await nthPost(1);
    await h.gateway.idle();
    await world.slack.waitFor("assistant.threads.setStatus", (p) => p.status === "");
    expect(world.slack.statuses().map((s) => s.status)).toEqual(["is thinking…", ""]);

    world.slack.setStatusAvailable(false);
    world.model.script(text("second"));
    const dm = said({ channel: DM, user: ALICE, text: "hi", im: true });
    await send(dm.event);
    await nthPost(1, DM);
    await h.gateway.idle();
    await world.slack.waitFor("reactions.remove");
    expect(world.slack.reactionLog().map((r) => `${r.op} ${r.name}`)).toEqual(["add eyes", "remove eyes"]);
    expect(world.slack.reactions(DM, dm.ts)).toEqual([]);
  });
});

describe("approvals", () => {
  it("asks with buttons in the thread; the owner's click runs the tool once, others are told privately", async () => {
    const runs: string[] = [];
    const transfer = transferTool(runs);
    const { url, send, h } = await boot({}, [transfer]);
    world.model.script(reply(toolUse("transfer", { amount: 5 })), text("Done, sent."));
    const root = said({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> send 5`, mention: true });
    await send(root.event);
    const prompt = await nthPost(1);
    expect(prompt.thread_ts).toBe(root.ts);
    const click = (user: string) => world.clickButton(url, prompt, "switchboard_approve", { id: user });
    expect((await click(BOB)).status).toBe(200);
    await world.slack.waitFor("response_url");
    expect(JSON.stringify(world.slack.responses())).toContain("Only the person who started this task can approve or deny its tool calls.");
    expect((await click(ALICE)).status).toBe(200);
    expect((await click(ALICE)).status).toBe(200);
    expect((await nthPost(2)).text).toBe("Done, sent.");
    await h.gateway.idle();
    expect(runs).toEqual(["sent"]);
    await world.slack.waitFor("chat.update");
    expect(world.slack.posted(CHANNEL)[0]!.text).toMatch(new RegExp(`— approved by <@${ALICE}>$`));
  });
});

describe("approval prompts", () => {
  it("lead with the tool and its target, whole in the section beside the buttons, however long a field the model put first", async () => {
    const { send } = await boot({}, [deployTool()]);
    world.model.script(reply(toolUse("deploy", { notes: "n".repeat(20_000), service: "billing", target: "prod-eu-1" })));
    await send(said({ channel: DM, user: ALICE, text: "deploy billing", im: true }).event);
    const prompt = await nthPost(1, DM);
    const [section] = prompt.blocks as Array<{ type: string; text: { text: string } }>;
    expect(section!.text.text).toBe(prompt.text);
    expect(prompt.text.split("\n")[0]).toBe("🔐 main wants to run deploy: billing → prod-eu-1");
    expect(prompt.text).toMatch(/\n• notes: "n+…n+"\nApprove or deny it \(ap_\w+\)\.$/);
    expect(prompt.text.length).toBeLessThan(3_000);
  });
});

describe("restarts", () => {
  it("a reply cut off after its first part continues without posting anything twice", async () => {
    const first = await boot();
    world.model.script(text(Array.from({ length: 20 }, (_, i) => `Part ${i}: ${"word ".repeat(80)}`).join("\n\n")));
    let posts = 0;
    world.slack.failWhen("chat.postMessage", () => (++posts >= 2 ? { error: "fatal_error" } : null));
    const { event } = said({ channel: DM, user: ALICE, text: "long", im: true });
    await first.send(event, { eventId: "EvLong" });
    await world.slack.waitFor("chat.postMessage", () => posts >= 2);
    await first.h.gateway.idle();
    expect(world.slack.posted(DM)).toHaveLength(1);
    await world.stopProviders();
    world.slack.failWhen("chat.postMessage", null);

    const second = await boot();
    await nthPost(3, DM);
    // Slack retries the same event after the restart: nothing new happens.
    await second.send(event, { eventId: "EvLong", retryNum: 1 });
    await second.h.gateway.idle();
    const texts = world.slack.posted(DM).map((p) => p.text);
    expect(texts).toHaveLength(3);
    expect(new Set(texts).size).toBe(3);
    expect(world.model.calls).toHaveLength(1);
  });
});

describe("access", () => {
  it("SLACK_ALLOWED_USERS refuses others once, privately, and nothing reaches the model", async () => {
    const { send, h } = await boot({ allowedUsers: [ALICE] });
    await send(said({ channel: DM, user: BOB, text: "hi", im: true }).event);
    await send(said({ channel: DM, user: BOB, text: "hi again", im: true }).event);
    await world.slack.waitFor("chat.postEphemeral");
    await h.gateway.idle();
    expect(world.slack.ephemerals().map((e) => [e.user, e.text])).toEqual([[BOB, "Sorry, this bot is private and you are not on its list of users."]]);
    expect(world.model.calls).toHaveLength(0);
  });
});
