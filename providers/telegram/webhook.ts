import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { BotError } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "pino";

/** Telegram's updates are a few KB; anything near this is not from Telegram. */
export const MAX_UPDATE_BYTES = 1024 * 1024;

export interface WebhookOptions {
  /** The path of TELEGRAM_WEBHOOK_URL; any other path is 404. */
  path: string;
  /** What Telegram sends in X-Telegram-Bot-Api-Secret-Token (setWebhook's secret_token). */
  secret: string;
  log: Logger;
  /**
   * Runs the bot's middleware for one update. It is never awaited by the HTTP response: a handler that
   * waits on the Bot API must not hold Telegram's request (Telegram then resends the update).
   */
  handle: (update: Update) => Promise<void>;
  maxBytes?: number;
}

type Rejection = { status: 400 | 401 | 404 | 405 | 413 | 415; reason: string };

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/** The next turn of the event loop, after every pending microtask has run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The webhook's HTTP handler: validate, hand the update to the bot, answer 200. The response waits one turn
 * of the event loop, so an update whose handling needs no I/O (a message reaching the gateway's inbox,
 * which is synchronous and durable) is stored before Telegram hears 200 and stops resending it; anything
 * slower (a Bot API call) carries on after the response. Nothing here throws: a bad request gets a status
 * and a log line, a failing handler a log line.
 */
export function webhookHandler(options: WebhookOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { log, path } = options;
  const maxBytes = options.maxBytes ?? MAX_UPDATE_BYTES;
  const secret = digest(options.secret);

  const reject = (req: IncomingMessage, res: ServerResponse, { status, reason }: Rejection) => {
    // Scanners probe every public URL: a wrong path or method is routine, a wrong secret or body is not.
    const level = status === 404 || status === 405 ? "info" : "warn";
    log[level]({ status, reason, method: req.method, remote: req.socket.remoteAddress }, "telegram webhook request rejected");
    if (res.headersSent) return;
    if (status === 405) res.setHeader("allow", "POST");
    // The rest of a refused body is not read; the connection goes with it.
    if (status === 413 || !req.complete) res.setHeader("connection", "close");
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(`${reason}\n`);
  };

  /** The request's problem before its body is read, or null. */
  const checkHead = (req: IncomingMessage): Rejection | null => {
    if ((req.url ?? "/").split("?")[0] !== path) return { status: 404, reason: "not found" };
    if (req.method !== "POST") return { status: 405, reason: "only POST is accepted here" };
    const given = req.headers["x-telegram-bot-api-secret-token"];
    // Digests have equal lengths, so timingSafeEqual never throws and timing reveals nothing about the secret.
    if (typeof given !== "string" || !timingSafeEqual(digest(given), secret)) {
      return { status: 401, reason: "missing or wrong X-Telegram-Bot-Api-Secret-Token" };
    }
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") return { status: 415, reason: "the body must be application/json" };
    const length = Number(req.headers["content-length"] ?? 0);
    if (length > maxBytes) return { status: 413, reason: `the body is over ${maxBytes} bytes` };
    return null;
  };

  const accept = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    let update: unknown;
    try {
      update = JSON.parse(body.toString("utf8"));
    } catch {
      return reject(req, res, { status: 400, reason: "the body is not JSON" });
    }
    if (typeof update !== "object" || update === null || Array.isArray(update)) {
      return reject(req, res, { status: 400, reason: "the body is not a JSON object" });
    }
    const id = (update as { update_id?: unknown }).update_id;
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) {
      return reject(req, res, { status: 400, reason: "the update has no numeric update_id" });
    }
    // Started before the response and never awaited by it; every rejection ends here.
    let handling: Promise<void>;
    try {
      handling = options.handle(update as Update);
    } catch (error) {
      handling = Promise.reject(error);
    }
    void handling.catch((error: unknown) => log.error({ err: error instanceof BotError ? error.error : error, update: id }, "telegram update failed"));
    await nextTurn();
    if (!res.headersSent) res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("ok\n");
  };

  return (req, res) => {
    res.on("error", (error) => log.debug({ err: error }, "telegram webhook response failed"));
    req.on("error", (error) => log.debug({ err: error }, "telegram webhook request failed"));
    const problem = checkHead(req);
    if (problem) return reject(req, res, problem);

    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // No Content-Length (chunked) or a lying one: stop keeping the body and answer now.
      tooLarge = true;
      chunks.length = 0;
      reject(req, res, { status: 413, reason: `the body is over ${maxBytes} bytes` });
    });
    req.on("end", () => {
      if (tooLarge) return;
      accept(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        log.error({ err: error }, "telegram webhook handler failed");
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
  };
}

/** Listens for Telegram's POSTs; resolves once the port is bound, rejects if it cannot be (port in use). */
export async function startWebhookServer(port: number, options: WebhookOptions): Promise<Server> {
  const server = createServer(webhookHandler(options));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (error) => options.log.error({ err: error }, "telegram webhook server failed"));
  return server;
}
