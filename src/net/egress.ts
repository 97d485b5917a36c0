// The one way model-triggered HTTP leaves the process: every hop's scheme, host and resolved addresses are
// checked, the connection goes to the checked address, redirects are followed by hand, and size and time are capped.
import { STATUS_CODES } from "node:http";
import { EMPTY_ALLOWLIST, type Allowlist } from "./allowlist.js";
import { readCapped } from "./body.js";
import { isWrite, METHOD_OVERRIDE_HEADERS, REDIRECT_STATUSES, redirectedMethod } from "./methods.js";
import { checkTarget, schemeRefusal, systemResolver, type Resolver } from "./target.js";
import { openHop } from "./transport.js";

export const MAX_REDIRECTS = 5;

export interface EgressOptions {
  allow?: Allowlist;
  /** Cap on the decoded response body; the rest is never read. */
  maxBytes: number;
  /** Covers resolution, connects, every hop and the body. */
  timeoutMs: number;
  resolve?: Resolver;
}

export interface EgressRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export type EgressResult =
  | {
      outcome: "response";
      status: number;
      statusText: string;
      headers: Record<string, string>;
      /** Decoded as UTF-8; when cut, ends with "[truncated at N bytes]". */
      body: string;
      truncated: boolean;
      finalUrl: string;
      redirects: string[];
    }
  /** A write was redirected to another origin and not followed: going there needs its own approval. */
  | { outcome: "redirect_needs_approval"; status: number; statusText: string; location: string; redirects: string[] }
  /** The guard said no (address, scheme, too many redirects); nothing was sent to that destination. */
  | { outcome: "refused"; reason: string }
  /** The network said no: unresolvable name, refused connection, timeout, undecodable body. */
  | { outcome: "failed"; reason: string };

export interface Egress {
  /** The response body cap, so callers can tell the model about it. */
  readonly maxBytes: number;
  request(request: EgressRequest): Promise<EgressResult>;
}

// Framing headers are ours to set (a wrong Content-Length from the model could smuggle a second request), and we
// only ask for encodings we can decode.
const DROPPED_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
  "accept-encoding",
]);
// Credentials the model meant for one origin must not travel to the next one (fetch drops them the same way).
const ORIGIN_BOUND_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);
const BODY_HEADERS = new Set(["content-type", "content-encoding", "content-language", "content-location"]);

function outgoingHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = { "accept-encoding": "gzip, deflate, br" };
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!DROPPED_HEADERS.has(name.toLowerCase())) out[name] = value;
  }
  return out;
}

function without(headers: Record<string, string>, names: ReadonlySet<string> | readonly string[]): Record<string, string> {
  const set = new Set(names);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !set.has(name.toLowerCase())));
}

/** Resolves with `promise`, or rejects as soon as `signal` aborts (a DNS lookup cannot itself be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

export function createEgress(options: EgressOptions): Egress {
  const allow = options.allow ?? EMPTY_ALLOWLIST;
  const resolve = options.resolve ?? systemResolver;

  async function follow(request: EgressRequest, signal: AbortSignal): Promise<EgressResult> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return { outcome: "refused", reason: `"${request.url}" is not an absolute URL` };
    }
    const write = isWrite(request.method, request.headers);
    let method = request.method.toUpperCase();
    let headers = outgoingHeaders(request.headers);
    let body = method === "GET" || method === "HEAD" ? undefined : request.body;
    const redirects: string[] = [];
    for (;;) {
      const target = await untilAborted(checkTarget(url, allow, resolve), signal);
      if (!target.ok) {
        const via = redirects.length > 0 ? `the server redirected to ${url.href}: ` : "";
        return { outcome: target.outcome, reason: `${via}${target.reason}` };
      }
      const hop = await openHop({ method, url, headers, body, addresses: target.addresses, signal });
      const statusText = STATUS_CODES[hop.status] ?? "";
      const location = REDIRECT_STATUSES.has(hop.status) ? hop.headers.location : undefined;
      if (location === undefined) {
        try {
          if (method === "HEAD")
            return { outcome: "response", status: hop.status, statusText, headers: hop.headers, body: "", truncated: false, finalUrl: url.href, redirects };
          const read = await readCapped(hop.body, hop.headers["content-encoding"], options.maxBytes);
          const text = read.bytes.toString("utf8") + (read.truncated ? `\n[truncated at ${options.maxBytes} bytes]` : "");
          return { outcome: "response", status: hop.status, statusText, headers: hop.headers, body: text, truncated: read.truncated, finalUrl: url.href, redirects };
        } finally {
          await hop.close();
        }
      }
      await hop.close();
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return { outcome: "failed", reason: `${url.href} answered ${hop.status} with an invalid Location "${location}"` };
      }
      if (redirects.length === MAX_REDIRECTS) {
        return { outcome: "refused", reason: `stopped after ${MAX_REDIRECTS} redirects; the next one was to ${next.href}` };
      }
      const scheme = schemeRefusal(next);
      if (scheme) return { outcome: "refused", reason: `the server redirected to ${next.href}: ${scheme}` };
      // The owner approved a write to one origin; a redirect elsewhere is a different request to approve.
      if (write && next.origin !== url.origin) {
        return { outcome: "redirect_needs_approval", status: hop.status, statusText, location: next.href, redirects };
      }
      const rewritten = redirectedMethod(hop.status, method);
      if (!rewritten.keepBody) {
        body = undefined;
        headers = without(headers, [...BODY_HEADERS, ...METHOD_OVERRIDE_HEADERS]);
      }
      method = rewritten.method;
      if (next.origin !== url.origin) headers = without(headers, ORIGIN_BOUND_HEADERS);
      redirects.push(next.href);
      url = next;
    }
  }

  return {
    maxBytes: options.maxBytes,
    async request(request) {
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
      try {
        return await follow(request, signal);
      } catch (error) {
        if (deadline.aborted) return { outcome: "failed", reason: `no complete answer within ${options.timeoutMs} ms (HTTP_REQUEST_TIMEOUT_MS)` };
        if (request.signal?.aborted) return { outcome: "failed", reason: "cancelled" };
        return { outcome: "failed", reason: errorText(error) };
      }
    },
  };
}
