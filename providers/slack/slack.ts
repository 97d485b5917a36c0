import type { Server } from "node:http";
import { App, LogLevel, type Logger as BoltLogger } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { userId, type GatewayFacade as Gateway, type ProviderSink, type StartProblem } from "../../src/gateway/index.js";
import { AssistantThreads } from "./assistant.js";
import { RETRY_BUDGET_MS, type RateLimitPolicy } from "./errors.js";
import { installTeam, isAllowed, RecentSet, senderTeam, slackSessionKey, stripMention } from "./inbound.js";
import { WorkingIndicators, type MessageRef } from "./indicator.js";
import { installInteractivity, NOT_ALLOWED_CHANNEL, NOT_ALLOWED_USER } from "./interactivity.js";
import { SlackStreams, systemStreamTimers, type StreamTimers } from "./stream.js";
import { postReply } from "./outbound.js";
import { guardedReceiver } from "./receiver.js";
import { slackStartProblem, SocketModeStartError } from "./connect.js";
import { DEFAULT_FILE_LIMITS, type FileLimits } from "../../src/files/limits.js";
import type { InboundFile } from "../../src/files/types.js";
import { systemTimers, type Timers } from "../../src/runtime/deps.js";
import { SlackInboundFiles } from "./files.js";
import { sendSlackFile } from "./send-file.js";

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
  /** Stream replies as they are written (SLACK_STREAMING). Default on. */
  streaming?: boolean;
  log: Logger;
  /** The clock request timestamps are checked against (ms since the epoch); tests inject one. Default Date.now. */
  now?: (() => number) | undefined;
  /** How a rate limit's Retry-After is waited out within the retry budget; tests inject one. Default setTimeout. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Timeouts that pace streamed replies; tests fire them by hand. */
  streamTimers?: StreamTimers | undefined;
  /** MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE (default: the product's defaults). */
  fileLimits?: FileLimits;
  /** Waits between download retries; tests drive them. */
  fileTimers?: Timers;
  /** Tries per file download (default 3) and the first wait between them (default 500 ms, doubling). */
  downloadAttempts?: number;
  downloadBackoffMs?: number;
}

type Incoming = {
  /** The workspace that installed the app (whose conversation this is). */
  team: string;
  /** The sender's own workspace (differs in Slack Connect channels). */
  userTeam: string;
  channel: string;
  user: string;
  text: string;
  ts: string;
  threadRoot?: string | undefined;
  addressed: boolean;
  /** The `files` of the event, as Slack sent them (read in files.ts). */
  files: readonly unknown[];
};

/** The fields of a `message` event this provider reads (Bolt's union type is wider than useful here). */
type MessageFields = {
  subtype?: string;
  bot_id?: string;
  user?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  channel: string;
  channel_type: string;
  team?: string;
  user_team?: string;
  files?: unknown[];
};

/** Message subtypes that are still a person writing: a reply also sent to the channel, text with an upload. */
const USER_SUBTYPES = new Set(["thread_broadcast", "file_share"]);

/** How long the start's auth.test may take (the connection's own deadline is longer; this frees the socket). */
const PROBE_TIMEOUT_MS = 20_000;

const filesOf = (event: { files?: unknown }): readonly unknown[] => (Array.isArray(event.files) ? event.files : []);

