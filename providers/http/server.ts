import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import { systemTimers, type Timers } from "../../src/runtime/deps.js";
import { AdminRoutes, type AdminSettings } from "./admin.js";
import { UserCaps, type UserCapLimits } from "./caps.js";
import { Authenticator, type AuthOptions } from "./auth.js";
import { streamSession } from "./session-events.js";
import { readiness } from "./health.js";
import { forgetMemories, forgetMemory, listMemories, type MemoryAnswer } from "./memories.js";
import { HttpError, internalError, listenError } from "./request.js";
import { json } from "./respond.js";
import { MessageFlow } from "./message-flow.js";
import { TaskActions } from "./task-actions.js";
import { downloadFile } from "./files.js";
import { Router, type Route } from "./router.js";
import type { ApiReads, GatewayFacade } from "../../src/gateway/index.js";
import type { FileLimits } from "../../src/files/limits.js";
import type { FileSource } from "../../src/files/types.js";
import { historyLimit, ownedSession, sessionMessages, sessionView } from "./sessions.js";
import { ownedTask, requestView } from "./tasks.js";
import { catalogView, taskView } from "./views.js";
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
  private readonly flow: MessageFlow;
  private readonly actions: TaskActions;

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
    this.flow = new MessageFlow(gateway, this.store, this.caps, options);
    this.actions = new TaskActions(gateway, this.store, this.caps, this.flow);
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
      { method: "POST", path: "/v1/messages", auth: "user", handler: ({ req, res, user }) => this.flow.postMessage(req, res, user) },
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
      { method: "POST", path: "/v1/tasks/:id/cancel", auth: "user", handler: ({ res, user, params }) => this.actions.cancel(res, params.id!, user) },
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
      { method: "POST", path: "/v1/approvals/:id", auth: "user", handler: ({ req, res, user, params }) => this.actions.decide(req, res, params.id!, user) },
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

  private json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    json(res, status, body, headers);
  }
}
