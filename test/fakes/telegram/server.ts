// An HTTP fake of the Telegram Bot API (POST /bot<token>/<method>).
//
// Tests point the REAL grammy client at it (`new Bot(token, { client: {
// apiRoot: fake.url } })`), push updates, and inspect what the bot sent.
// Requests are validated as strictly as Telegram does (see validate.ts and
// html.ts), so a bot bug — an unescaped `<`, a 4097-character message, a
// reply to a message that does not exist — fails the test the way it would
// fail in production instead of being silently recorded.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isRecord, optInt, optJson, TgError, type Params } from "./common.js";
import { stopDraft, visibleDraft, type DraftUpdate } from "./drafts.js";
import { TG_ERRORS } from "./errors.js";
import { download, FILE_METHODS, filesOf, parseMultipart, type SentFile, type StoredFile } from "./files.js";
import { FloodControl, type FloodLimits } from "./flood.js";
import { commandsKey, METHODS, WEBHOOK_CONFLICT } from "./methods.js";
import { State, type ChatAction, type ChatEvent, type SentMessage, type TgObject, type TgUpdate, type VisibleMessage } from "./state.js";
import { buildUserMessage, type UserMessageOptions } from "./updates.js";
import type { BotCommand } from "./validate.js";

export type { MessageEntity } from "./common.js";
export type { ChatAction, ChatEvent, SentMessage, TgUpdate, VisibleMessage } from "./state.js";
export type { UserMessageOptions } from "./updates.js";
export type { DraftUpdate } from "./drafts.js";
export type { FloodLimits, FloodWindow } from "./flood.js";
export { TG_ERRORS } from "./errors.js";
export type { SentFile, StoredFile } from "./files.js";
export { DOWNLOAD_LIMIT } from "./files.js";
export { DRAFT_ERRORS, DRAFT_TTL_MS } from "./drafts.js";
export { FLOOD_DEFAULTS } from "./flood.js";

export type TgResponse =
  | { ok: true; result: unknown }
  | { ok: false; error_code: number; description: string; parameters?: { retry_after?: number; migrate_to_chat_id?: number } };

export interface ApiCall {
  /** As the client spelled it (grammy: camelCase). Method names are case-insensitive on Telegram. */
  method: string;
  params: Params;
  /** What the fake answered; undefined while a long poll is still open (or if the client gave up on it). */
  response?: TgResponse;
  /** Sequence number shared with chat actions. */
  at: number;
}

/** An error to inject; a 429 gets "Too Many Requests: retry after N" and parameters.retry_after. */
export type Failure =
  | { error_code: 429; retry_after: number; description?: string }
  | { error_code: number; description: string; retry_after?: number; migrate_to_chat_id?: number };

type Predicate = (params: Params) => boolean;

