import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { formatBytes } from "../../src/files/limits.js";
import type { OutboundMessage } from "../../src/gateway/index.js";

// The HTTP API's edge: errors with a status and a type, JSON bodies read with a size cap.

export const MAX_BODY = 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    /** More fields of the body's `error` object (a refused cap names itself: `limit`). */
    readonly detail: Record<string, unknown> = {},
    /** Response headers (a 429's Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** One line for the admin instead of an EADDRINUSE stack trace. */
export function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === "EADDRINUSE") {
    return new Error(`HTTP_PORT ${port} on ${host} is already in use (is another Switchboard running?); stop it or set HTTP_PORT to a free port`);
  }
  if (error.code === "EACCES") return new Error(`HTTP_PORT ${port} on ${host} needs privileges this process lacks; use a port above 1023`);
  if (error.code === "EADDRNOTAVAIL") return new Error(`HTTP_HOST ${host} is not an address of this machine; use 127.0.0.1 or 0.0.0.0`);
  return new Error(`the HTTP API cannot listen on ${host}:${port} (HTTP_HOST, HTTP_PORT): ${error.message}`);
}

export function outboundView(m: OutboundMessage) {
  return { agent: m.agent, depth: m.depth, text: m.text, kind: m.kind, ...(m.approvalId ? { approval_id: m.approvalId } : {}) };
}

export function invalid(error: z.ZodError): HttpError {
  const issue = error.issues[0]!;
  const field =
    issue.path
      .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
      .join("")
      .replace(/^\./, "") || "body";
  return new HttpError(400, "invalid_request_error", `${field} ${issue.message}`);
}

export async function readJson(req: IncomingMessage, max = MAX_BODY, why = ""): Promise<unknown> {
  const body = await readBody(req, max, why);
  try {
    return JSON.parse(body.toString("utf8") || "null");
  } catch {
    throw new HttpError(400, "invalid_request_error", "the body is not valid JSON");
  }
}

/** The whole body, refused with 413 as soon as it passes `max` (the Content-Length first, then what arrives). */
export async function readBody(req: IncomingMessage, max = MAX_BODY, why = ""): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, "request_too_large", `the body is over ${formatBytes(max)}${why}`);
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > max) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

export function internalError(requestId: string) {
  return { type: "error", error: { type: "internal_error", message: "the server could not handle this request; see its log" }, request_id: requestId };
}
