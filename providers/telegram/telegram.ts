import type { Server } from "node:http";
import { randomBytes } from "node:crypto";
import { autoRetry } from "@grammyjs/auto-retry";
import { run, sequentialize, type RunnerHandle } from "@grammyjs/runner";
import { apiThrottler } from "@grammyjs/transformer-throttler";
import { Api, Bot, type Context } from "grammy";
import type { Message } from "grammy/types";
import type { Logger } from "pino";
import { COMMAND_MENU, decisionText, userId, sessionKey, type GatewayFacade as Gateway, type Leadership, type StartProblem } from "../../src/gateway/index.js";
import { backgroundTimers } from "../../src/runtime/deps.js";
import { isAddressed, isAllowed, isForeignCommand, isServiceMessage, MAX_TEXT_BYTES, messageText, parseTelegramKey, senderOf, telegramSessionKey } from "./inbound.js";
import { ReplyStreams, systemStreamClock, type StreamClock } from "./stream.js";
import { telegramStartProblem } from "./connect.js";
import { startWebhookServer } from "./webhook.js";
import { DEFAULT_FILE_LIMITS, tooManyReason, type FileLimits } from "../../src/files/limits.js";
import type { InboundFile } from "../../src/files/types.js";
import { systemTimers, type Timers } from "../../src/runtime/deps.js";
import { Albums } from "./album.js";
import { sendTelegramFile } from "./send-file.js";
import { fetchTelegramFiles, unsupportedContent, wantedFiles, type WantedFile } from "./files.js";

export interface TelegramOptions {
  token: string;
  apiRoot?: string | undefined;
  allowedUsers: string[];
  webhook?: { url: string; secret?: string | undefined; port: number } | undefined;
  throttle: boolean;
  maxRetries: number;
  /** How replies stream (TELEGRAM_STREAMING): drafts in private chats, edits of one message, or not at all. Default draft. */
  streaming?: "draft" | "edit" | "off";
  log: Logger;
  /** How often the typing indicator is renewed (Telegram shows it for about 5 s). */
  typingEveryMs?: number;
  /** Timers for the typing indicator; tests drive them by hand. */
  timers?: { setInterval(fn: () => void, ms: number): unknown; clearInterval(handle: unknown): void };
  /** Time and timeouts that pace streamed previews; tests drive them by hand. */
  streamClock?: StreamClock;
  /** MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE (default: the product's defaults). */
  fileLimits?: FileLimits;
  /** Waits of albums and download retries; tests drive them by hand. */
  fileTimers?: Timers;
  /** Tries per file download (default 3) and the first wait between them (default 500 ms, doubling). */
  downloadAttempts?: number;
  downloadBackoffMs?: number;
}

// Not business_message (nor edited_/deleted_business_messages): replies would have to go out through the business
// connection, which Switchboard does not do. my_chat_member is not asked for either: nothing here acts on it.
export const ALLOWED_UPDATES = ["message", "edited_message", "callback_query"] as const;
const NOT_READABLE = "I can't read that kind of message. Send text, photos, documents, voice notes, audio or video instead.";
const NO_EDITS = "I don't see edits to earlier messages; please send the correction as a new message.";
const NOT_ALLOWED = "Sorry, this bot is private and you are not on its list of users.";

