// An HTTP fake of the Slack Web API (POST /api/<method>).
//
// Tests point the REAL @slack/web-api client at it (`new WebClient(token, {
// slackApiUrl: fake.apiUrl })`, or Bolt's `clientOptions: { slackApiUrl }`),
// register the messages users posted, and inspect what the bot sent. Requests
// are validated like Slack does (see methods.ts and blocks.ts), so a reply to
// a thread that does not exist or a 3,001-character section fails the test the
// way it would fail in production. Every answer is HTTP 200 `{ ok: ... }`,
// except rate limits (429 + Retry-After: injected, or opt-in per method) and other injected statuses.
//
// Streaming (chat.startStream / appendStream / stopStream, streaming.ts) keeps each streamed message's text after
// every call (`streams()`); conversations.history / replies read messages back (history.ts), and `visible()` shows a
// conversation as its members see it; `rateLimit()` turns on a method's documented rate limit (rate-limits.ts).
//
// The same server takes response_url posts (POST /response/<id>, see
// `responseUrl()`), so a bot can answer a slash command the way Slack expects.

import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJsonFields, isRecord, SlackError, type Params, type SlackFailure } from "./common.js";
import { HISTORY_METHODS, visibleMessages } from "./history.js";
import { BOT_ID, BOT_USER_ID, METHODS, STATUS_UNAVAILABLE, TEAM_ID, type Handler, type SocketModeLink } from "./methods.js";
import { RateLimiter, type RateLimit } from "./rate-limits.js";
import {
  inferChannel,
  State,
  toPosted,
  toStreamed,
  type ChannelInfo,
  type Ephemeral,
  type Posted,
  type ReactionEntry,
  type ResponseUrlPost,
  type StatusEntry,
  type Streamed,
  type StreamRecord,
  type StoredMessage,
  type SuggestedPrompts,
  type VisibleMessage,
} from "./state.js";
import { endStream, STREAM_METHODS } from "./streaming.js";
import { FILE_METHODS, filesOf, receiveUpload, serveDownload, type SharedFile, type SlackFile } from "./files.js";

export type { SlackFailure } from "./common.js";
export type { SharedFile, SlackFile } from "./files.js";
export type { RateLimit } from "./rate-limits.js";
export type {
  ChannelInfo,
  Ephemeral,
  Posted,
  ReactionEntry,
  ResponseUrlPost,
  StatusEntry,
  Streamed,
  StreamStatus,
  StreamUpdate,
  SuggestedPrompts,
  VisibleMessage,
} from "./state.js";

const ALL_METHODS: Readonly<Record<string, Handler>> = { ...METHODS, ...STREAM_METHODS, ...HISTORY_METHODS, ...FILE_METHODS };

export interface SlackCall {
  /** The Web API method, e.g. "chat.postMessage"; "response_url" for a post to a minted response_url. */
  method: string;
  /** Query string + body; JSON-valued fields (blocks, attachments, metadata, …) decoded from their form strings. */
  params: Record<string, unknown>;
  /** The JSON answered; `{}` while unanswered. */
  response: Record<string, unknown>;
  /** HTTP status answered; 0 while unanswered. */
  status: number;
  /** Shared with reactionLog(), statuses(), ephemerals and response posts. */
  seq: number;
}