export interface FakeTelegram {
  url: string;
  token: string;
  botId: number;
  botUsername: string;
  calls: ApiCall[];
  sent(chatId?: number): SentMessage[];
  /** Every accepted sendMessageDraft (each update of each draft), oldest first. */
  drafts(chatId?: number): DraftUpdate[];
  /** The draft the user sees now in the chat (and topic): null if none, expired (30 s), stopped, or a message was sent after it. */
  visibleDraft(chatId: number, threadId?: number): DraftUpdate | null;
  /** What the user saw, in order: messages sent, edits, deletions and draft updates (see ChatEvent). */
  timeline(chatId?: number): ChatEvent[];
  /** What the chat (or a forum topic) shows now: its messages, users' and the bot's, minus deleted ones, with edits applied; no drafts. */
  visible(chatId: number, threadId?: number): VisibleMessage[];
  /** The user pressed the stop button of the visible draft (it needs can_stop): pushes and returns the stopped_message_generation update. */
  stopDraft(chatId: number, threadId?: number): TgUpdate;
  actions(chatId?: number): ChatAction[];
  /** Commands set for a scope/language (default scope, no language unless given). */
  commands(scope?: Record<string, unknown>, languageCode?: string): BotCommand[];
  webhook(): { url: string; secret_token?: string } | null;
  /** Queues an update (update_id assigned increasing unless given) and wakes a long poll; returns the update. */
  pushUpdate(update: Omit<TgUpdate, "update_id"> & { update_id?: number }): TgUpdate;
  /** A message from a user, built like Telegram's (see UserMessageOptions); pushes and returns it. */
  userMessage(opts: UserMessageOptions): TgUpdate;
  /**
   * Re-queues an already delivered update with the same update_id, as Telegram does after a
   * restart when the offset was not confirmed. A bot that already confirmed a higher offset
   * drops it on its next getUpdates, like on Telegram; use a fresh Bot to see it.
   */
  redeliver(update: TgUpdate): void;
  addChat(chat: { id: number; type: "private" | "group" | "supergroup"; is_forum?: boolean; title?: string; username?: string }): void;
  failNext(method: string, failure: Failure, count?: number): void;
  failWhen(method: string, fn: ((params: Params) => Failure | null) | null): void;
  /**
   * Answers every call naming `chatId` (as `chat_id`) with `failure` (see TG_ERRORS), or only calls of `method`,
   * or only those for the forum topic `threadId`, until taken back with `failure: null` (same chat, method, thread).
   */
  failChat(chatId: number, failure: Failure | null, where?: { method?: string; threadId?: number }): void;
  /**
   * The basic group `from` became the supergroup `to`: calls naming `from` get Telegram's 400 "group chat was
   * upgraded to a supergroup chat" with `parameters.migrate_to_chat_id`. Pushing the old group's `migrate_to_chat_id`
   * service message does the same. Nothing is announced to the bot here (a migration it missed).
   */
  migrateChat(from: number, to: number): void;
  /** Makes `userId` an administrator (or the creator) of `chatId`, as getChatMember will say. */
  setAdmin(chatId: number, userId: number, status?: "creator" | "administrator"): void;
  /** Resolves with the first call (already received ones count) of `method` matching `predicate`; once answered, except getUpdates (on receipt). */
  waitFor(method: string, predicate?: Predicate): Promise<ApiCall>;
  /**
   * Turns Telegram's flood control on (see FloodLimits; `{}` means the Bot FAQ's limits) or off (null): a counted call
   * over a limit gets 429 "Too Many Requests: retry after N" with parameters.retry_after. Off unless asked for.
   */
  floodControl(limits: FloodLimits | null): void;
  /**
   * Behaves as an older (or self-hosted, not yet updated) Bot API server that lacks `methods`: each answers 404
   * `{"ok":false,"error_code":404,"description":"Not Found"}` from here on ([] gives them back; reset() too). See
   * OLDER_SERVER_NOT_FOUND for where that body comes from.
   */
  withoutMethods(methods: string[]): void;
  /** Reads time (ms since the epoch) from `now` from here on, or from the wall clock again with null. */
  useClock(now: (() => number) | null): void;
  /**
   * Forgets all state and recorded calls and goes back to the clock and flood control given at start (off unless given);
   * update ids keep growing (a running bot keeps its offset).
   */
  reset(): void;
  /**
   * A file on Telegram's servers, as a user's message would carry it (its file_id goes in the message's photo,
   * document, voice…). `declaredSize` is what Telegram says it is (getFile refuses it past 20 MB).
   */
  addFile(bytes: Buffer, options?: { folder?: string; ext?: string; declaredSize?: number; fileId?: string }): StoredFile;
  /** Files the bot uploaded (sendPhoto, sendDocument), oldest first. */
  sentFiles(chatId?: number): SentFile[];
  /** The next `count` downloads of the file answer `status` (a flaky file server). */
  failDownload(filePath: string, status: number, count?: number): void;
  /** Drops pending long polls and all connections immediately. */
  close(): Promise<void>;
}

export interface FakeTelegramOptions {
  token?: string;
  botId?: number;
  botUsername?: string;
  /** The fake's clock in ms since the epoch (default Date.now); see useClock. */
  now?: () => number;
  /** Flood control from the start (see floodControl); reset() comes back to it. */
  floodControl?: FloodLimits;
}

const norm = (method: string) => method.toLowerCase();

/**
 * What a Bot API server answers for a method it does not have: api.telegram.org's 404 body
 * `{"ok":false,"error_code":404,"description":"Not Found"}`, quoted whole in public reports (eternnoir/pyTelegramBotAPI
 * issues #817 and #1461, php-telegram-bot/core issue #922). A tdlib/telegram-bot-api build answers a method it does not
 * know "Not Found: method not found" (the fake's answer for a method no version has, below); both are 404s.
 */
export const OLDER_SERVER_NOT_FOUND = "Not Found";

function toError(failure: Failure): TgError {
  const retryAfter = failure.retry_after;
  const description = failure.description ?? `Too Many Requests: retry after ${retryAfter ?? 0}`;
  const parameters = {
    ...(retryAfter !== undefined && { retry_after: retryAfter }),
    ...("migrate_to_chat_id" in failure && failure.migrate_to_chat_id !== undefined && { migrate_to_chat_id: failure.migrate_to_chat_id }),
  };
  return new TgError(failure.error_code, description, Object.keys(parameters).length > 0 ? parameters : undefined);
}

