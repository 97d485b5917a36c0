import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import { z } from "zod";
import type { Gateway } from "../../src/gateway/gateway.js";
import type { OutboundMessage } from "../../src/gateway/types.js";
import type { Timers } from "../../src/runtime/deps.js";
import { Authenticator, type AuthOptions } from "./auth.js";
import { WEB_PAGE } from "./page.js";
import { approvalView, sessionIdOf, taskView } from "./views.js";

export interface HttpOptions {
  host: string;
  port: number;
  auth: AuthOptions;
  log: Logger;
  /** For the SSE keepalive; tests drive it by hand. */
  timers?: Timers;
  keepaliveMs?: number;
}

const MAX_BODY = 1024 * 1024;
const uuid = z.uuid({ error: "must be a UUID" });
const messageBody = z.object({
  session_id: uuid.optional(),
  task_id: uuid.optional(),
  items: z
    .array(z.object({ content_type: z.literal("text", { error: 'must be "text"' }), content: z.string().min(1, { error: "must not be empty" }) }), {
      error: "must be a list of {content_type, content} items",
    })
    .min(1, { error: "must hold at least one item" }),
});
const decisionBody = z.object({ decision: z.enum(["approve", "deny"], { error: 'must be "approve" or "deny"' }) });

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

type Listener = (message: OutboundMessage | { stack: { type: "push" | "pop"; agent: string; depth: number } }) => void;

/**
 * The HTTP API: the same stack semantics as a chat, for programs. Sessions are `http:<session_id>`;
 * every reply is collected per request and streamed to SSE clients of the session.
 */
export class HttpProvider {
  private server: Server | null = null;
  private readonly auth: Authenticator;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly replies = new Map<string, OutboundMessage[]>();

  constructor(
    private readonly gateway: Gateway,
    private readonly options: HttpOptions,
  ) {
    this.auth = new Authenticator(options.auth);
  }

