// Slack's door, attacked: replayed requests with a forged clock, the slash command from people and
// places the allowlists refuse, and one Slack user id in two workspaces. Signed events over real HTTP
// into the real Bolt app, against the fake Web API, with the real gateway and runtime.
import { describe, expect, it } from "vitest";
import { slackSessionKey } from "../../providers/slack/inbound.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { appMention, eventCallback, messageEvent, sendSigned, slashCommand, urlVerification } from "../fakes/slack/events.js";
import type { Harness } from "../helpers/harness.js";
import { ALICE, BOB, CHANNEL, DM, SECRET, useSlackWorld } from "../helpers/slack-world.js";
import { transferTool } from "../helpers/tools.js";

const OTHER_TEAM = "T0OTHER";
const MINUTE = 60;

const world = useSlackWorld();

/** A DM Slack knows about, as the signed envelope Slack would send for it. */
function dmEnvelope(textSent: string): string {
  const ts = world.slack.userMessage({ channel: DM, user: ALICE, text: textSent });
  return eventCallback(messageEvent({ channel: DM, user: ALICE, text: textSent, ts, channel_type: "im" }), { teamId: world.slack.teamId });
}

const seconds = (ms: number) => Math.floor(ms / 1000);

describe("request timestamps", () => {
  it("refuses a request signed 6 minutes in the future with 401 and stores nothing", async () => {
    const { url, h } = await world.boot();
    const future = seconds(Date.now()) + 6 * MINUTE;
    const answer = await sendSigned(url, dmEnvelope("from the future"), "application/json", { secret: SECRET, timestamp: future });
    expect(answer.status).toBe(401);
    await h.gateway.idle();
    expect(await h.store.requests.ofSession(slackSessionKey(world.slack.teamId, DM))).toEqual([]);
    expect(world.model.calls).toHaveLength(0);
  });

  it("refuses a request signed 6 minutes in the past with 401 and stores nothing", async () => {
    const { url, h } = await world.boot();
    const past = seconds(Date.now()) - 6 * MINUTE;
    const answer = await sendSigned(url, dmEnvelope("from the past"), "application/json", { secret: SECRET, timestamp: past });
    expect(answer.status).toBe(401);
    await h.gateway.idle();
    expect(await h.store.requests.ofSession(slackSessionKey(world.slack.teamId, DM))).toEqual([]);
    expect(world.model.calls).toHaveLength(0);
  });

  it("measures the window on the injected clock, both ways", async () => {
    // Bolt's own staleness check runs on the real clock afterwards; these skews pass it, so only ours refuses.
    let offset = 0;
    const { url, h } = await world.boot({ now: () => Date.now() + offset });
    const realNow = () => seconds(Date.now());
    offset = -4 * MINUTE * 1000; // our clock runs 4 minutes behind: a request signed 2 minutes ahead is 6 ahead of us
    expect((await sendSigned(url, dmEnvelope("ahead"), "application/json", { secret: SECRET, timestamp: realNow() + 2 * MINUTE })).status).toBe(401);
    offset = 4 * MINUTE * 1000; // our clock runs 4 minutes ahead: a request signed 2 minutes ago is 6 behind us
    expect((await sendSigned(url, dmEnvelope("behind"), "application/json", { secret: SECRET, timestamp: realNow() - 2 * MINUTE })).status).toBe(401);
    offset = -4 * MINUTE * 1000; // 4 minutes ahead of our clock is inside the window
    const fresh = await sendSigned(url, urlVerification("still-fresh"), "application/json", { secret: SECRET, timestamp: realNow() });
    expect(fresh.status).toBe(200);
    expect(fresh.body).toContain("still-fresh");
    await h.gateway.idle();
    expect(await h.store.requests.ofSession(slackSessionKey(world.slack.teamId, DM))).toEqual([]);
    expect(world.model.calls).toHaveLength(0);
  });
});

describe("the /switchboard slash command", () => {
  /** Sends `/switchboard status` and waits until the bot has answered, one way or the other. */
  async function slash(url: string, h: Harness, user: string, channel: string) {
    const body = slashCommand({
      command: "/switchboard",
      text: "status",
      user_id: user,
      channel_id: channel,
      team_id: world.slack.teamId,
      response_url: world.slack.responseUrl(),
    });
    expect((await sendSigned(url, body, "application/x-www-form-urlencoded", { secret: SECRET })).status).toBe(200);
    await Promise.race([world.slack.waitFor("response_url"), world.slack.waitFor("chat.postMessage")]);
    await h.gateway.idle();
  }

  it("from a user SLACK_ALLOWED_USERS does not list: a private refusal, no post in the channel, nothing stored", async () => {
    const { url, h } = await world.boot({ allowedUsers: [ALICE] });
    await slash(url, h, BOB, CHANNEL);
    expect(world.slack.posted(CHANNEL)).toEqual([]);
    expect(await h.store.requests.ofSession(slackSessionKey(world.slack.teamId, CHANNEL))).toEqual([]);
    expect(world.slack.responses().map((r) => r.body)).toEqual([
      expect.objectContaining({ response_type: "ephemeral", text: "Sorry, this bot is private and you are not on its list of users." }),
    ]);
  });

  it("in a channel SLACK_ALLOWED_CHANNELS does not list: a private refusal, no post in the channel, nothing stored", async () => {
    const { url, h } = await world.boot({ allowedChannels: ["C0ALLOWED"] });
    await slash(url, h, ALICE, CHANNEL);
    expect(world.slack.posted(CHANNEL)).toEqual([]);
    expect(await h.store.requests.ofSession(slackSessionKey(world.slack.teamId, CHANNEL))).toEqual([]);
    expect(world.slack.responses().map((r) => r.body)).toEqual([
      expect.objectContaining({ response_type: "ephemeral", text: "Sorry, I'm not enabled in this channel." }),
    ]);
  });
});

describe("identity", () => {
  it("the same Slack user id in another workspace is another person: it cannot approve the owner's tool call", async () => {
    const runs: string[] = [];
    const { url, h } = await world.boot({}, [transferTool(runs)]);
    world.model.script(reply(toolUse("transfer", { amount: 5 })), text("Done, sent."));
    const ts = world.slack.userMessage({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> send 5` });
    const mention = appMention({ channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> send 5`, ts, team: world.slack.teamId });
    await sendSigned(url, eventCallback(mention, { teamId: world.slack.teamId }), "application/json", { secret: SECRET });
    await world.slack.waitFor("chat.postMessage");
    const prompt = world.slack.posted(CHANNEL)[0]!;
    const key = slackSessionKey(world.slack.teamId, CHANNEL, ts);
    expect((await h.store.tasks.ofSession(key)).map((t) => t.ownerId)).toEqual([`slack:${world.slack.teamId}:${ALICE}`]);

    const click = (team: string) => world.clickButton(url, prompt, "switchboard_approve", { id: ALICE, team_id: team }, team);

    // U0ALICE of another workspace: same raw id, different person.
    expect((await click(OTHER_TEAM)).status).toBe(200);
    await world.slack.waitFor("response_url");
    expect(JSON.stringify(world.slack.responses())).toContain("Only the person who started this task can approve or deny its tool calls.");
    await h.gateway.idle();
    expect(runs).toEqual([]);

    expect((await click(world.slack.teamId)).status).toBe(200);
    await world.slack.waitFor("chat.postMessage", (p) => p.text === "Done, sent.");
    await h.gateway.idle();
    expect(runs).toEqual(["sent"]);
  });
});