/** JSON, form-urlencoded, or query-string parameters (the Bot API takes all three). */
function parseParams(req: IncomingMessage, url: URL, body: string, multipart: Params | null): Params {
  const params: Params = Object.fromEntries(url.searchParams);
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (multipart) return { ...params, ...multipart };
  if (body.trim() === "") return params;
  if (type.startsWith("application/x-www-form-urlencoded")) return { ...params, ...Object.fromEntries(new URLSearchParams(body)) };
  if (type.startsWith("multipart/form-data")) throw new TgError(400, "Bad Request: can't parse multipart/form-data request body");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new TgError(400, "Bad Request: can't parse JSON request body");
  }
  if (!isRecord(parsed)) throw new TgError(400, "Bad Request: request body must be a JSON object");
  return { ...params, ...parsed };
}

interface PendingPoll {
  res: ServerResponse;
  call: ApiCall;
  offset: number;
  limit: number;
  timer: NodeJS.Timeout;
}

export async function startFakeTelegram(opts: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const token = opts.token ?? "123456:TEST-TOKEN";
  const botId = opts.botId ?? 123456;
  const botUsername = opts.botUsername ?? "switchboard_test_bot";
  const state = new State(botId, botUsername, opts.now ?? Date.now);
  const calls: ApiCall[] = [];
  const startFlood = () => (opts.floodControl ? new FloodControl(opts.floodControl, () => state.now()) : null);
  let flood = startFlood();
  let failNext = new Map<string, Array<{ failure: Failure; left: number }>>();
  let failWhen = new Map<string, (params: Params) => Failure | null>();
  let chatRules: Array<{ chatId: number; method?: string; threadId?: number; failure: Failure }> = [];
  let waiters: Array<{ method: string; predicate: Predicate; resolve: (call: ApiCall) => void; reject: (err: Error) => void }> = [];
  let pending: PendingPoll | null = null;
  let missing = new Set<string>();
  let closed = false;

  const matches = (call: ApiCall, method: string, predicate: Predicate) => norm(call.method) === norm(method) && predicate(call.params);

  function notify(call: ApiCall) {
    waiters = waiters.filter((w) => {
      if (!matches(call, w.method, w.predicate)) return true;
      w.resolve(call);
      return false;
    });
  }

  function respond(res: ServerResponse, call: ApiCall | null, outcome: { result: unknown } | { error: TgError }) {
    const body: TgResponse =
      "error" in outcome
        ? {
            ok: false,
            error_code: outcome.error.code,
            description: outcome.error.description,
            ...(outcome.error.parameters && { parameters: outcome.error.parameters }),
          }
        : { ok: true, result: outcome.result };
    if (call) call.response = body;
    // The client may have gone away (an aborted long poll).
    if (res.destroyed || res.writableEnded) return;
    res.writeHead("error" in outcome ? outcome.error.code : 200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  function answerPoll(poll: PendingPoll, outcome: { result: unknown } | { error: TgError }) {
    clearTimeout(poll.timer);
    if (pending === poll) pending = null;
    respond(poll.res, poll.call, outcome);
  }

  /** Answers the open long poll if an update it wants has arrived. */
  function wakePoll() {
    if (!pending) return;
    const updates = state.available(pending.offset, pending.limit);
    if (updates.length > 0) answerPoll(pending, { result: updates });
  }

  function getUpdates(res: ServerResponse, call: ApiCall) {
    const { params } = call;
    if (state.webhook) throw WEBHOOK_CONFLICT;
    const offset = optInt(params, "offset") ?? 0;
    const limit = Math.min(100, Math.max(1, optInt(params, "limit") ?? 100));
    const timeout = Math.max(0, optInt(params, "timeout") ?? 0);
    const allowed = optJson(params, "allowed_updates", "allowed updates");
    // Telegram remembers allowed_updates until it is sent again; [] means "the default set".
    if (Array.isArray(allowed)) state.allowedUpdates = allowed.length > 0 ? allowed.map(String) : null;
    // Only one getUpdates may be open: Telegram ends the older one with a 409.
    if (pending) answerPoll(pending, { error: new TgError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running") });
    state.confirm(offset);
    const updates = state.available(offset, limit);
    if (updates.length > 0 || timeout === 0) return respond(res, call, { result: updates });
    const poll: PendingPoll = { res, call, offset, limit, timer: setTimeout(() => answerPoll(poll, { result: [] }), timeout * 1000) };
    pending = poll;
    res.on("close", () => {
      if (pending === poll) {
        clearTimeout(poll.timer);
        pending = null;
      }
    });
  }

  function injectedFailure(method: string, params: Params): Failure | null {
    const queue = failNext.get(method);
    const next = queue?.[0];
    if (next) {
      if (--next.left <= 0) queue!.shift();
      return next.failure;
    }
    const byMethod = failWhen.get(method)?.(params);
    if (byMethod) return byMethod;
    return chatFailure(method, params);
  }

  /** What Telegram answers for this chat (a migrated group, or a rule from failChat), if anything. */
  function chatFailure(method: string, params: Params): Failure | null {
    let chatId: number | undefined;
    let threadId: number | undefined;
    try {
      chatId = optInt(params, "chat_id");
      threadId = optInt(params, "message_thread_id");
    } catch {
      return null; // "@username" or a malformed id: the method's own validation answers
    }
    if (chatId === undefined) return null;
    const to = state.migratedTo.get(chatId);
    if (to !== undefined) return TG_ERRORS.migrated(to);
    const rule = chatRules.find((r) => r.chatId === chatId && (r.method === undefined || r.method === method) && (r.threadId === undefined || r.threadId === threadId));
    return rule?.failure ?? null;
  }

  /** The chat a flood-controlled call names; null if it names none the fake knows (the method itself answers that). */
  function floodChat(params: Params): { id: number; type: string } | null {
    try {
      const { chat } = state.resolveChat(params);
      return { id: chat.id as number, type: String(chat.type) };
    } catch {
      return null;
    }
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: string, multipart: Params | null = null) {
    const url = new URL(req.url ?? "/", "http://fake");
    const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (req.method === "GET" && fileMatch) {
      const answer = decodeURIComponent(fileMatch[1]!) === token ? download(state, decodeURIComponent(fileMatch[2]!)) : download(state, "\0");
      res.writeHead(answer.status, { "content-type": answer.type, "content-length": answer.body.length });
      return void res.end(answer.body);
    }
    const match = /^\/bot([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (!match) return respond(res, null, { error: new TgError(404, "Not Found") });
    const [, reqToken, method] = match as unknown as [string, string, string];
    const name = norm(method);
    const call: ApiCall = { method, params: {}, at: ++state.seq };
    calls.push(call);
    const finish = (outcome: { result: unknown } | { error: TgError }) => {
      respond(res, call, outcome);
      notify(call);
    };
    try {
      // Same order as Telegram: authenticate, find the method, then read parameters.
      let paramsError: TgError | undefined;
      try {
        call.params = parseParams(req, url, body, multipart);
      } catch (err) {
        if (!(err instanceof TgError)) throw err;
        paramsError = err;
      }
      if (decodeURIComponent(reqToken) !== token) return finish({ error: new TgError(401, "Unauthorized") });
      if (name !== "getupdates" && !(name in METHODS) && !(name in FILE_METHODS)) return finish({ error: new TgError(404, "Not Found: method not found") });
      if (missing.has(name)) return finish({ error: new TgError(404, OLDER_SERVER_NOT_FOUND) });
      if (paramsError) return finish({ error: paramsError });
      const failure = injectedFailure(name, call.params);
      if (failure) return finish({ error: toError(failure) });
      if (name in FILE_METHODS) {
        void Promise.resolve(FILE_METHODS[name as keyof typeof FILE_METHODS](state, call.params, call.at)).then(
          (result) => finish({ result }),
          (err: unknown) => finish({ error: err instanceof TgError ? err : new TgError(500, `Internal Server Error: fake: ${String(err)}`) }),
        );
        return;
      }
      if (name !== "getupdates") {
        const chat = flood?.counts(name) ? floodChat(call.params) : null;
        const refused = chat && flood!.check(name, chat);
        if (refused) return finish({ error: refused });
        const result = METHODS[name]!(state, call.params, call.at);
        if (chat) flood!.record(name, chat.id);
        return finish({ result });
      }
      notify(call); // waitFor("getUpdates") means "the bot is polling", so it resolves on receipt
      getUpdates(res, call);
    } catch (err) {
      const error = err instanceof TgError ? err : new TgError(500, `Internal Server Error: fake: ${(err as Error)?.stack ?? String(err)}`);
      if (name === "getupdates") respond(res, call, { error });
      else finish({ error });
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const type = req.headers["content-type"] ?? "";
      if (!type.toLowerCase().startsWith("multipart/form-data") || raw.length === 0) return handle(req, res, raw.toString("utf8"));
      // Uploads: parsed before the call is handled (an unparseable body is answered by parseParams, as before).
      parseMultipart(type, raw).then(
        (params) => handle(req, res, "", params),
        () => handle(req, res, raw.toString("latin1")),
      );
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const pushUpdate = (input: Omit<TgUpdate, "update_id"> & { update_id?: number }): TgUpdate => {
    const update: TgUpdate = { ...input, update_id: input.update_id ?? state.nextUpdateId };
    state.nextUpdateId = Math.max(state.nextUpdateId, update.update_id + 1);
    state.ingest(update);
    state.enqueue(update);
    wakePoll();
    return update;
  };
  const byChat = <T extends { chat_id: number }>(list: T[], chatId?: number) => (chatId === undefined ? [...list] : list.filter((x) => x.chat_id === chatId));

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    botId,
    botUsername,
    calls,
    sent: (chatId) => byChat(state.sent, chatId),
    drafts: (chatId) => byChat(state.drafts, chatId),
    visibleDraft: (chatId, threadId) => visibleDraft(state, chatId, threadId),
    timeline: (chatId) => byChat(state.events, chatId),
    visible: (chatId, threadId) => state.visible(chatId, threadId),
    stopDraft: (chatId, threadId) => pushUpdate(stopDraft(state, chatId, threadId, ++state.seq)),
    actions: (chatId) => byChat(state.actions, chatId),
    commands: (scope, languageCode) => state.commands.get(commandsKey(scope, languageCode)) ?? [],
    webhook: () => (state.webhook ? { ...state.webhook } : null),
    pushUpdate,
    userMessage: (opts) => pushUpdate(buildUserMessage(state, opts)),
    redeliver: (update) => {
      state.enqueue(update);
      wakePoll();
    },
    addChat: (chat) => void state.registerChat(chat as TgObject),
    failNext: (method, failure, count = 1) => {
      if (count <= 0) return;
      const queue = failNext.get(norm(method)) ?? [];
      queue.push({ failure, left: count });
      failNext.set(norm(method), queue);
    },
    failWhen: (method, fn) => {
      if (fn) failWhen.set(norm(method), fn);
      else failWhen.delete(norm(method));
    },
    failChat: (chatId, failure, where = {}) => {
      const method = where.method === undefined ? undefined : norm(where.method);
      chatRules = chatRules.filter((r) => !(r.chatId === chatId && r.method === method && r.threadId === where.threadId));
      if (failure) chatRules.push({ chatId, failure, ...(method !== undefined && { method }), ...(where.threadId !== undefined && { threadId: where.threadId }) });
    },
    migrateChat: (from, to) => state.migrate(from, to),
    setAdmin: (chatId, userId, status = "administrator") => {
      const admins = state.admins.get(chatId) ?? new Map();
      admins.set(userId, status);
      state.admins.set(chatId, admins);
    },
    waitFor: (method, predicate = () => true) => {
      if (closed) return Promise.reject(new Error("fake Telegram is closed"));
      const seen = calls.find((c) => matches(c, method, predicate) && (c.response !== undefined || norm(c.method) === "getupdates"));
      if (seen) return Promise.resolve(seen);
      return new Promise<ApiCall>((resolve, reject) => waiters.push({ method, predicate, resolve, reject }));
    },
    floodControl: (limits) => {
      flood = limits ? new FloodControl(limits, () => state.now()) : null;
    },
    withoutMethods: (methods) => {
      missing = new Set(methods.map(norm));
    },
    useClock: (now) => {
      state.now = now ?? Date.now;
    },
    reset: () => {
      state.reset();
      filesOf(state).reset();
      state.now = opts.now ?? Date.now;
      flood = startFlood();
      calls.length = 0; // keep the same array so `fake.calls` references stay live
      failNext = new Map();
      failWhen = new Map();
      chatRules = [];
      missing = new Set();
    },
    addFile: (bytes, options = {}) => filesOf(state).add(bytes, options.folder, options.ext, options.declaredSize, options.fileId),
    sentFiles: (chatId) => byChat(filesOf(state).sent, chatId),
    failDownload: (filePath, status, count = 1) => void filesOf(state).failing.set(filePath, { status, left: count }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        closed = true;
        if (pending) clearTimeout(pending.timer);
        pending = null;
        for (const w of waiters) w.reject(new Error("fake Telegram closed while waiting for " + w.method));
        waiters = [];
        server.close((err) => (err ? reject(err) : resolve()));
        // Long polls and keep-alive sockets would otherwise keep close() waiting.
        server.closeAllConnections();
      }),
  };
}