export interface FakeSlack {
  /** e.g. "http://127.0.0.1:PORT/api/" — pass as slackApiUrl / SLACK_API_URL. */
  apiUrl: string;
  botToken: string;
  teamId: string;
  botUserId: string;
  botId: string;
  calls: SlackCall[];
  /** chat.postMessage (and chat.startStream) results in order, with their current text/blocks after chat.update. */
  posted(channel?: string): Posted[];
  /** Streamed messages (chat.startStream) in order: current text, status, and every start/append/stop with the text after it. */
  streams(channel?: string): Streamed[];
  /**
   * Ends a stream the way Slack does without the app: a user pressing Stop (appendStream then answers
   * `stopped_by_user`) or the stream expiring (`message_not_in_streaming_state`). Throws if it is not streaming.
   */
  endStream(channel: string, ts: string, how: "stopped_by_user" | "expired"): void;
  /**
   * What a member of the conversation sees now: the thread whose root is `thread` (root first), or else the
   * channel's top-level messages; users' and the bot's, deleted ones gone, edits applied, a streamed message with
   * where its stream is. So a test can tell each reply is there once, complete, and nothing is left half-written.
   */
  visible(channel: string, thread?: string): VisibleMessage[];
  /**
   * Turns on a rate limit for `method` (default: its documented tier, e.g. chat.update 50 a minute) on the fake's
   * clock; calls past it answer 429 + Retry-After + `ratelimited`. Null turns it off; reset() turns all off.
   */
  rateLimit(method: string, limit?: RateLimit | null): void;
  ephemerals(channel?: string): Ephemeral[];
  /** The bot's current reactions on a message. */
  reactions(channel: string, ts: string): string[];
  reactionLog(): ReactionEntry[];
  statuses(): StatusEntry[];
  /** assistant.threads.setSuggestedPrompts calls, in order. */
  suggestedPrompts(): SuggestedPrompts[];
  /**
   * Off: assistant.threads.setStatus answers `{ ok: false, error }` — by default "missing_scope"
   * (with needed: "assistant:write"), what an app without the assistant scope gets.
   */
  setStatusAvailable(on: boolean, error?: string): void;
  /** Registers a message a user posted (so the bot can reply in its thread or react to it) and returns its ts. */
  userMessage(opts: { channel: string; user: string; text: string; thread_ts?: string; ts?: string }): string;
  /**
   * Makes a conversation known to conversations.info (channels seen in messages are known already). `is_member:
   * false` or `is_archived: true` make chat.postMessage there answer `not_in_channel` / `is_archived`, as Slack does.
   */
  addChannel(info: { id: string } & Partial<ChannelInfo>): void;
  /** Mints a response_url on this server (for slashCommand / interactivity payloads). */
  responseUrl(): string;
  /** JSON bodies posted to minted response_urls, in order. */
  responses(): ResponseUrlPost[];
  failNext(method: string, failure: SlackFailure, count?: number): void;
  failWhen(method: string, fn: ((params: Record<string, unknown>) => SlackFailure | null) | null): void;
  /** Resolves with the first answered call of `method` matching the predicate (already answered ones count). */
  waitFor(method: string, predicate?: (params: Record<string, unknown>) => boolean): Promise<SlackCall>;
  /** Lets apps.connections.open (app-level token) hand out this endpoint's URLs; see socket-mode.ts. Null detaches. */
  attachSocketMode(link: SocketModeLink | null): void;
  /**
   * A file a user uploaded: its object (as a message event's `files[]` carries it, url_private_download on this
   * server) and its id. `declaredSize` is what Slack says its size is.
   */
  addFile(bytes: Buffer, name: string, mimetype: string, declaredSize?: number): { id: string; object: Record<string, unknown> };
  /** Off: downloads answer Slack's HTML sign-in page and files.info `missing_scope`, as for an app without files:read. */
  filesScope(on: boolean): void;
  /** The next `count` downloads of file `id` answer `status`. */
  failDownload(id: string, status: number, count?: number): void;
  /** The ids of the files the bot downloaded (each try counts), oldest first. */
  downloads(): string[];
  /** Files the bot shared with files.completeUploadExternal, oldest first. */
  shared(channel?: string): SharedFile[];
  /** Forgets messages, calls, failures, rate limits and recordings; generated ts values keep increasing. */
  reset(): void;
  close(): Promise<void>;
}

type Predicate = (params: Params) => boolean;

/** Query string plus a form-urlencoded or JSON body, as the Web API accepts. */
function parseParams(req: IncomingMessage, url: URL, body: string): Params {
  const params: Params = Object.fromEntries(url.searchParams);
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (body.trim() === "") return decodeJsonFields(params);
  if (type.startsWith("application/json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new SlackError("invalid_json");
    }
    if (!isRecord(parsed)) throw new SlackError("json_not_object");
    return decodeJsonFields({ ...params, ...parsed });
  }
  if (type.startsWith("multipart/form-data")) throw new SlackError("invalid_form_data", { detail: "multipart (file upload) is not supported by this fake" });
  return decodeJsonFields({ ...params, ...Object.fromEntries(new URLSearchParams(body)) });
}

function bearer(req: IncomingMessage, params: Params): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === "string") {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  return typeof params.token === "string" && params.token !== "" ? params.token : undefined;
}