  async start(): Promise<void> {
    this.gateway.register({
      prefix: "http",
      deliver: async (message) => {
        if (message.requestId) this.replies.set(message.requestId, [...(this.replies.get(message.requestId) ?? []), message]);
        for (const listener of this.listeners.get(message.sessionKey) ?? []) listener(message);
      },
      event: (key, event) => {
        for (const listener of this.listeners.get(key) ?? []) listener({ stack: event });
      },
    });
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(this.options.port, this.options.host, resolve));
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

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const path = new URL(req.url ?? "/", "http://x").pathname;
    try {
      if (req.method === "GET" && (path === "/" || path === "/index.html")) {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(WEB_PAGE);
        return;
      }
      const auth = await this.auth.check(req.headers.authorization);
      if (!auth.ok) throw new HttpError(401, "authentication_error", auth.reason);
      const user = auth.userId;
      let m: RegExpExecArray | null;
      if (req.method === "POST" && path === "/v1/messages") return await this.postMessage(req, res, user);
      if (req.method === "GET" && (m = /^\/v1\/tasks\/([^/]+)$/.exec(path))) return this.json(res, 200, taskView(this.gateway.store, this.ownedTask(m[1]!, user)));
      if (req.method === "POST" && (m = /^\/v1\/tasks\/([^/]+)\/cancel$/.exec(path))) return await this.cancel(res, m[1]!, user);
      if (req.method === "GET" && (m = /^\/v1\/sessions\/([^/]+)$/.exec(path))) return this.getSession(res, m[1]!, user);
      if (req.method === "POST" && (m = /^\/v1\/approvals\/([^/]+)$/.exec(path))) return await this.decide(req, res, m[1]!, user);
      throw new HttpError(404, "not_found_error", `no route for ${req.method} ${path}`);
    } catch (error) {
      if (error instanceof HttpError) return this.json(res, error.status, { type: "error", error: { type: error.type, message: error.message }, request_id: requestId });
      this.options.log.error({ err: error, request: requestId, path }, "http request failed");
      this.json(res, 500, { type: "error", error: { type: "internal_error", message: "the server could not handle this request; see its log" }, request_id: requestId });
    }
  }

  private async postMessage(req: IncomingMessage, res: ServerResponse, user: string): Promise<void> {
    const body = messageBody.safeParse(await readJson(req));
    if (!body.success) throw invalid(body.error);
    const { store } = this.gateway;
    let sessionId = body.data.session_id;
    if (body.data.task_id) {
      const task = this.ownedTask(body.data.task_id, user);
      if (sessionId && task.sessionKey !== `http:${sessionId}`) throw new HttpError(400, "invalid_request_error", "task_id belongs to another session_id");
      sessionId = sessionIdOf(task.sessionKey);
    }
    sessionId ??= randomUUID();
    const key = `http:${sessionId}`;
    const owner = store.tasks(key)[0]?.ownerId;
    if (owner && owner !== user) throw new HttpError(403, "permission_error", "this session belongs to another user");
    const idempotencyKey = typeof req.headers["idempotency-key"] === "string" ? req.headers["idempotency-key"] : randomUUID();
    const text = body.data.items.map((i) => i.content).join("\n\n");
    const stream = (req.headers.accept ?? "").includes("text/event-stream");
    // Subscribe before submitting, so no event of this request is missed.
    const events: Parameters<Listener>[0][] = [];
    let push: Listener = (e) => void events.push(e);
    const listener: Listener = (e) => push(e);
    this.subscribe(key, listener);
    try {
      const result = this.gateway.submit({ sessionKey: key, messageId: idempotencyKey, userId: user, text });
      if (result.status === "refused") throw new HttpError(409, "conflict_error", result.text);
      if (result.status === "ignored") throw new HttpError(400, "invalid_request_error", "the message was not addressed to the bot");
      const { requestId } = result;
      if (!stream) {
        const outcome = await this.gateway.whenDone(requestId);
        if (outcome.internalError) throw new Error(`request ${requestId} failed on the server`);
        return this.json(res, 200, this.summary(sessionId, requestId));
      }
      await this.stream(res, sessionId, requestId, events, (p) => (push = p));
    } finally {
      this.listeners.get(key)?.delete(listener);
    }
  }

  /**
   * Streams one request's events (its replies, approvals, stack changes) until it is done, with a keepalive
   * comment every 15 s. A client that goes away does not cancel anything: GET /v1/tasks/{id} has the result.
   */
  private async stream(
    res: ServerResponse,
    sessionId: string,
    requestId: string,
    earlier: Parameters<Listener>[0][],
    route: (listener: Listener) => void,
  ): Promise<void> {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const push: Listener = (e) => {
      if ("stack" in e) send("stack", e.stack);
      else if (e.requestId === requestId || e.approvalId) send(e.approvalId ? "approval" : "message", outboundView(e));
    };
    route(push);
    for (const e of earlier.splice(0)) push(e);
    const timers = this.options.timers ?? { setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout) };
    const every = this.options.keepaliveMs ?? 15_000;
    let keepalive: unknown;
    const beat = () => {
      res.write(": keepalive\n\n");
      keepalive = timers.setTimeout(beat, every);
    };
    keepalive = timers.setTimeout(beat, every);
    const outcome = await this.gateway.whenDone(requestId);
    timers.clearTimeout(keepalive);
    send(outcome.internalError ? "error" : "done", this.summary(sessionId, requestId));
    res.end();
  }

  private summary(sessionId: string, requestId: string) {
    const { store } = this.gateway;
    const request = store.request(requestId)!;
    const task = request.taskId ? store.task(request.taskId) : null;
    const replies = this.replies.get(requestId) ?? [];
    this.replies.delete(requestId);
    const last = [...replies].reverse().find((r) => r.kind === "message") ?? replies.at(-1);
    return {
      session_id: sessionId,
      task_id: task?.id ?? null,
      request_id: requestId,
      status: task?.status ?? request.status,
      agent: last?.agent ?? null,
      text: last?.text ?? null,
      structured_output: task?.structuredOutput ?? null,
      messages: replies.map(outboundView),
      pending_approvals: task ? store.pendingApprovals(task.sessionKey).filter((a) => a.taskId === task.id).map(approvalView) : [],
    };
  }

  private ownedTask(taskId: string, user: string) {
    if (!uuid.safeParse(taskId).success) throw new HttpError(400, "invalid_request_error", "task_id must be a UUID");
    const task = this.gateway.store.task(taskId);
    if (!task || !task.sessionKey.startsWith("http:")) throw new HttpError(404, "not_found_error", `no task ${taskId}`);
    if (task.ownerId !== user) throw new HttpError(403, "permission_error", "this task belongs to another user");
    return task;
  }

  private getSession(res: ServerResponse, sessionId: string, user: string): void {
    if (!uuid.safeParse(sessionId).success) throw new HttpError(400, "invalid_request_error", "session_id must be a UUID");
    const key = `http:${sessionId}`;
    const tasks = this.gateway.store.tasks(key);
    if (tasks.length === 0) throw new HttpError(404, "not_found_error", `no session ${sessionId}`);
    if (tasks[0]!.ownerId !== user) throw new HttpError(403, "permission_error", "this session belongs to another user");
    this.json(res, 200, {
      session_id: sessionId,
      tasks: tasks.map((t) => ({ task_id: t.id, status: t.status, created_at: new Date(t.createdAt).toISOString() })),
      usage: this.gateway.store.sessionUsage(key),
    });
  }

  private async cancel(res: ServerResponse, taskId: string, user: string): Promise<void> {
    const task = this.ownedTask(taskId, user);
    if (this.gateway.store.activeTask(task.sessionKey)?.id !== task.id) throw new HttpError(409, "conflict_error", `task ${taskId} is not running (it is ${task.status})`);
    const result = this.gateway.submit({ sessionKey: task.sessionKey, messageId: randomUUID(), userId: user, text: "/cancel" });
    if (result.status === "accepted") await this.gateway.whenDone(result.requestId);
    this.json(res, 200, { task_id: taskId, status: this.gateway.store.task(taskId)?.status });
  }

  private async decide(req: IncomingMessage, res: ServerResponse, approvalId: string, user: string): Promise<void> {
    const body = decisionBody.safeParse(await readJson(req));
    if (!body.success) throw invalid(body.error);
    const approval = this.gateway.store.approval(approvalId);
    const events: Parameters<Listener>[0][] = [];
    let push: Listener = (e) => void events.push(e);
    const listener: Listener = (e) => push(e);
    if (approval) this.subscribe(approval.sessionKey, listener);
    try {
      const result = this.gateway.decide(approvalId, user, body.data.decision);
      switch (result.status) {
        case "approved":
        case "denied":
          // With Accept: text/event-stream the decision streams the turn it resumes, like POST /v1/messages.
          if ((req.headers.accept ?? "").includes("text/event-stream")) {
            return await this.stream(res, sessionIdOf(approval!.sessionKey), result.requestId, events, (p) => (push = p));
          }
          return this.json(res, 200, { approval_id: approvalId, status: result.status, request_id: result.requestId });
        case "already_decided":
          throw new HttpError(409, "conflict_error", `approval ${approvalId} was already decided (${result.decided})`);
        case "not_owner":
          throw new HttpError(403, "permission_error", "only the task's owner can decide");
        case "not_found":
          throw new HttpError(404, "not_found_error", `no approval ${approvalId}`);
      }
    } finally {
      if (approval) this.listeners.get(approval.sessionKey)?.delete(listener);
    }
  }

  private subscribe(key: string, listener: Listener): void {
    const set = this.listeners.get(key) ?? new Set();
    set.add(listener);
    this.listeners.set(key, set);
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }
}

function outboundView(m: OutboundMessage) {
  return { agent: m.agent, depth: m.depth, text: m.text, kind: m.kind, ...(m.approvalId ? { approval_id: m.approvalId } : {}) };
}

function invalid(error: z.ZodError): HttpError {
  const issue = error.issues[0]!;
  const field = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "") || "body";
  return new HttpError(400, "invalid_request_error", `${field} ${issue.message}`);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_BODY) throw new HttpError(413, "request_too_large", "the body is over 1 MB");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, "request_too_large", "the body is over 1 MB");
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
  } catch {
    throw new HttpError(400, "invalid_request_error", "the body is not valid JSON");
  }
}
