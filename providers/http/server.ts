import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import { z } from "zod";
import { systemTimers, type Timers } from "../../src/runtime/deps.js";
import { AdminRoutes, type AdminSettings } from "./admin.js";
import { floodRefusal, UserCaps, type UserCapLimits } from "./caps.js";
import { Authenticator, type AuthOptions } from "./auth.js";
import { RequestEvents } from "./events.js";
import { streamSession } from "./session-events.js";
import { readiness } from "./health.js";
import { forgetMemories, forgetMemory, listMemories, type MemoryAnswer } from "./memories.js";
import { HttpError, internalError, invalid, listenError, readJson } from "./request.js";
import { readMessageBody } from "./message-body.js";
import { answerHeaders, quotaAnswer } from "./quota-answer.js";
import { downloadFile } from "./files.js";
import { Router, type Route } from "./router.js";
import { isInternal, type ApiReads, type GatewayFacade } from "../../src/gateway/index.js";
import { DEFAULT_FILE_LIMITS, type FileLimits } from "../../src/files/limits.js";
import type { FileSource } from "../../src/files/types.js";
import { historyLimit, ownedSession, sessionMessages, sessionView } from "./sessions.js";
import { checkExpiry, taskOptionsOf } from "./task-options.js";
import { expiredAnswer, ownedTask, refuseTaskUnderWay, requestView, taskExpired } from "./tasks.js";
import { catalogView, requestSummary, sessionIdOf, taskView } from "./views.js";
import { ASSET_HEADERS, loadWebChat, PAGE_HEADERS, type WebChat } from "./web/assets.js";

export interface HttpOptions {
  host: string;
  port: number;
  auth: AuthOptions;
  log: Logger;
  /** For the SSE keepalive; tests drive it by hand. */
  timers?: Timers;
  /**
   * What GET /readyz checks besides the database (the chat providers' connections); each entry names a check and
   * says why it is not ready, or null when it is.
   */
  readiness?: () => Record<string, string | null>;
  keepaliveMs?: number;
  /** GET /metrics (Prometheus), when it is served on this port (METRICS_PORT unset); it checks METRICS_TOKEN itself. */
  metrics?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** The read-only admin view under /admin (off, saying how to turn it on, without tokens); unset: no /admin at all. */
  admin?: AdminSettings;
  /** What one user may cost the server (HTTP_*_PER_USER_MAX); unset: no caps. */
  caps?: UserCapLimits;
  /** For the caps' cached footprints; tests drive it. */
  now?: () => number;
  /** MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE (default: the product's defaults). */
  fileLimits?: FileLimits;
  /** Where GET /v1/files/{id} finds a file; unset: the gateway's store. */
  files?: FileSource;
}

/** What a route's handler gets: `user` is the authenticated user of a "user" route, "" on the others. */
interface Context {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  user: string;
}
type Handler = (context: Context) => Promise<void> | void;

/** Printable ASCII, as Stripe and the IETF Idempotency-Key draft use it; bounded so it can be a database key. */
const idempotencyKey = z.string().regex(/^[\x21-\x7e][\x20-\x7e]{0,254}$/, { error: "must be 1-255 printable ASCII characters" });
const decisionBody = z.object({ decision: z.enum(["approve", "deny"], { error: 'must be "approve" or "deny"' }) });

/**
 * The HTTP API: the same stack semantics as a chat, for programs. Sessions are `http:<session_id>`; replies are
 * read back from the store, so any replica answers a request, whichever replica runs its turn.
 */
export class HttpProvider {
  private server: Server | null = null;
  private readonly auth: Authenticator;
  private readonly web: WebChat;
  private readonly admin: AdminRoutes | null;
  private readonly caps: UserCaps;
  private readonly store: ApiReads;
  private readonly router: Router<Handler>;

