// The Slack provider on the test harness: a real Bolt app (HTTP receiver, signature checks) on a free port,
// talking to the fake Web API, with the real gateway and runtime and the strict fake Messages API.
// Shared by the provider's own tests and the security suite.
import { silentLogger } from "../../src/log.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { SlackProvider, type SlackOptions } from "../../providers/slack/slack.js";
import { appMention, interactivity, messageEvent, sendSigned, slackSender } from "../fakes/slack/events.js";
import { startFakeSlack, type FakeSlack, type Posted } from "../fakes/slack/server.js";
import { skillFile, type HarnessOptions } from "./harness.js";
import { ProviderWorld } from "./provider-world.js";

export const SECRET = "test-signing-secret";
export const CHANNEL = "C0GENERAL";
export const DM = "D0ALICE";
export const ALICE = "U0ALICE";
export const BOB = "U0BOB";
/** The fake workspace (auth.test's team_id), as recorded fixtures name it. */
export const TEAM = "T0TEST";
export const BOT = "U0BOT";

/**
 * The provider's options against a fake: HTTP mode with `{ signingSecret }`, Socket Mode with `{ appToken }`;
 * everything else as a test needs it (no retries, everyone allowed, a silent log) unless `options` says otherwise.
 */
/** Replies come whole unless a test is about streaming (`{ streaming: true }`: test/providers/slack/streaming.test.ts). */
export function providerOptions(slack: FakeSlack, mode: { signingSecret: string } | { appToken: string }, options: Partial<SlackOptions> = {}): SlackOptions {
  return {
    botToken: slack.botToken,
    ...mode,
    port: 0,
    apiUrl: slack.apiUrl,
    maxRetries: 0,
    allowedUsers: [],
    allowedChannels: [],
    streaming: false,
    log: silentLogger(),
    ...options,
  };
}

/** A user message Slack knows about, as the event Slack would send for it. */
export function said(slack: FakeSlack, o: { channel: string; user: string; text: string; thread?: string; im?: boolean; mention?: boolean }) {
  const ts = slack.userMessage({ channel: o.channel, user: o.user, text: o.text, ...(o.thread ? { thread_ts: o.thread } : {}) });
  const base = { channel: o.channel, user: o.user, text: o.text, ts, ...(o.thread ? { thread_ts: o.thread } : {}) };
  return { ts, event: o.mention ? appMention(base) : messageEvent({ ...base, channel_type: o.im ? "im" : "channel" }) };
}

/** The `n`th message the bot posted in `channel`, once there is one. */
export async function nthPost(slack: FakeSlack, n: number, channel = CHANNEL): Promise<Posted> {
  await slack.waitFor("chat.postMessage", () => slack.posted(channel).length >= n);
  return slack.posted(channel)[n - 1]!;
}

class SlackWorld extends ProviderWorld<FakeSlack, SlackProvider> {
  /** This test's fake Web API. */
  get slack(): FakeSlack {
    return this.platform;
  }

  /**
   * Starts a bot on a new harness with an "interview" skill; returns it with the URL Slack posts events to.
   * `harness`: the harness's own options (the hand-back notice, for instance).
   */
  async boot(options: Partial<SlackOptions> = {}, tools: Tool[] = [], harness: Omit<HarnessOptions, "files" | "tools"> = {}) {
    const h = await this.harness({ ...harness, files: skillFile("interview", "Ask."), tools });
    const bot = new SlackProvider(h.gateway, providerOptions(this.slack, { signingSecret: SECRET }, options));
    await bot.start();
    this.started(h, bot);
    const url = `http://127.0.0.1:${bot.httpPort()}/slack/events`;
    return { h, bot, url };
  }

  /**
   * Boots as main.ts starts the service (recovering what a previous run left unfinished) and returns `send`,
   * which posts a signed body (JSON or form, as Slack would) to the bot.
   */
  async run(options: Partial<SlackOptions> = {}, tools: Tool[] = [], harness: Omit<HarnessOptions, "files" | "tools"> = {}) {
    const started = await this.boot(options, tools, harness);
    await started.h.gateway.recover();
    return { ...started, send: slackSender(started.url, { secret: SECRET }) };
  }

  /** Registers a message a user posted with the fake (so the bot can reply in its thread or react to it). */
  known(channel: string, user: string, text: string, ts: string, threadTs?: string): string {
    return this.slack.userMessage({ channel, user, text, ts, ...(threadTs ? { thread_ts: threadTs } : {}) });
  }

  /** Waits until the bot has posted `n` messages in `channel`; returns them all. */
  async posts(n: number, channel: string): Promise<Posted[]> {
    await this.slack.waitFor("chat.postMessage", () => this.slack.posted(channel).length >= n);
    return this.slack.posted(channel);
  }

  /**
   * Clicks the button `actionId` of a message the bot posted, as the signed block_actions payload Slack sends
   * for `user` in workspace `team` (default: the fake's own).
   */
  clickButton(url: string, message: Posted, actionId: string, user: { id: string; team_id?: string }, team = this.slack.teamId) {
    const actions = (message.blocks as Array<{ type: string; elements?: Array<{ action_id: string; value: string }> }>).find((b) => b.type === "actions")!;
    const button = actions.elements!.find((e) => e.action_id === actionId)!;
    const payload = {
      type: "block_actions",
      team: { id: team },
      user,
      api_app_id: "A0TEST",
      token: "t",
      trigger_id: `tr-${team}-${user.id}`,
      container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
      channel: { id: message.channel },
      message: { type: "message", text: message.text, ts: message.ts },
      response_url: this.slack.responseUrl(),
      actions: [{ action_id: button.action_id, block_id: "b", value: button.value, type: "button", action_ts: "1" }],
    };
    return sendSigned(url, interactivity(payload), "application/x-www-form-urlencoded", { secret: SECRET });
  }
}

/** Registers the hooks; read `model` and `slack` inside a test (they are new for each one). */
export function useSlackWorld(): SlackWorld {
  return new SlackWorld(startFakeSlack, "switchboard-slack-");
}
