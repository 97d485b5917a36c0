import type { Server } from "node:http";
import { App, LogLevel, type Logger as BoltLogger } from "@slack/bolt";
import type { Logger } from "pino";
import { decisionText } from "../../src/gateway/commands.js";
import type { Gateway } from "../../src/gateway/gateway.js";
import { userId } from "../../src/gateway/identity.js";
import { isAllowed, parseSlackKey, slackSessionKey, stripMention } from "./inbound.js";
import { postReply } from "./outbound.js";
import { guardedReceiver } from "./receiver.js";

export interface SlackOptions {
  botToken: string;
  /** Socket Mode when set (no public URL needed); otherwise the HTTP receiver with signingSecret. */
  appToken?: string | undefined;
  signingSecret?: string | undefined;
  port: number;
  apiUrl?: string | undefined;
  maxRetries: number;
  /** Plain Slack user ids (`U…`), as admins copy them from Slack; compared with the raw id, not the gateway's `slack:<team>:<user>`. */
  allowedUsers: string[];
  allowedChannels: string[];
  log: Logger;
  /** The clock request timestamps are checked against (ms since the epoch); tests inject one. Default Date.now. */
  now?: (() => number) | undefined;
}

const NOT_ALLOWED_USER = "Sorry, this bot is private and you are not on its list of users.";
const NOT_ALLOWED_CHANNEL = "Sorry, I'm not enabled in this channel.";
const STATUS_TEXT = "is thinking…";
const WORKING_REACTION = "eyes";

type Incoming = { team: string; channel: string; user: string; text: string; ts: string; threadRoot?: string | undefined; addressed: boolean };

/** The Slack provider: DMs and channel threads become sessions; replies go back into the same thread. */
export class SlackProvider {
  readonly app: App;
  private botUserId = "";
  private teamId = "";
  private statusAvailable = true;
  private server: Server | null = null;
  private readonly lastMessage = new Map<string, { channel: string; ts: string }>();
  private readonly refused = new Set<string>();

  constructor(
    private readonly gateway: Gateway,
    private readonly options: SlackOptions,
  ) {
    const clientOptions = {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      retryConfig: { retries: options.maxRetries, factor: 2, maxRetryTime: 60_000 },
    };
    const logger = boltLogger(options.log);
    this.app = new App({
      token: options.botToken,
      ...(options.appToken
        ? { appToken: options.appToken, socketMode: true, port: options.port }
        : { receiver: guardedReceiver({ signingSecret: options.signingSecret ?? "", port: options.port, logger, log: options.log, now: options.now }) }),
      clientOptions,
      logger,
      deferInitialization: true,
    });
    this.install();
  }

  private install(): void {
    const app = this.app;
    app.event("app_mention", async ({ event, context }) => {
      if (!event.user || event.bot_id) return;
      const team = event.team ?? context.teamId ?? this.teamId;
      // A top-level mention starts a thread rooted at it; in a thread it joins that thread's session.
      await this.receive({
        team,
        channel: event.channel,
        user: event.user,
        text: event.text,
        ts: event.ts,
        threadRoot: event.thread_ts ?? event.ts,
        addressed: true,
      });
    });
    app.message(async ({ message, context }) => {
      // Edits, deletions, joins and bot posts carry a subtype: none of them is a new user message.
      if (message.subtype !== undefined || "bot_id" in message && message.bot_id) return;
      const m = message as { user?: string; text?: string; ts: string; thread_ts?: string; channel: string; channel_type: string; team?: string };
      if (!m.user || m.user === this.botUserId || !m.text) return;
      const team = m.team ?? context.teamId ?? this.teamId;
      if (m.channel_type === "im") {
        await this.receive({ team, channel: m.channel, user: m.user, text: m.text, ts: m.ts, addressed: true });
        return;
      }
      // In channels, mentions arrive as app_mention; an unaddressed thread reply counts only from the task's owner.
      if (!m.thread_ts || m.text.includes(`<@${this.botUserId}>`)) return;
      await this.receive({ team, channel: m.channel, user: m.user, text: m.text, ts: m.ts, threadRoot: m.thread_ts, addressed: false });
    });
    app.command("/switchboard", async ({ command, ack, respond }) => {
      await ack();
      // The same gate as messages: a refused user or channel is told privately, and nothing reaches the
      // gateway (whose reply would be posted in the channel for everyone).
      if (!isAllowed(this.options.allowedUsers, command.user_id)) {
        await respond({ response_type: "ephemeral", text: NOT_ALLOWED_USER });
        return;
      }
      if (!isAllowed(this.options.allowedChannels, command.channel_id)) {
        await respond({ response_type: "ephemeral", text: NOT_ALLOWED_CHANNEL });
        return;
      }
      const sub = command.text.trim().toLowerCase().split(/\s+/)[0] ?? "";
      if (!["cancel", "status", "reset"].includes(sub)) {
        await respond({ response_type: "ephemeral", text: "Usage: /switchboard cancel | status | reset" });
        return;
      }
      const team = command.team_id;
      const user = userId("slack", team, command.user_id);
      const place = slackSessionKey(team, command.channel_id);
      const key = this.gateway.sessionOfActiveTask(place, user) ?? place;
      const result = this.gateway.submit({
        sessionKey: key,
        messageId: `slash:${command.trigger_id}`,
        userId: user,
        text: `/${sub}`,
      });
      if (result.status === "refused") await respond({ response_type: "ephemeral", text: result.text });
    });
    app.action(/^switchboard_(approve|deny)$/, async ({ action, body, ack, client, respond }) => {
      await ack();
      const id = "value" in action && typeof action.value === "string" ? action.value : "";
      const decision = "action_id" in action && action.action_id === "switchboard_approve" ? "approve" : "deny";
      // The clicking user's own team, as their messages carry it: one Slack user id means one person per team only.
      const clicker = body as { user: { id: string; team_id?: string }; team?: { id?: string } | null };
      const team = clicker.user.team_id ?? clicker.team?.id ?? this.teamId;
      const result = this.gateway.decide(id, userId("slack", team, body.user.id), decision);
      if (result.status === "approved" || result.status === "denied") {
        const container = (body as { container?: { channel_id?: string; message_ts?: string } }).container;
        const message = (body as { message?: { text?: string } }).message;
        if (container?.channel_id && container.message_ts) {
          // Replace the buttons with the decision, so nobody clicks a stale button.
          await client.chat
            .update({ channel: container.channel_id, ts: container.message_ts, text: `${message?.text ?? ""}\n— ${result.status} by <@${body.user.id}>`, blocks: [] })
            .catch((error: unknown) => this.options.log.debug({ err: error }, "could not update the approval message"));
        }
      } else {
        await respond({ response_type: "ephemeral", replace_original: false, text: decisionText(result, id) });
      }
    });
    app.error(async (error) => {
      this.options.log.error({ err: error }, "slack handler failed");
    });
  }

