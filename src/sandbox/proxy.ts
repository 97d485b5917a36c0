// The only way out of a sandbox that has a network: an HTTP proxy (CONNECT for TLS and other TCP, absolute-form
// requests for plain HTTP) on a Unix socket bound into the sandbox. It connects only to host names listed in
// SANDBOX_ALLOW_HOSTS, resolves them itself, and refuses every name that resolves to a private, loopback,
// link-local (cloud metadata), or otherwise special address, with the same address checks as the http_request
// tool's egress guard; there is no exception list for those here. The checked address is the one dialled.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { blockedReason, parseAddress } from "../net/addresses.js";
import { allowsHost, type Allowlist } from "../net/allowlist.js";
import type { Resolver } from "../net/target.js";

export interface ProxyOptions {
  /** SANDBOX_ALLOW_HOSTS: host names and *.domain wildcards. */
  allow: Allowlist;
  resolve: Resolver;
  /** Opens the TCP connection to a checked address (replaced in tests, where "the internet" is a local server). */
  connect(address: string, port: number): net.Socket;
  log: Logger;
}

export type Destination = { ok: true; host: string; address: string; port: number } | { ok: false; status: 400 | 403 | 502; reason: string };

const HINT = "an admin can list host names in SANDBOX_ALLOW_HOSTS";

/** Decides whether a sandbox may connect to `host`:`port`, and to which address. */
export async function checkDestination(rawHost: string, port: number, options: Pick<ProxyOptions, "allow" | "resolve">): Promise<Destination> {
  const host = rawHost
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (!host || !Number.isInteger(port) || port < 1 || port > 65_535) return { ok: false, status: 400, reason: `"${rawHost}:${port}" is not a host and port` };
  if (parseAddress(host)) return { ok: false, status: 403, reason: `connections to IP addresses (${host}) are not allowed from the sandbox; ${HINT}` };
  if (!allowsHost(options.allow, host)) {
    const listed = options.allow.entries.length ? `allowed: ${options.allow.entries.join(", ")}` : "no host is allowed";
    return { ok: false, status: 403, reason: `${host} is not in SANDBOX_ALLOW_HOSTS (${listed}); ${HINT}` };
  }
  let answers: ReadonlyArray<{ address: string }>;
  try {
    answers = await options.resolve(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { ok: false, status: 502, reason: `cannot resolve ${host}${typeof code === "string" ? ` (${code})` : ""}` };
  }
  if (answers.length === 0) return { ok: false, status: 502, reason: `${host} has no addresses` };
  for (const answer of answers) {
    const parsed = parseAddress(answer.address);
    const why = parsed ? blockedReason(parsed) : "not an IP address";
    // One private answer refuses the name: a name that may point inside the network is not a public host.
    if (why) return { ok: false, status: 403, reason: `${host} resolves to ${answer.address}, ${why}; the sandbox never connects there` };
  }
  return { ok: true, host, address: parseAddress(answers[0]!.address)!.toString(), port };
}

// Hop-by-hop and proxy headers are the proxy's business; the rest goes upstream as the client wrote it.
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

export interface RunningProxy {
  /** Destinations refused so far ("host:port: reason"), for the command's result. */
  readonly refusals: readonly string[];
  close(): Promise<void>;
}

/** Starts the proxy on a Unix socket at `socketPath`. */
export async function startProxy(socketPath: string, options: ProxyOptions): Promise<RunningProxy> {
  const refusals: string[] = [];
  const open = new Set<Duplex>();
  const track = (s: Duplex) => {
    open.add(s);
    s.once("close", () => open.delete(s));
  };
  const refuse = (target: string, reason: string) => {
    refusals.push(`${target}: ${reason}`);
    options.log.info({ target, reason }, "sandbox network: connection refused");
  };

  const server = createServer();
  server.on("connection", track);
  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    client.on("error", () => client.destroy());
    const target = req.url ?? "";
    const at = target.lastIndexOf(":");
    void checkDestination(target.slice(0, at), Number(target.slice(at + 1)), options).then((dest) => {
      if (!dest.ok) {
        refuse(target, dest.reason);
        client.end(
          `HTTP/1.1 ${dest.status} ${dest.status === 403 ? "Forbidden" : "Bad Gateway"}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${dest.reason}\n`,
        );
        return;
      }
      const upstream = options.connect(dest.address, dest.port);
      track(upstream);
      let established = false;
      upstream.once("connect", () => {
        established = true;
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", (error: NodeJS.ErrnoException) => {
        if (!established && !client.writableEnded) {
          client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${dest.host}:${dest.port}: ${error.code ?? error.message}\n`);
        } else client.destroy();
      });
      client.once("close", () => upstream.destroy());
    });
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    void forward(req, res, options, refuse, track);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    refusals,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A plain-HTTP request in absolute form (GET http://host/path), sent on to the checked address. */
async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  options: ProxyOptions,
  refuse: (target: string, reason: string) => void,
  track: (s: Duplex) => void,
): Promise<void> {
  const answer = (status: number, text: string) => {
    res.writeHead(status, { "content-type": "text/plain", connection: "close" });
    res.end(`${text}\n`);
  };
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    return answer(400, "the sandbox proxy takes absolute http:// URLs (or CONNECT for https)");
  }
  if (url.protocol !== "http:") return answer(400, `${url.protocol} URLs go through CONNECT, not as a plain request`);
  const port = url.port ? Number(url.port) : 80;
  const dest = await checkDestination(url.hostname, port, options);
  if (!dest.ok) {
    refuse(`${url.hostname}:${port}`, dest.reason);
    return answer(dest.status, dest.reason);
  }
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !HOP_HEADERS.has(name)));
  const upstream = httpRequest({
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host, connection: "close" },
    createConnection: () => {
      const socket = options.connect(dest.address, dest.port);
      track(socket);
      return socket;
    },
  });
  upstream.on("response", (reply) => {
    const replyHeaders = Object.fromEntries(Object.entries(reply.headers).filter(([name]) => !HOP_HEADERS.has(name)));
    res.writeHead(reply.statusCode ?? 502, reply.statusMessage, { ...replyHeaders, connection: "close" });
    reply.pipe(res);
  });
  upstream.on("error", (error: NodeJS.ErrnoException) => {
    if (!res.headersSent) answer(502, `${dest.host}:${dest.port}: ${error.code ?? error.message}`);
    else res.destroy();
  });
  req.pipe(upstream);
}

/** Dials the real network (the product's `connect`). */
export const tcpConnect = (address: string, port: number): net.Socket => net.connect({ host: address, port });
