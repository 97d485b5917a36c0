import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { z } from "zod";
import { systemTimers, type Timers } from "../../src/runtime/deps.js";
import { isInternal, type ApiReads, type GatewayFacade } from "../../src/gateway/index.js";
import { DEFAULT_FILE_LIMITS, type FileLimits } from "../../src/files/limits.js";
import { floodRefusal, type UserCaps } from "./caps.js";
import { RequestEvents } from "./events.js";
import { readMessageBody } from "./message-body.js";
import { answerHeaders, quotaAnswer } from "./quota-answer.js";
import { HttpError, internalError } from "./request.js";
import { json } from "./respond.js";
import { checkExpiry, taskOptionsOf } from "./task-options.js";
import { expiredAnswer, ownedTask, refuseTaskUnderWay, taskExpired } from "./tasks.js";
import { requestSummary, sessionIdOf } from "./views.js";

/** Printable ASCII, as Stripe and the IETF Idempotency-Key draft use it; bounded so it can be a database key. */
const idempotencyKey = z.string().regex(/^[\x21-\x7e][\x20-\x7e]{0,254}$/, { error: "must be 1-255 printable ASCII characters" });

export interface MessageFlowOptions {
  log: Logger;
  /** For the SSE keepalive; tests drive it by hand. */
  timers?: Timers | undefined;
  keepaliveMs?: number | undefined;
  /** MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE (default: the product's defaults). */
  fileLimits?: FileLimits | undefined;
}

/**
 * POST /v1/messages, from the body to the answer: an Idempotency-Key's retry replays the first answer, a new message
 * is submitted under the user's caps, and its answer is waited for (JSON) or streamed (SSE) until the request is done.
 */
export class MessageFlow {
  constructor(
    private readonly gateway: GatewayFacade,
    private readonly store: ApiReads,
    private readonly caps: UserCaps,
    private readonly options: MessageFlowOptions,
  ) {}

  async postMessage(req: IncomingMessage, res: ServerResponse, user: string): Promise<void> {
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
        return json(res, gone.status, gone.body);
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
        return json(res, answer.status, answer.body, answerHeaders(answer, this.gateway.now()));
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
    if (!stream) return json(res, answer.status, answer.body, answerHeaders(answer, this.gateway.now()));
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
  async stream(res: ServerResponse, sessionId: string, requestId: string, events: RequestEvents): Promise<{ status: number; body: unknown }> {
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
}