  private async receive(m: Incoming): Promise<void> {
    const client = this.app.client;
    if (!isAllowed(this.options.allowedUsers, m.user) || !isAllowed(this.options.allowedChannels, m.channel)) {
      const user = isAllowed(this.options.allowedUsers, m.user);
      const once = user ? `channel:${m.team}:${m.channel}` : `user:${m.team}:${m.user}`;
      if (m.addressed && !this.refused.has(once)) {
        this.refused.add(once);
        await client.chat.postEphemeral({
          channel: m.channel,
          user: m.user,
          text: user ? NOT_ALLOWED_CHANNEL : NOT_ALLOWED_USER,
          ...(m.threadRoot ? { thread_ts: m.threadRoot } : {}),
        });
      }
      return;
    }
    const key = slackSessionKey(m.team, m.channel, m.threadRoot);
    // Known before submit: the turn may start (and want to react to this message) inside it.
    const previous = this.lastMessage.get(key);
    this.lastMessage.set(key, { channel: m.channel, ts: m.ts });
    const result = this.gateway.submit({
      sessionKey: key,
      messageId: `${m.channel}:${m.ts}`,
      userId: userId("slack", m.team, m.user),
      text: stripMention(m.text, this.botUserId),
      addressed: m.addressed,
    });
    if (result.status !== "accepted") {
      if (previous) this.lastMessage.set(key, previous);
      else this.lastMessage.delete(key);
    }
    if (result.status === "refused") {
      await client.chat.postEphemeral({
        channel: m.channel,
        user: m.user,
        text: result.text,
        ...(m.threadRoot ? { thread_ts: m.threadRoot } : {}),
      });
    }
  }

  async start(): Promise<void> {
    await this.app.init();
    const auth = await this.app.client.auth.test();
    this.botUserId = auth.user_id ?? "";
    this.teamId = auth.team_id ?? "";
    this.gateway.register({
      prefix: "slack",
      deliver: (message, receipt) => postReply(this.app.client, message, receipt),
      working: (key) => this.working(key),
    });
    const started = await this.app.start(this.options.port);
    if (!this.options.appToken) this.server = started as Server;
    this.options.log.info(
      { team: this.teamId, bot: this.botUserId, mode: this.options.appToken ? "socket" : "http", port: this.options.appToken ? undefined : this.options.port },
      "slack provider started",
    );
  }

  /** The HTTP receiver's port (useful when 0 was asked for); null in Socket Mode. */
  httpPort(): number | null {
    const address = this.server?.address();
    return address && typeof address === "object" ? address.port : null;
  }

  async stop(): Promise<void> {
    await this.app.stop();
  }

  /**
   * Shows that a turn runs: the assistant thread status where the app has it, else 👀 on the user's
   * message. Cleared when the turn ends.
   */
  private working(key: string): () => void {
    const { channel, threadTs } = parseSlackKey(key);
    const client = this.app.client;
    const log = this.options.log;
    const target = this.lastMessage.get(key);
    const thread = threadTs ?? target?.ts;
    let clear: () => Promise<unknown> = async () => {};
    const started = (async () => {
      if (this.statusAvailable && thread) {
        try {
          await client.assistant.threads.setStatus({ channel_id: channel, thread_ts: thread, status: STATUS_TEXT });
          clear = () => client.assistant.threads.setStatus({ channel_id: channel, thread_ts: thread, status: "" });
          return;
        } catch (error) {
          this.statusAvailable = false;
          log.info({ err: error }, "assistant thread status unavailable; using a reaction instead");
        }
      }
      if (target) {
        await client.reactions.add({ channel: target.channel, timestamp: target.ts, name: WORKING_REACTION });
        clear = () => client.reactions.remove({ channel: target.channel, timestamp: target.ts, name: WORKING_REACTION });
      }
    })().catch((error: unknown) => log.debug({ err: error, session: key }, "could not show the working status"));
    return () => {
      void started.then(() => clear()).catch((error: unknown) => log.debug({ err: error, session: key }, "could not clear the working status"));
    };
  }
}

/** Bolt logs through pino. */
function boltLogger(log: Logger): BoltLogger {
  let level: LogLevel = LogLevel.INFO;
  return {
    debug: (...msg: unknown[]) => log.debug({ bolt: true }, msg.map(String).join(" ")),
    info: (...msg: unknown[]) => log.info({ bolt: true }, msg.map(String).join(" ")),
    warn: (...msg: unknown[]) => log.warn({ bolt: true }, msg.map(String).join(" ")),
    error: (...msg: unknown[]) => log.error({ bolt: true }, msg.map(String).join(" ")),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}
