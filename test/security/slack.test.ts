// Slack's door, attacked: replayed requests with a forged clock, the slash command from people and
// places the allowlists refuse, and one Slack user id in two workspaces. Signed events over real HTTP
// into the real Bolt app, against the fake Web API, with the real gateway and runtime.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { slackSessionKey } from "../../providers/slack/inbound.js";
import { SlackProvider, type SlackOptions } from "../../providers/slack/slack.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { appMention, eventCallback, interactivity, messageEvent, sendSigned, slashCommand, urlVerification } from "../fakes/slack/events.js";
import { startFakeSlack, type FakeSlack } from "../fakes/slack/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { transferTool } from "../helpers/tools.js";

const SECRET = "test-signing-secret";
const CHANNEL = "C0GENERAL";
const DM = "D0ALICE";
const ALICE = "U0ALICE";
const BOB = "U0BOB";
const OTHER_TEAM = "T0OTHER";
const MINUTE = 60;

let model: FakeAnthropic;
let slack: FakeSlack;
let dir: string;
let running: Array<{ h: Harness; bot: SlackProvider }> = [];

beforeEach(async () => {
  model = await startFakeAnthropic();
  slack = await startFakeSlack();
  dir = mkdtempSync(join(tmpdir(), "switchboard-slack-security-"));
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

async function boot(options: Partial<SlackOptions> = {}, tools: Tool[] = []) {
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
  running.push({ h, bot });
  const url = `http://127.0.0.1:${bot.httpPort()}/slack/events`;
  return { h, bot, url };
}

/** A DM Slack knows about, as the signed envelope Slack would send for it. */
function dmEnvelope(textSent: string): string {
  const ts = slack.userMessage({ channel: DM, user: ALICE, text: textSent });
  return eventCallback(messageEvent({ channel: DM, user: ALICE, text: textSent, ts, channel_type: "im" }), { teamId: slack.teamId });
}

const seconds = (ms: number) => Math.floor(ms / 1000);

describe("request timestamps", () => {
  it("refuses a request signed 6 minutes in the future with 401 and stores nothing", async () => {
    const { url, h } = await boot();
    const future = seconds(Date.now()) + 6 * MINUTE;
    const answer = await sendSigned(url, dmEnvelope("from the future"), "application/json", { secret: SECRET, timestamp: future });
    expect(answer.status).toBe(401);
    await h.gateway.idle();
    expect(h.store.requests(slackSessionKey(slack.teamId, DM))).toEqual([]);
    expect(model.calls).toHaveLength(0);
  });

  it("refuses a request signed 6 minutes in the past with 401 and stores nothing", async () => {
    const { url, h } = await boot();
    const past = seconds(Date.now()) - 6 * MINUTE;
    const answer = await sendSigned(url, dmEnvelope("from the past"), "application/json", { secret: SECRET, timestamp: past });
    expect(answer.status).toBe(401);
    await h.gateway.idle();
    expect(h.store.requests(slackSessionKey(slack.teamId, DM))).toEqual([]);
    expect(model.calls).toHaveLength(0);
  });

  it("measures the window on the injected clock, both ways", async () => {
    // Bolt's own staleness check runs on the real clock afterwards; these skews pass it, so only ours refuses.
    let offset = 0;
    const { url, h } = await boot({ now: () => Date.now() + offset });
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
    expect(h.store.requests(slackSessionKey(slack.teamId, DM))).toEqual([]);
    expect(model.calls).toHaveLength(0);
  });
});

describe("the /switchboard slash command", () => {
  /** Sends `/switchboard status` and waits until the bot has answered, one way or the other. */
  async function slash(url: string, h: Harness, user: string, channel: string) {
    const body = slashCommand({ command: "/switchboard", text: "status", user_id: user, channel_id: channel, team_id: slack.teamId, response_url: slack.responseUrl() });
    expect((await sendSigned(url, body, "application/x-www-form-urlencoded", { secret: SECRET })).status).toBe(200);
    await Promise.race([slack.waitFor("response_url"), slack.waitFor("chat.postMessage")]);
    await h.gateway.idle();
  }

  it("from a user SLACK_ALLOWED_USERS does not list: a private refusal, no post in the channel, nothing stored", async () => {
    const { url, h } = await boot({ allowedUsers: [ALICE] });
    await slash(url, h, BOB, CHANNEL);
    expect(slack.posted(CHANNEL)).toEqual([]);
    expect(h.store.requests(slackSessionKey(slack.teamId, CHANNEL))).toEqual([]);
    expect(slack.responses().map((r) => r.body)).toEqual([
      expect.objectContaining({ response_type: "ephemeral", text: "Sorry, this bot is private and you are not on its list of users." }),
    ]);
  });

  it("in a channel SLACK_ALLOWED_CHANNELS does not list: a private refusal, no post in the channel, nothing stored", async () => {
    const { url, h } = await boot({ allowedChannels: ["C0ALLOWED"] });
    await slash(url, h, ALICE, CHANNEL);
    expect(slack.posted(CHANNEL)).toEqual([]);
    expect(h.store.requests(slackSessionKey(slack.teamId, CHANNEL))).toEqual([]);
    expect(slack.responses().map((r) => r.body)).toEqual([
      expect.objectContaining({ response_type: "ephemeral", text: "Sorry, I'm not enabled in this channel." }),
    ]);
  });
});

describe("identity", () => {
  it("the same Slack user id in another workspace is another person: it cannot approve the owner's tool call", async () => {
    const runs: string[] = [];
    const { url, h } = await boot({}, [transferTool(runs)]);
    model.script(reply(toolUse("transfer", { amount: 5 })), text("Done, sent."));
    const ts = slack.userMessage({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> send 5` });
    const mention = appMention({ channel: CHANNEL, user: ALICE, text: `<@${slack.botUserId}> send 5`, ts, team: slack.teamId });
    await sendSigned(url, eventCallback(mention, { teamId: slack.teamId }), "application/json", { secret: SECRET });
    await slack.waitFor("chat.postMessage");
    const prompt = slack.posted(CHANNEL)[0]!;
    const key = slackSessionKey(slack.teamId, CHANNEL, ts);
    expect(h.store.tasks(key).map((t) => t.ownerId)).toEqual([`slack:${slack.teamId}:${ALICE}`]);

    const actions = (prompt.blocks as Array<{ type: string; elements?: Array<{ action_id: string; value: string }> }>).find((b) => b.type === "actions")!;
    const approve = actions.elements!.find((e) => e.action_id === "switchboard_approve")!;
    const click = (team: string) =>
      sendSigned(
        url,
        interactivity({
          type: "block_actions",
          team: { id: team },
          user: { id: ALICE, team_id: team },
          api_app_id: "A0TEST",
          token: "t",
          trigger_id: `tr-${team}`,
          container: { type: "message", message_ts: prompt.ts, channel_id: CHANNEL, is_ephemeral: false },
          channel: { id: CHANNEL },
          message: { type: "message", text: prompt.text, ts: prompt.ts },
          response_url: slack.responseUrl(),
          actions: [{ action_id: approve.action_id, block_id: "b", value: approve.value, type: "button", action_ts: "1" }],
        }),
        "application/x-www-form-urlencoded",
        { secret: SECRET },
      );

    // U0ALICE of another workspace: same raw id, different person.
    expect((await click(OTHER_TEAM)).status).toBe(200);
    await slack.waitFor("response_url");
    expect(JSON.stringify(slack.responses())).toContain("Only the person who started this task can approve or deny its tool calls.");
    await h.gateway.idle();
    expect(runs).toEqual([]);

    expect((await click(slack.teamId)).status).toBe(200);
    await slack.waitFor("chat.postMessage", (p) => p.text === "Done, sent.");
    await h.gateway.idle();
    expect(runs).toEqual(["sent"]);
  });
});