/** The Slack provider: DMs and channel threads become sessions; replies go back into the same thread. */
export class SlackProvider {
  readonly app: App;
  /** What the gateway delivers through (registered at start). */
  readonly sink: ProviderSink;
  /** The user whose message a session's turn answers (its streamed reply is addressed to them). */
  private readonly lastSender = new Map<string, string>();
  private botUserId = "";
  private teamId = "";
  private server: Server | null = null;
  /** The receiver was started (or is starting): stop() has something to stop. */
  private appStarted = false;
  private readonly refused = new Set<string>();
  /** `channel:ts` of messages already handed to the gateway: a DM mention arrives as message.im and app_mention. */
  private readonly seen = new RecentSet(10_000);
  private readonly inboundFiles: SlackInboundFiles;
  private readonly indicators: WorkingIndicators;
  private readonly assistant: AssistantThreads;
  private readonly rateLimit: RateLimitPolicy;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: SlackOptions,
  ) {
    const clientOptions = {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      retryConfig: { retries: options.maxRetries, factor: 2, maxRetryTime: RETRY_BUDGET_MS },
      // A 429 comes back to us instead of the client sleeping (and pausing every other call) for its Retry-After.
      rejectRateLimitedCalls: true,
    };
    const logger = boltLogger(options.log);
    this.app = new App({
      token: options.botToken,
      ...(options.appToken
        ? {
            appToken: options.appToken,
            socketMode: true,
            port: options.port,
            // The socket client gets its own Web API options: with ours (a few retries, 429s handed back) one
            // failed apps.connections.open during a reconnect would end reconnecting for good, a deaf bot. Its
            // own defaults keep retrying that call with backoff.
            installerOptions: { clientOptions: { ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}) } },
          }
        : { receiver: guardedReceiver({ signingSecret: options.signingSecret ?? "", port: options.port, logger, log: options.log, now: options.now }) }),
      clientOptions,
      logger,
      deferInitialization: true,
    });
    this.rateLimit = {
      retries: options.maxRetries,
      budgetMs: RETRY_BUDGET_MS,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => systemTimers.setTimeout(resolve, ms))),
    };
    this.indicators = new WorkingIndicators(this.app.client, gateway, options.log, (key) => this.resumedMessage(key));
    this.assistant = new AssistantThreads(this.app.client, options.log);
    this.inboundFiles = new SlackInboundFiles({
      client: this.app.client,
      token: options.botToken,
      apiUrl: options.apiUrl,
      limits: options.fileLimits ?? DEFAULT_FILE_LIMITS,
      timers: options.fileTimers ?? systemTimers,
      log: options.log,
      ...(options.downloadAttempts !== undefined ? { attempts: options.downloadAttempts } : {}),
      ...(options.downloadBackoffMs !== undefined ? { backoffMs: options.downloadBackoffMs } : {}),
    });
    const streams =
      options.streaming === false
        ? undefined
        : new SlackStreams({
            client: this.app.client,
            recipient: (key) => this.recipient(key),
            pending: (key) => gateway.reads.pendingReplies(key),
            rateLimit: this.rateLimit,
            log: options.log,
            now: options.now ?? Date.now,
            timers: options.streamTimers ?? systemStreamTimers,
          });
    this.sink = {
      prefix: "slack",
      deliver: (message, receipt) => postReply(this.app.client, message, receipt, this.rateLimit, streams),
      ...(streams
        ? {
            stream: (key: string, delta: { agent: string; depth: number; text: string }) => streams.write(key, delta),
            resetStream: (key: string, who: { agent: string; depth: number }) => streams.reset(key, who),
          }
        : {}),
      working: (key) => {
        streams?.turnStarted(key);
        const stop = this.indicators.show(key);
        return () => {
          stop();
          streams?.turnEnded(key);
        };
      },
      clearIndicator: (key, data) => this.indicators.clear(key, data),
      deliverFile: (file) => sendSlackFile(this.app.client, file, this.rateLimit),
    };
    this.install();
  }

  private install(): void {
    const app = this.app;
    app.event("app_mention", async ({ event, body }) => {
      if (!event.user || event.bot_id) return;
      // A DM reaches us as message.im, which is the one that counts (Slack may send both for a mention there).
      if (event.channel.startsWith("D")) return;
      const team = installTeam(body, this.teamId);
      // A top-level mention starts a thread rooted at it; in a thread it joins that thread's session.
      await this.receive({
        team,
        userTeam: senderTeam(event, team),
        channel: event.channel,
        user: event.user,
        text: event.text,
        ts: event.ts,
        threadRoot: event.thread_ts ?? event.ts,
        addressed: true,
        files: filesOf(event),
      });
    });
    app.message(async ({ message, body }) => {
      const m = message as unknown as MessageFields;
      // Edits, deletions, joins and bot posts carry a subtype (or a bot_id): none of them is a new user message.
      if ((m.subtype !== undefined && !USER_SUBTYPES.has(m.subtype)) || m.bot_id) return;
      if (!m.user || m.user === this.botUserId) return;
      const files = filesOf(m);
      if (!m.text && files.length === 0) return;
      const team = installTeam(body, this.teamId);
      const base = { team, userTeam: senderTeam(m, team), channel: m.channel, user: m.user, text: m.text ?? "", ts: m.ts, files };
      if (m.channel_type === "im") {
        // An assistant thread, or a thread in the DM: each thread is its own conversation.
        await this.receive({ ...base, threadRoot: m.thread_ts, addressed: true });
        return;
      }
      // In channels, mentions arrive as app_mention; an unaddressed thread reply counts only from the task's owner.
      if (!m.thread_ts || base.text.includes(`<@${this.botUserId}>`)) return;
      await this.receive({ ...base, threadRoot: m.thread_ts, addressed: false });
    });
    app.event("assistant_thread_started", async ({ event }) => {
      const thread = event.assistant_thread;
      if (!isAllowed(this.options.allowedUsers, thread.user_id) || !isAllowed(this.options.allowedChannels, thread.channel_id)) return;
      await this.assistant.started(event);
    });
    installInteractivity(app, {
      gateway: this.gateway,
      allowedUsers: this.options.allowedUsers,
      allowedChannels: this.options.allowedChannels,
      log: this.options.log,
      teamId: () => this.teamId,
    });
    app.error(async (error) => {
      this.options.log.error({ err: error }, "slack handler failed");
    });
  }

  private async receive(m: Incoming): Promise<void> {
    const messageId = `${m.channel}:${m.ts}`;
    if (this.seen.has(messageId)) return;
    const client = this.app.client;
    if (!isAllowed(this.options.allowedUsers, m.user) || !isAllowed(this.options.allowedChannels, m.channel)) {
      const user = isAllowed(this.options.allowedUsers, m.user);
      const once = user ? `channel:${m.team}:${m.channel}` : `user:${m.userTeam}:${m.user}`;
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
    const user = userId("slack", m.userTeam, m.user);
    const addressed = m.addressed || (await this.continuesOwnThread(key, user));
    const text = m.text.trim() === "" ? "" : stripMention(m.text, this.botUserId);
    // Files are fetched for whoever may talk here (the conversation's owner, or anyone addressing a free one), and
    // only by the gateway, once the message is neither a retry of an event it stored nor over the flood limit.
    const fetching = m.files.length > 0 && addressed && (await this.mayTalk(key, user));
    if (text === "" && !fetching) {
      this.seen.add(messageId);
      return;
    }
    // Known before submit: the turn may start (and want to react to this message) inside it.
    const undo = this.indicators.noteMessage(key, { channel: m.channel, ts: m.ts });
    const result = await this.gateway.submit({
      sessionKey: key,
      messageId,
      userId: user,
      text,
      addressed,
      ...(fetching ? { fetchFiles: () => this.downloadFiles(key, m.files) } : {}),
    });
    if (result.status === "accepted") {
      this.lastSender.delete(key);
      this.lastSender.set(key, user);
      if (this.lastSender.size > 10_000) this.lastSender.delete(this.lastSender.keys().next().value!);
    }
    if (result.status !== "accepted") undo();
    // Ignored chatter stays unseen: the same message may still come as an app_mention that counts.
    if (result.status !== "ignored") this.seen.add(messageId);
    // Over USER_MESSAGES_PER_MINUTE: told once (only them), then silence until their bucket is full again.
    if (result.status === "refused" || (result.status === "limited" && !result.quiet)) {
      await client.chat.postEphemeral({
        channel: m.channel,
        user: m.user,
        text: result.text,
        ...(m.threadRoot ? { thread_ts: m.threadRoot } : {}),
      });
    }
  }

  /**
   * A reply without a mention in a channel thread whose conversation the sender started: with no task running
   * there, the owner of the thread's last task simply goes on talking to the bot.
   */
  private async continuesOwnThread(key: string, user: string): Promise<boolean> {
    if (await this.gateway.activeTask(key)) return false;
    return (await this.gateway.reads.lastTaskOwner(key)) === user;
  }

  private async mayTalk(key: string, user: string): Promise<boolean> {
    const task = await this.gateway.activeTask(key);
    return !task || task.ownerId === user;
  }

  /** The message's files, downloaded; the user is told which could not be read (the rest goes on). */
  private async downloadFiles(key: string, raw: readonly unknown[]): Promise<InboundFile[]> {
    const { files, notices } = await this.inboundFiles.read(raw);
    if (notices.length > 0) await this.gateway.notify(key, notices.join("\n"));
    return files;
  }

  /**
   * Whom a streamed reply is for (chat.startStream needs the recipient outside DMs): who last wrote to the bot here,
   * else (after a restart) the running task's owner.
   */
  private async recipient(key: string): Promise<{ user: string; team: string } | null> {
    const owner = this.lastSender.get(key) ?? (await this.gateway.activeTask(key))?.ownerId ?? "";
    const [source, team, user] = owner.split(":");
    return source === "slack" && team && user ? { user, team } : null;
  }

  /** The message a resumed request answers (its id is `channel:ts`), for a process that never saw it arrive. */
  private async resumedMessage(key: string): Promise<MessageRef | undefined> {
    const request = (await this.gateway.reads.unfinishedRequests(key)).find((r) => r.kind === "message" && (r.status === "pending" || r.status === "running"));
    const match = request && /^([A-Z0-9]+):(\d+\.\d+)$/.exec(request.externalId);
    return match ? { channel: match[1]!, ts: match[2]! } : undefined;
  }

  /**
   * Connects (called again after a failure, see PlatformConnection). The bot token is checked first with one
   * bounded auth.test and no retries, so an unreachable Slack or a refused token is known at once; Bolt's own
   * client retries for minutes.
   */
  async start(signal?: AbortSignal): Promise<void> {
    const probe = new WebClient(this.options.botToken, {
      ...(this.options.apiUrl ? { slackApiUrl: this.options.apiUrl } : {}),
      retryConfig: { retries: 0 },
      timeout: PROBE_TIMEOUT_MS,
      logger: boltLogger(this.options.log, true),
    });
    const auth = await probe.auth.test();
    signal?.throwIfAborted();
    await this.app.init();
    signal?.throwIfAborted();
    this.botUserId = auth.user_id ?? "";
    this.teamId = auth.team_id ?? "";
    this.gateway.register(this.sink);
    this.appStarted = true;
    let started: unknown;
    try {
      started = await this.app.start(this.options.port);
    } catch (error) {
      throw this.options.appToken ? new SocketModeStartError(error) : error;
    }
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

  /** Why a start failed: Slack unreachable, a token refused, or something else (see slackStartProblem). */
  problem(error: unknown): StartProblem {
    return slackStartProblem(error, this.options.apiUrl);
  }

  /** "bot U0BOT in team T0TEAM (Socket Mode)" once started. */
  identity(): string {
    return `bot ${this.botUserId} in team ${this.teamId} (${this.options.appToken ? "Socket Mode" : `HTTP events on port ${this.httpPort() ?? this.options.port}`})`;
  }

  async stop(): Promise<void> {
    // Bolt refuses to stop a receiver that never started (a start that failed before it).
    if (!this.appStarted) return;
    this.appStarted = false;
    this.server = null;
    await this.app.stop();
  }
}

/** Bolt logs through pino; `quiet`: all of it at debug (what failed is said elsewhere, in one line). */
function boltLogger(log: Logger, quiet = false): BoltLogger {
  let level: LogLevel = LogLevel.INFO;
  const at =
    (pinoLevel: "debug" | "info" | "warn" | "error") =>
    (...msg: unknown[]) =>
      log[quiet ? "debug" : pinoLevel]({ bolt: true }, msg.map(String).join(" "));
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}