/** `clock`: milliseconds, for rate limits (default Date.now). */
export async function startFakeSlack(opts: { botToken?: string; clock?: () => number } = {}): Promise<FakeSlack> {
  const botToken = opts.botToken ?? "xoxb-test-token";
  const state = new State();
  const limiter = new RateLimiter(opts.clock ?? Date.now);
  const calls: SlackCall[] = [];
  const responseIds = new Set<string>();
  let failNext = new Map<string, Array<{ failure: SlackFailure; left: number }>>();
  let failWhen = new Map<string, (params: Params) => SlackFailure | null>();
  let waiters: Array<{ method: string; predicate: Predicate; resolve: (call: SlackCall) => void; reject: (err: Error) => void }> = [];
  let closed = false;
  let socketMode: SocketModeLink | null = null;

  const matches = (call: SlackCall, method: string, predicate: Predicate) => call.status !== 0 && call.method === method && predicate(call.params);

  function send(res: ServerResponse, call: SlackCall | null, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    if (call) {
      call.status = status;
      call.response = body;
    }
    if (!res.destroyed && !res.writableEnded) {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
      res.end(JSON.stringify(body));
    }
    if (call) {
      waiters = waiters.filter((w) => {
        if (!matches(call, w.method, w.predicate)) return true;
        w.resolve(call);
        return false;
      });
    }
  }

  function injectedFailure(method: string, params: Params): SlackFailure | null {
    const queue = failNext.get(method);
    const next = queue?.[0];
    if (next) {
      if (--next.left <= 0) queue!.shift();
      return next.failure;
    }
    return failWhen.get(method)?.(params) ?? null;
  }

  function fail(res: ServerResponse, call: SlackCall, failure: SlackFailure) {
    if ("error" in failure) return send(res, call, 200, { ok: false, error: failure.error, ...failure.extra });
    if (failure.status === 429) {
      return send(res, call, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(failure.retryAfter ?? 1) });
    }
    const headers: Record<string, string> = failure.retryAfter !== undefined ? { "retry-after": String(failure.retryAfter) } : {};
    return send(res, call, failure.status, { ok: false, error: "fatal_error" }, headers);
  }

  function handleApi(req: IncomingMessage, res: ServerResponse, url: URL, method: string, body: string) {
    const call: SlackCall = { method, params: {}, response: {}, status: 0, seq: ++state.seq };
    calls.push(call);
    const error = (e: SlackError) => send(res, call, 200, { ok: false, error: e.code, ...e.extra });
    try {
      let paramsError: SlackError | undefined;
      try {
        call.params = parseParams(req, url, body);
      } catch (err) {
        if (!(err instanceof SlackError)) throw err;
        paramsError = err;
      }
      const handler = ALL_METHODS[method];
      if (!handler) return send(res, call, 200, { ok: false, error: "unknown_method", req_method: method });
      const token = bearer(req, call.params);
      if (token === undefined) return send(res, call, 200, { ok: false, error: "not_authed" });
      // apps.connections.open takes the app-level token only; Slack refuses a bot token there by its type.
      const expected = method === "apps.connections.open" ? socketMode?.appToken : botToken;
      if (token !== expected)
        return send(res, call, 200, { ok: false, error: method === "apps.connections.open" && token === botToken ? "not_allowed_token_type" : "invalid_auth" });
      if (paramsError) return error(paramsError);
      const retryAfter = limiter.admit(method, call.params);
      if (retryAfter !== null) return fail(res, call, { status: 429, retryAfter });
      const failure = injectedFailure(method, call.params);
      if (failure) return fail(res, call, failure);
      send(res, call, 200, { ok: true, ...handler(state, call.params, call.seq, socketMode) });
    } catch (err) {
      if (err instanceof SlackError) return error(err);
      send(res, call, 200, { ok: false, error: "internal_error", detail: `fake: ${(err as Error)?.stack ?? String(err)}` });
    }
  }

  function handleResponseUrl(res: ServerResponse, url: URL, id: string, body: string) {
    if (!responseIds.has(id)) return send(res, null, 404, { ok: false, error: "invalid_url" });
    const call: SlackCall = { method: "response_url", params: {}, response: {}, status: 0, seq: ++state.seq };
    calls.push(call);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) return send(res, call, 400, { ok: false, error: "invalid_payload" });
    call.params = parsed;
    state.responses.push({ url: url.href, body: parsed, seq: call.seq });
    send(res, call, 200, { ok: true });
  }

  async function route(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
    if (serveDownload(state, req, res, url.pathname, botToken)) return;
    if (await receiveUpload(state, req, res, url.pathname, raw)) return;
    const body = raw.toString("utf8");
    const api = /^\/api\/([^/]+)$/.exec(url.pathname);
    const response = /^\/response\/([^/]+)$/.exec(url.pathname);
    if (api && (req.method === "POST" || req.method === "GET")) return handleApi(req, res, url, decodeURIComponent(api[1]!), body);
    if (response && req.method === "POST") return handleResponseUrl(res, url, response[1]!, body);
    send(res, null, 404, { ok: false, error: "not_found", path: url.pathname });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => void route(req, res, Buffer.concat(chunks)));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  filesOf(state).base = base;
  const inChannel = <T extends { channel: string }>(list: T[], channel?: string) => (channel === undefined ? list : list.filter((x) => x.channel === channel));

  return {
    apiUrl: `${base}/api/`,
    botToken,
    teamId: TEAM_ID,
    botUserId: BOT_USER_ID,
    botId: BOT_ID,
    calls,
    posted: (channel) => inChannel(state.posted, channel).map(toPosted),
    streams: (channel) =>
      inChannel(state.posted, channel)
        .filter((m): m is StoredMessage & { stream: StreamRecord } => m.stream !== undefined)
        .map(toStreamed),
    endStream: (channel, ts, how) => endStream(state, channel, ts, how),
    visible: (channel, thread) => visibleMessages(state, channel, thread),
    rateLimit: (method, limit = {}) => limiter.set(method, limit),
    ephemerals: (channel) => inChannel(state.ephemerals, channel).map((e) => ({ ...e })),
    reactions: (channel, ts) => [...(state.find(channel, ts)?.reactions ?? [])],
    reactionLog: () => state.reactionLog.map((r) => ({ ...r })),
    statuses: () => state.statuses.map((s) => ({ ...s })),
    suggestedPrompts: () => state.suggestedPrompts.map((s) => ({ ...s })),
    setStatusAvailable: (on, error = STATUS_UNAVAILABLE) => void (state.statusError = on ? null : error),
    userMessage: ({ channel, user, text, thread_ts, ts }) => {
      let root: string | undefined;
      if (thread_ts !== undefined) {
        const parent = state.find(channel, thread_ts);
        if (!parent) throw new Error(`fake Slack: userMessage in thread ${thread_ts}, which is not a message in ${channel}`);
        root = parent.thread_ts ?? parent.ts;
      }
      if (ts !== undefined) {
        if (state.find(channel, ts)) throw new Error(`fake Slack: a message with ts ${ts} already exists in ${channel}`);
        state.noteTs(ts);
      }
      const messageTs = ts ?? state.nextTs();
      state.store({
        channel,
        ts: messageTs,
        ...(root !== undefined && { thread_ts: root }),
        user,
        text,
        params: {},
        edits: 0,
        deleted: false,
        reactions: [],
      });
      return messageTs;
    },
    addFile: (bytes, name, mimetype, declaredSize) => {
      const file: SlackFile = filesOf(state).add(bytes, name, mimetype, declaredSize);
      return { id: file.id, object: filesOf(state).object(file) };
    },
    filesScope: (on) => void (filesOf(state).scope = on),
    failDownload: (id, status, count = 1) => void filesOf(state).failing.set(id, { status, left: count }),
    downloads: () => [...filesOf(state).downloads],
    shared: (channel) => inChannel(filesOf(state).shared, channel),
    addChannel: (info) => void state.channels.set(info.id, inferChannel(info.id, info)),
    responseUrl: () => {
      const id = randomBytes(8).toString("hex");
      responseIds.add(id);
      return `${base}/response/${id}`;
    },
    responses: () => state.responses.map((r) => ({ ...r })),
    failNext: (method, failure, count = 1) => {
      if (count <= 0) return;
      const queue = failNext.get(method) ?? [];
      queue.push({ failure, left: count });
      failNext.set(method, queue);
    },
    failWhen: (method, fn) => {
      if (fn) failWhen.set(method, fn);
      else failWhen.delete(method);
    },
    waitFor: (method, predicate = () => true) => {
      if (closed) return Promise.reject(new Error("fake Slack is closed"));
      const seen = calls.find((c) => matches(c, method, predicate));
      if (seen) return Promise.resolve(seen);
      return new Promise<SlackCall>((resolve, reject) => waiters.push({ method, predicate, resolve, reject }));
    },
    attachSocketMode: (link) => void (socketMode = link),
    reset: () => {
      state.reset();
      filesOf(state).reset();
      calls.length = 0; // keep the same array so `fake.calls` references stay live
      failNext = new Map();
      failWhen = new Map();
      limiter.reset();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        closed = true;
        for (const w of waiters) w.reject(new Error("fake Slack closed while waiting for " + w.method));
        waiters = [];
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