/** The Telegram provider: updates → gateway messages with session keys; replies → formatted, chunked messages. */
export class TelegramProvider {
  readonly bot: Bot;
  private runner: RunnerHandle | null = null;
  private polling: Leadership | null = null;
  private server: Server | null = null;
  private readonly refused = new Set<string>();
  /** Group → supergroup moves already handed to the gateway (Telegram announces each in both chats). */
  private readonly moved = new Set<string>();
  private readonly streams: ReplyStreams;
  /** Renews "typing…" of a running turn at once (after a streamed message ended it on screen). */
  private readonly typingNow = new Map<string, () => void>();
  private readonly albums: Albums;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: TelegramOptions,
  ) {
    this.bot = new Bot(options.token, options.apiRoot ? { client: { apiRoot: options.apiRoot } } : {});
    if (options.throttle) this.bot.api.config.use(apiThrottler());
    // Honours 429 retry_after and retries transient 5xx/network errors, a bounded number of times.
    // Network errors are rethrown instead of retried forever; the gateway retries the delivery later.
    this.bot.api.config.use(autoRetry({ maxRetryAttempts: options.maxRetries, maxDelaySeconds: 120, rethrowHttpErrors: true }));
    // The runner is told to be silent (it would print raw errors, with the token in their URLs, to the
    // console); failed polls are logged here instead, after auto-retry gave up on them.
    this.bot.api.config.use(async (prev, method, payload, signal) => {
      const polling = method === "getUpdates";
      try {
        const response = await prev(method, payload, signal);
        if (polling && !response.ok) options.log.warn({ code: response.error_code, description: response.description }, "telegram getUpdates failed");
        return response;
      } catch (error) {
        // A network failure; an aborted poll is the runner stopping.
        if (polling && !signal?.aborted) options.log.warn({ err: error }, "telegram getUpdates failed");
        throw error;
      }
    });
    // The runner hands every failed update here, and a throwing error handler would reach the console raw.
    this.bot.catch((err) => {
      try {
        options.log.error({ err: err.error, update: err.ctx.update.update_id }, "telegram update failed");
      } catch {
        // Nothing left to report to.
      }
    });
    this.streams = new ReplyStreams({
      mode: options.streaming ?? "draft",
      // Previews skip what Telegram refuses now (a 429 pauses them) instead of waiting in the retry plugin.
      previewApi: new Api(options.token, options.apiRoot ? { apiRoot: options.apiRoot } : {}),
      api: this.bot.api,
      memory: gateway,
      remembered: (key) => gateway.reads.indicator("telegram", key),
      pending: (key) => gateway.reads.pendingReplies(key),
      unfinished: async (key) => (await gateway.reads.unfinishedRequests(key)).length,
      log: options.log,
      clock: options.streamClock ?? systemStreamClock,
      typing: (key) => this.typingNow.get(key)?.(),
    });
    this.albums = new Albums(options.fileTimers ?? systemTimers, (parts) => this.submitFiles(parts));
    this.install();
  }

  private install(): void {
    const bot = this.bot;
    // Per-chat order for messages. Handlers only hand the message to the gateway (which has its own
    // per-session queue), so a command never waits behind a running turn.
    bot.use(sequentialize((ctx: Context) => (ctx.message?.text?.startsWith("/") || ctx.callbackQuery ? undefined : ctx.chat?.id.toString())));
    bot.on("edited_message", (ctx) => {
      const edit = ctx.editedMessage;
      // Only private chats hear that edits are not read, and only people who may use the bot.
      if (edit.chat.type !== "private" || !isAllowed(this.options.allowedUsers, senderOf(edit))) return;
      return this.gateway.notify(telegramSessionKey(edit), NO_EDITS);
    });
    bot.on("callback_query:data", (ctx) => this.onButton(ctx));
    bot.on("callback_query", (ctx) => this.answer(ctx));
    bot.on("message", (ctx) => this.onMessage(ctx));
  }

  /**
   * Handlers never call the Bot API for what they say: notices go through the gateway's outbox, so a slow
   * Bot API never holds an update (nor, in webhook mode, Telegram's request) and a failed send is retried.
   * Only the answer to a button press is direct (Telegram needs it to stop the button's spinner).
   */
  private async answer(ctx: Context, options?: { text: string; show_alert?: boolean }): Promise<void> {
    await ctx.answerCallbackQuery(options).catch((error: unknown) => this.options.log.warn({ err: error, user: ctx.from?.id }, "could not answer a button press"));
  }

  /** Approve/Deny buttons: `ap:y:<id>` or `ap:n:<id>`. Only the task's owner decides; a second click is told. */
  private async onButton(ctx: Context): Promise<void> {
    // The answer to a button press is shown to the presser alone, so a refusal here is private wherever the button is.
    if (!isAllowed(this.options.allowedUsers, ctx.from)) return this.answer(ctx, { text: NOT_ALLOWED });
    const match = /^ap:([yn]):(\S{1,40})$/.exec(ctx.callbackQuery?.data ?? "");
    if (!match) {
      await this.answer(ctx);
      return;
    }
    const [, choice, id] = match;
    if (!ctx.from) return this.answer(ctx);
    const decision = choice === "y" ? "approve" : "deny";
    let result = await this.gateway.decide(id!, userId("telegram", ctx.from.id), decision);
    if (result.status === "not_owner" && (await this.decidesForGroup(ctx, id!))) {
      result = await this.gateway.decide(id!, userId("telegram", ctx.callbackQuery!.message!.chat.id), decision);
    }
    await this.answer(ctx, { text: decisionText(result, id!), show_alert: result.status === "not_owner" });
    if (result.status === "approved" || result.status === "denied" || result.status === "already_decided") {
      const who = ctx.from?.username ? `@${ctx.from.username}` : (ctx.from?.first_name ?? "the owner");
      const verdict = result.status === "already_decided" ? result.decided : `${result.status} by ${who}`;
      const original = ctx.callbackQuery?.message && "text" in ctx.callbackQuery.message ? ctx.callbackQuery.message.text : undefined;
      if (original !== undefined) {
        // The buttons go away and the message says what was decided.
        await ctx.editMessageText(`${original}\n— ${verdict}`).catch((error: unknown) => this.options.log.debug({ err: error }, "could not update the approval message"));
      }
    }
  }

  /**
   * A task an anonymous admin started belongs to the group itself (that is who wrote). Its approval buttons are
   * pressed from the admin's own account, so the group decides through any of its administrators.
   */
  private async decidesForGroup(ctx: Context, approvalId: string): Promise<boolean> {
    const chat = ctx.callbackQuery?.message?.chat;
    if (!chat || chat.type === "private" || !ctx.from) return false;
    if ((await this.gateway.reads.approvalOwner(approvalId)) !== userId("telegram", chat.id)) return false;
    try {
      const member = await ctx.api.getChatMember(chat.id, ctx.from.id);
      return member.status === "creator" || member.status === "administrator";
    } catch (error) {
      this.options.log.warn({ err: error, chat: chat.id }, "could not check whether the presser is an admin of the group");
      return false;
    }
  }

  /** Returns once the message is stored, so the per-chat order holds (grammY's sequentialize waits for it). */
  private async onMessage(ctx: Context): Promise<void> {
    const message = ctx.message!;
    // Joins, pins, topics opened, migrations…: nobody said anything to the bot, so nothing is stored or answered.
    if (isServiceMessage(message)) return this.onServiceMessage(message);
    const me = { id: ctx.me.id, username: ctx.me.username };
    const text = messageText(message, me);
    const raw = message.text ?? message.caption;
    // `/cancel@OtherBot` in a group is another bot's business (the gateway would read it as our /cancel).
    if ((raw !== undefined && isForeignCommand(raw, me)) || (text !== null && isForeignCommand(text, me))) return;
    const key = telegramSessionKey(message);
    const addressed = isAddressed(message, me);
    const sender = senderOf(message);
    if (!isAllowed(this.options.allowedUsers, sender)) return this.refuse(message, sender, addressed);
    const wanted = wantedFiles(message, this.fileLimits);
    if (text === null && wanted.length === 0) {
      if (addressed) await this.gateway.notify(key, unsupportedContent(message) ?? NOT_READABLE);
      return;
    }
    const bytes = text === null ? 0 : Buffer.byteLength(text, "utf8");
    if (bytes > MAX_TEXT_BYTES) {
      if (addressed) {
        await this.gateway.notify(key, `That message is too long for me (${Math.ceil(bytes / 1024)} KB; the limit is 16 KB). Please shorten it or send it in parts.`);
      }
      return;
    }
    // An album's parts come as separate updates: gathered, then handled as one message (album.ts).
    if (message.media_group_id !== undefined && wanted.length > 0) return this.albums.add(message);
    await this.submitFiles([message]);
  }

  private get fileLimits(): FileLimits {
    return this.options.fileLimits ?? DEFAULT_FILE_LIMITS;
  }

  /**
   * One message (or an album's parts, oldest first) with its files: the gateway fetches them once the message is
   * neither a re-delivery nor over the sender's flood limit. A file that cannot be read is named to the user with
   * the reason, and the rest of the message still goes to the agents.
   */
  private async submitFiles(parts: Message[]): Promise<void> {
    const first = parts[0]!;
    const me = { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
    const key = telegramSessionKey(first);
    const sender = senderOf(first);
    const userKey = userId("telegram", sender?.id ?? first.chat.id);
    const addressed = parts.some((p) => isAddressed(p, me));
    const text = parts
      .map((p) => messageText(p, me))
      .filter((t): t is string => t !== null)
      .join("\n\n");
    const wanted = parts.flatMap((p) => wantedFiles(p, this.fileLimits));
    const result = await this.gateway.submit({
      sessionKey: key,
      messageId: `${first.chat.id}:${first.message_id}`,
      userId: userKey,
      text,
      addressed,
      ...(wanted.length > 0 ? { fetchFiles: () => this.fetchFiles(key, userKey, addressed, wanted) } : {}),
    });
    if (result.status === "refused") await this.gateway.notify(key, result.text);
    // Over USER_MESSAGES_PER_MINUTE: told once, then silence until their bucket is full again.
    if (result.status === "limited" && !result.quiet) await this.gateway.notify(key, result.text);
  }

  /** Downloads a message's files; what could not be read is told to the chat (the rest goes on). */
  private async fetchFiles(key: string, userKey: string, addressed: boolean, wanted: WantedFile[]): Promise<InboundFile[]> {
    // Chatter in a group that nobody addressed to the bot reaches the agents only from the running task's owner:
    // nobody else's files are downloaded.
    if (!addressed && (await this.gateway.activeTask(key))?.ownerId !== userKey) return [];
    const notices: string[] = [];
    const { maxFilesPerMessage } = this.fileLimits;
    if (wanted.length > maxFilesPerMessage) notices.push(tooManyReason(wanted.length, maxFilesPerMessage));
    const files = await fetchTelegramFiles(wanted.slice(0, maxFilesPerMessage), {
      api: this.bot.api,
      token: this.options.token,
      apiRoot: this.options.apiRoot,
      limits: this.fileLimits,
      timers: this.options.fileTimers ?? systemTimers,
      log: this.options.log,
      ...(this.options.downloadAttempts !== undefined ? { attempts: this.options.downloadAttempts } : {}),
      ...(this.options.downloadBackoffMs !== undefined ? { backoffMs: this.options.downloadBackoffMs } : {}),
    });
    for (const file of files) {
      if (!file.ok) notices.push(file.reason);
      else if (file.note) notices.push(file.note);
    }
    if (notices.length > 0) await this.gateway.notify(key, notices.join("\n"));
    return files;
  }

  /**
   * Someone not on TELEGRAM_ALLOWED_USERS: nothing is stored. They are told once, and only in their private chat
   * with the bot; in a group the bot stays silent (a refusal there would be public).
   */
  private async refuse(message: Message, sender: { id: number } | undefined, addressed: boolean): Promise<void> {
    const who = String(sender?.id ?? "unknown");
    // Group chatter from people who are not users of the bot is routine; a message to the bot is worth a line.
    this.options.log[addressed ? "info" : "debug"]({ user: who, chat: message.chat.type }, "telegram user not on TELEGRAM_ALLOWED_USERS");
    if (message.chat.type !== "private" || this.refused.has(who)) return;
    this.refused.add(who);
    await this.gateway.notify(telegramSessionKey(message), NOT_ALLOWED);
  }

  /**
   * The one service message acted on: a group that became a supergroup. Telegram says so in both chats (the old
   * group's message carries `migrate_to_chat_id`, the new supergroup's `migrate_from_chat_id`); the conversation
   * moves once. Replies still pending for the old chat are re-sent by the gateway to the new one.
   */
  private async onServiceMessage(message: Message): Promise<void> {
    const move =
      message.migrate_to_chat_id !== undefined
        ? { from: message.chat.id, to: message.migrate_to_chat_id }
        : message.migrate_from_chat_id !== undefined
          ? { from: message.migrate_from_chat_id, to: message.chat.id }
          : null;
    if (!move || this.moved.has(`${move.from}>${move.to}`)) return;
    this.moved.add(`${move.from}>${move.to}`);
    this.options.log.info({ from: move.from, to: move.to }, "telegram group became a supergroup; moving its conversation");
    await this.gateway.moveSession(sessionKey("telegram", move.from), sessionKey("telegram", move.to));
  }

  /**
   * Connects (called again after a failure, see PlatformConnection): every Bot API call gives up when `signal`
   * aborts. getMe is called directly: grammY's bot.init() retries network errors forever, which held the whole
   * start for minutes when Telegram could not be reached.
   */
  async start(signal?: AbortSignal): Promise<void> {
    const { log, webhook } = this.options;
    // grammY types its signal with the abort-controller package's class; Node's is the same at runtime.
    const abort = signal as Parameters<Api["getMe"]>[0];
    if (!this.bot.isInited()) this.bot.botInfo = await this.bot.api.getMe(abort);
    await this.bot.api.setMyCommands(
      COMMAND_MENU.map(({ command, description }) => ({ command, description })),
      undefined,
      abort,
    );
    if (!webhook) await this.bot.api.deleteWebhook(undefined, abort);
    signal?.throwIfAborted();
    // Messages a previous process streamed (edit mode) are known before the first reply goes out, so it takes them over.
    const streamed = await this.gateway.reads.indicators("telegram");
    for (const { sessionKey: key, data } of streamed) this.streams.adopt(key, data);
    this.gateway.register({
      prefix: "telegram",
      deliver: (message, receipt) => this.streams.deliver(message, receipt),
      working: (key) => {
        this.streams.turnStarted(key);
        const stop = this.typing(key);
        return () => {
          stop();
          this.streams.turnEnded(key);
        };
      },
      stream: (key, delta) => this.streams.delta(key, delta),
      resetStream: (key, who) => this.streams.reset(key, who),
      deliverFile: (file) => sendTelegramFile(this.bot.api, file),
      // No clearIndicator: the rows are this provider's until a reply takes their messages over (settled below).
    });
    // Streamed messages no reply or turn will take over any more are deleted; the others wait for theirs.
    for (const { sessionKey: key } of streamed) await this.streams.settleRemembered(key);
    if (webhook) {
      const secret = webhook.secret ?? randomBytes(24).toString("hex");
      const path = new URL(webhook.url).pathname;
      // Not grammY's webhookCallback: it holds the response until the middleware is done and rejects
      // after 10 s, so a slow Bot API turned into an unhandled rejection and Telegram resending the update.
      this.server = await startWebhookServer(webhook.port, { path, secret, log, handle: (update) => this.bot.handleUpdate(update) });
      try {
        await this.bot.api.setWebhook(webhook.url, { secret_token: secret, allowed_updates: [...ALLOWED_UPDATES] }, abort);
      } catch (error) {
        await this.closeServer();
        throw error;
      }
      log.info({ bot: this.bot.botInfo.username, port: this.webhookPort(), path }, "telegram webhook listening");
    } else {
      // Long polling runs on one replica at a time (Telegram answers a second getUpdates with 409); another
      // replica takes it over when that one dies. Every replica sends replies.
      const { id, leaseMs } = this.gateway.replica;
      this.polling = this.gateway.reads.leadership({
        key: "@telegram-polling",
        replica: id,
        ttlMs: leaseMs,
        log,
        onGain: () => this.startPolling(),
        onLose: () => this.stopPolling(),
      });
      await this.polling.start();
      if (!this.polling.leading) log.info({ bot: this.bot.botInfo.username }, "telegram long polling runs on another replica; this one takes over if it stops");
    }
  }

  /** Why a start failed: Telegram unreachable, the token refused, or something else (see telegramStartProblem). */
  problem(error: unknown): StartProblem {
    return telegramStartProblem(error, this.options.apiRoot);
  }

  /** "@switchboard_bot (long polling)" once started. */
  identity(): string {
    const how = this.options.webhook ? `webhook ${this.options.webhook.url}` : this.polling?.leading === false ? "long polling on another replica" : "long polling";
    return `@${this.bot.botInfo.username} (${how})`;
  }

  private startPolling(): void {
    const { log } = this.options;
    const runner = run(this.bot, { runner: { fetch: { allowed_updates: [...ALLOWED_UPDATES] }, silent: true } });
    this.runner = runner;
    // The runner gives up on a revoked token (401), a second instance (409, e.g. a replica that has not yet
    // noticed it lost the job) or hours of failures; its task then rejects, which nobody else awaits.
    runner.task()?.catch((error: unknown) => {
      if (this.runner !== runner) return;
      this.runner = null;
      if ((error as { error_code?: number }).error_code === 401) {
        // Nothing to retry: the token itself is refused.
        log.error({ err: error }, "telegram long polling stopped: the bot token is revoked or wrong (401); set TELEGRAM_BOT_TOKEN and restart the service");
        return;
      }
      log.error({ err: error }, "telegram long polling stopped; it starts again shortly if this replica still runs it");
      backgroundTimers.setTimeout(() => {
        if (this.polling?.leading && this.runner === null) this.startPolling();
      }, this.gateway.replica.leaseMs);
    });
    log.info({ bot: this.bot.botInfo.username }, "telegram long polling started");
  }

  private async stopPolling(): Promise<void> {
    const runner = this.runner;
    this.runner = null;
    if (runner?.isRunning()) await runner.stop();
  }

  /** The port the webhook server listens on (useful when 0 was asked for). */
  webhookPort(): number | null {
    const address = this.server?.address();
    return address && typeof address === "object" ? address.port : null;
  }

  async stop(): Promise<void> {
    await this.albums.flush();
    const polling = this.polling;
    this.polling = null;
    await polling?.stop();
    await this.stopPolling();
    await this.closeServer();
  }

  private async closeServer(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Shows "typing…" now and renews it until the returned function is called. */
  private typing(key: string): () => void {
    const { chatId, threadId } = parseTelegramKey(key);
    // oxlint-disable-next-line eslint/no-restricted-globals -- the default of the injected interval timers above
    const timers = this.options.timers ?? { setInterval, clearInterval };
    const send = () => {
      this.bot.api
        .sendChatAction(chatId, "typing", threadId !== undefined ? { message_thread_id: threadId } : {})
        .catch((error: unknown) => this.options.log.debug({ err: error, session: key }, "typing indicator failed"));
    };
    send();
    const timer = timers.setInterval(send, this.options.typingEveryMs ?? 4000);
    this.typingNow.set(key, send);
    return () => {
      timers.clearInterval(timer);
      if (this.typingNow.get(key) === send) this.typingNow.delete(key);
    };
  }
}