  constructor(
    private readonly gateway: GatewayFacade,
    private readonly options: HttpOptions,
  ) {
    this.store = gateway.reads.api;
    this.auth = new Authenticator(options.auth);
    this.caps = new UserCaps(this.store, options.caps ?? { sessions: 0, streams: 0, storedBytes: 0 }, options.now);
    this.web = loadWebChat({ apiOff: !this.auth.configured });
    const { admin, timers, keepaliveMs, log } = options;
    this.admin = admin ? new AdminRoutes(admin, { reads: gateway.reads.admin, log, ...(timers ? { timers } : {}), ...(keepaliveMs ? { keepaliveMs } : {}) }) : null;
    this.router = new Router(this.routes());
  }

  async start(): Promise<void> {
    // Nothing to push: clients read their replies from the store (the response, or the SSE stream).
    this.gateway.register({ prefix: "http", deliver: async () => {} });
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) => reject(listenError(error, this.options.host, this.options.port)));
      server.listen(this.options.port, this.options.host, resolve);
    });
    // After a successful listen, a server error (e.g. too many open files) is logged, never thrown.
    server.on("error", (error) => this.options.log.error({ err: error }, "http server error"));
    this.server = server;
    this.options.log.info({ host: this.options.host, port: this.port() }, "http api listening");
  }

  port(): number | null {
    const address = this.server?.address();
    return address && typeof address === "object" ? address.port : null;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /**
   * Every route of the port, tried in order. An unknown path, or a known one with another method, is a 404 for
   * everyone, without touching authentication.
   */
  private routes(): Route<Handler>[] {
    const { store } = this;
    const memory = (answer: MemoryAnswer, res: ServerResponse) =>
      answer.body === undefined ? void res.writeHead(answer.status).end() : this.json(res, answer.status, answer.body);
    const { metrics } = this.options;
    const { admin } = this;
    return [
      // For load balancers and orchestrators: no authentication, nothing about the conversations.
      { method: "GET", path: "/healthz", auth: "none", handler: ({ res }) => this.json(res, 200, { status: "ok" }) },
      ...(metrics ? [{ method: "*", path: "/metrics", auth: "none" as const, handler: ({ req, res }: Context) => metrics(req, res) }] : []),
      {
        method: "GET",
        path: "/readyz",
        auth: "none",
        handler: async ({ res }) => {
          const ready = await readiness(store, this.options.readiness?.() ?? {});
          this.json(res, ready.status === "ready" ? 200 : 503, ready);
        },
      },
      // The admin view checks its own tokens (ADMIN_TOKENS) and answers its own paths.
      ...(admin ? [{ method: "*", path: "/admin/*", auth: "admin" as const, handler: ({ req, res, url }: Context) => admin.handle(req, res, url) }] : []),
      ...["/", "/index.html"].map((path) => ({
        method: "GET",
        path,
        auth: "none" as const,
        handler: ({ res }: Context) => void res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...PAGE_HEADERS }).end(this.web.page),
      })),
      // Exact paths only: nothing under /assets is looked up on disk per request.
      ...[...this.web.assets].map(([path, asset]) => ({
        method: "GET",
        path,
        auth: "none" as const,
        handler: ({ res }: Context) => void res.writeHead(200, { "content-type": asset.type, ...ASSET_HEADERS }).end(asset.body),
      })),
      { method: "POST", path: "/v1/messages", auth: "user", handler: ({ req, res, user }) => this.postMessage(req, res, user) },
      { method: "GET", path: "/v1/memories", auth: "user", handler: async ({ res, user }) => memory(await listMemories(store, user), res) },
      { method: "DELETE", path: "/v1/memories", auth: "user", handler: async ({ res, user }) => memory(await forgetMemories(store, user), res) },
      { method: "DELETE", path: "/v1/memories/:id", auth: "user", handler: async ({ res, user, params }) => memory(await forgetMemory(store, params.id!, user), res) },
      {
        method: "GET",
        path: "/v1/files/:id",
        auth: "user",
        handler: ({ res, user, params }) => downloadFile(this.options.files ?? store.downloads(), params.id!, res, user),
      },
      { method: "GET", path: "/v1/catalog", auth: "user", handler: ({ res }) => this.json(res, 200, catalogView(this.gateway.catalog())) },
      {
        method: "GET",
        path: "/v1/tasks/:id",
        auth: "user",
        handler: async ({ res, user, params }) => this.json(res, 200, await taskView(store, await ownedTask(store, params.id!, user))),
      },
      {
        method: "GET",
        path: "/v1/requests/:id",
        auth: "user",
        handler: async ({ res, user, params }) => this.json(res, 200, await requestView(store, params.id!, user)),
      },
      { method: "POST", path: "/v1/tasks/:id/cancel", auth: "user", handler: ({ res, user, params }) => this.cancel(res, params.id!, user) },
      {
        method: "GET",
        path: "/v1/sessions/:id",
        auth: "user",
        handler: async ({ res, user, params }) => this.json(res, 200, await sessionView(store, params.id!, await ownedSession(store, params.id!, user))),
      },
      { method: "GET", path: "/v1/sessions/:id/events", auth: "user", handler: ({ req, res, user, params }) => this.sessionEvents(req, res, params.id!, user) },
      {
        method: "GET",
        path: "/v1/sessions/:id/messages",
        auth: "user",
        handler: async ({ res, user, params, url }) => {
          const id = params.id!;
          const limit = historyLimit(url.searchParams);
          const key = await ownedSession(store, id, user);
          this.json(res, 200, { session_id: id, ...(await sessionMessages(store, key, limit)) });
        },
      },
      { method: "POST", path: "/v1/approvals/:id", auth: "user", handler: ({ req, res, user, params }) => this.decide(req, res, params.id!, user) },
    ];
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    let path = "/";
    try {
      const url = new URL(req.url ?? "/", "http://x");
      path = url.pathname;
      const match = this.router.match(req.method, path);
      if (match.kind === "none") throw new HttpError(404, "not_found_error", `no route for ${req.method} ${path}`);
      const { route, params } = match;
      let user = "";
      if (route.auth === "user") {
        const auth = await this.auth.check(req.headers.authorization);
        if (!auth.ok) throw new HttpError(401, "authentication_error", auth.reason);
        user = auth.userId;
      }
      await route.handler({ req, res, url, params, user });
    } catch (error) {
      if (error instanceof HttpError)
        return this.json(
          res,
          error.status,
          { type: "error", error: { type: error.type, message: error.message, ...error.detail }, request_id: requestId },
          error.headers,
        );
      this.options.log.error({ err: error, request: requestId, path }, "http request failed");
      this.json(res, 500, internalError(requestId));
    }
  }

  private async postMessage(req: IncomingMessage, res: ServerResponse, user: string): Promise<void> {
    const body = { data: await readMessageBody(req, this.options.fileLimits ?? DEFAULT_FILE_LIMITS) };
    const taskOptions = taskOptionsOf(body.data);
    const { store } = this;
    const stream = (req.headers.accept ?? "").includes("text/event-stream");
    const header = req.headers["idempotency-key"];
    let keyed: { key: string; fingerprint: string } | undefined;
    if (header !== undefined) {
      const key = idempotencyKey.safeParse(header);
      if (!key.success) throw new HttpError(400, "invalid_request_error", `Idempotency-Key ${key.error.issues[0]!.message}`);
      keyed = { key: key.data, fingerprint: body.data.fingerprint() };
      const seen = await store.idempotency(user, keyed.key);
      // A retry, concurrent or after a restart, gets the first request's answer; it never runs the model again.
      if (seen) {
        const release = this.caps.openStream(user);
        try {
          return await this.replay(res, user, keyed, seen.requestId, seen.fingerprint, stream);
        } finally {
          release();
        }
      }
    }
    checkExpiry(taskOptions, this.gateway.now());
    let sessionId = body.data.session_id;
    if (body.data.task_id) {
      const task = await ownedTask(store, body.data.task_id, user);
      if (sessionId && task.sessionKey !== `http:${sessionId}`) throw new HttpError(400, "invalid_request_error", "task_id belongs to another session_id");
      if (task.status === "expired" && task.expiresAt !== null) {
        const gone = taskExpired(task.id, task.expiresAt, randomUUID());
        return this.json(res, gone.status, gone.body);
      }
      sessionId = sessionIdOf(task.sessionKey);
    }
    sessionId ??= randomUUID();
    const key = `http:${sessionId}`;
    const session = await store.session(key);
    if (session?.ownerId && session.ownerId !== user) throw new HttpError(403, "permission_error", "this session belongs to another user");
    if (taskOptions) await refuseTaskUnderWay(store, key, this.gateway.now());
    const { text, files } = body.data;
    // Held until the answer is written, whether streamed or waited for: both keep a connection and a waiter open.
    const release = this.caps.openStream(user);
    // Subscribe before submitting, so no event of this request is missed.
    const events = new RequestEvents(store, key);
    try {
      // Client keys live apart from the gateway's own ids (`approval:…`), so no key can collide with them.
      const extra = { ...(keyed ? { idempotency: keyed } : {}), ...(taskOptions ? { taskOptions } : {}) };
      const message = {
        sessionKey: key,
        messageId: `client:${randomUUID()}`,
        userId: user,
        text,
        privateSession: true,
        ...extra,
        ...(files.length > 0 ? { files } : {}),
      };
      const bytes = Buffer.byteLength(text) + files.reduce((sum, f) => sum + f.size, 0);
      const result = await this.caps.admit(user, { newSession: !session, bytes }, () => this.gateway.submit(message));
      switch (result.status) {
        case "forbidden":
          throw new HttpError(403, "permission_error", "this session belongs to another user");
        case "refused":
          throw new HttpError(409, "conflict_error", result.text);
        case "ignored":
          throw new HttpError(400, "invalid_request_error", "the message was not addressed to the bot");
        case "limited":
          throw floodRefusal(result);
        case "duplicate":
          return await this.replay(res, user, keyed!, result.requestId, keyed!.fingerprint, stream);
        case "accepted":
          break;
      }
      const { requestId } = result;
      events.bind(requestId);
      if (!stream) {
        const outcome = await this.gateway.whenDone(requestId);
        const answer = await this.answer(sessionId, requestId, isInternal(outcome));
        await this.remember(user, keyed, answer);
        return this.json(res, answer.status, answer.body, answerHeaders(answer, this.gateway.now()));
      }
      await this.remember(user, keyed, await this.stream(res, sessionId, requestId, events));
    } finally {
      events.close();
      release();
    }
  }

  /** The answer a keyed request got, kept so that every retry gets the same one. */
  private async remember(user: string, keyed: { key: string } | undefined, answer: { status: number; body: unknown }): Promise<void> {
    if (!keyed) return;
    try {
      await this.store.rememberAnswer(user, keyed.key, JSON.stringify(answer));
    } catch (error) {
      // The store cannot write now: a retry rebuilds the same answer from the stored request and its replies.
      this.options.log.warn({ err: error }, "could not store the response of an idempotent request");
    }
  }

  private async replay(
    res: ServerResponse,
    user: string,
    keyed: { key: string; fingerprint: string },
    requestId: string,
    fingerprint: string,
    stream: boolean,
  ): Promise<void> {
    if (fingerprint !== keyed.fingerprint) {
      throw new HttpError(422, "invalid_request_error", `Idempotency-Key "${keyed.key}" was already used with a different body; use a new key for a new request`);
    }
    const outcome = await this.gateway.whenDone(requestId);
    const stored = (await this.store.idempotency(user, keyed.key))?.response;
    const request = (await this.store.request(requestId))!;
    const answer = stored
      ? (JSON.parse(stored) as { status: number; body: unknown })
      : await this.answer(sessionIdOf(request.sessionKey), requestId, isInternal(outcome));
    if (!stored) await this.remember(user, keyed, answer);
    if (!stream) return this.json(res, answer.status, answer.body, answerHeaders(answer, this.gateway.now()));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const summary = answer.body as { messages?: unknown[] };
    for (const message of summary.messages ?? []) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    res.end(`event: ${answer.status === 200 ? "done" : "error"}\ndata: ${JSON.stringify(answer.body)}\n\n`);
  }

  private async answer(sessionId: string, requestId: string, internal: boolean): Promise<{ status: number; body: unknown }> {
    if (internal) return { status: 500, body: internalError(requestId) };
    const { store } = this;
    return (await expiredAnswer(store, requestId)) ?? (await quotaAnswer(store, requestId)) ?? { status: 200, body: await requestSummary(store, sessionId, requestId) };
  }

  /**
   * Streams one request's events (its replies, approvals, stack changes) until it is done, with a keepalive
   * comment every 15 s, and returns the answer its last event carried. A client that goes away does not cancel
   * anything: GET /v1/tasks/{id} has the result.
   */
  private async stream(res: ServerResponse, sessionId: string, requestId: string, events: RequestEvents): Promise<{ status: number; body: unknown }> {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    // Headers now: a request queued behind another turn may have nothing to say for a while.
    res.flushHeaders();
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    events.attach(send);
    const timers = this.options.timers ?? systemTimers;
    const every = this.options.keepaliveMs ?? 15_000;
    let keepalive: unknown;
    const beat = () => {
      res.write(": keepalive\n\n");
      keepalive = timers.setTimeout(beat, every);
    };
    keepalive = timers.setTimeout(beat, every);
    const outcome = await this.gateway.whenDone(requestId);
    timers.clearTimeout(keepalive);
    await events.flush();
    const answer = await this.answer(sessionId, requestId, isInternal(outcome));
    send(answer.status === 200 ? "done" : "error", answer.body);
    res.end();
    return answer;
  }

  /** GET /v1/sessions/{id}/events: held open (and counted among the user's open streams) until the client closes it. */
  private async sessionEvents(req: IncomingMessage, res: ServerResponse, sessionId: string, user: string): Promise<void> {
    const key = await ownedSession(this.store, sessionId, user);
    const release = this.caps.openStream(user);
    try {
      await streamSession(req, res, key, { store: this.store, timers: this.options.timers ?? systemTimers, keepaliveMs: this.options.keepaliveMs ?? 15_000 });
    } finally {
      release();
    }
  }

  private async cancel(res: ServerResponse, taskId: string, user: string): Promise<void> {
    const task = await ownedTask(this.store, taskId, user);
    if ((await this.store.activeTask(task.sessionKey))?.id !== task.id)
      throw new HttpError(409, "conflict_error", `task ${taskId} is not running (it is ${task.status})`);
    const result = await this.gateway.submit({ sessionKey: task.sessionKey, messageId: randomUUID(), userId: user, text: "/cancel" });
    if (result.status === "accepted") await this.gateway.whenDone(result.requestId);
    this.json(res, 200, { task_id: taskId, status: (await this.store.task(taskId))?.status });
  }

  private async decide(req: IncomingMessage, res: ServerResponse, approvalId: string, user: string): Promise<void> {
    const body = decisionBody.safeParse(await readJson(req));
    if (!body.success) throw invalid(body.error);
    const approval = await this.store.approval(approvalId);
    // With Accept: text/event-stream the decision streams the turn it resumes, like POST /v1/messages: over the
    // cap of open streams, nothing is decided.
    const streaming = (req.headers.accept ?? "").includes("text/event-stream");
    const release = streaming ? this.caps.openStream(user) : () => {};
    const events = approval ? new RequestEvents(this.store, approval.sessionKey) : null;
    try {
      const result = await this.gateway.decide(approvalId, user, body.data.decision);
      switch (result.status) {
        case "approved":
        case "denied":
          if (streaming) {
            events!.bind(result.requestId);
            return void (await this.stream(res, sessionIdOf(approval!.sessionKey), result.requestId, events!));
          }
          return this.json(res, 200, { approval_id: approvalId, status: result.status, request_id: result.requestId });
        case "already_decided":
          throw new HttpError(409, "conflict_error", `approval ${approvalId} was already decided (${result.decided})`);
        case "task_expired": {
          const gone = taskExpired(result.taskId, result.expiresAt, result.requestId ?? randomUUID());
          return this.json(res, gone.status, gone.body);
        }
        case "not_owner":
          throw new HttpError(403, "permission_error", "only the task's owner can decide");
        case "not_found":
          throw new HttpError(404, "not_found_error", `no approval ${approvalId}`);
      }
    } finally {
      events?.close();
      release();
    }
  }

  private json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { ...headers, "content-type": "application/json", "x-content-type-options": "nosniff" }).end(JSON.stringify(body));
  }
}
