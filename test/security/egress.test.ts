// The http_request tool's egress guard (SSRF): private and special addresses refused in every spelling, each
// redirect hop re-checked, writes kept to the approved origin, the connection pinned to the checked address,
// and the body and time capped. Real loopback servers on 127.0.0.2/127.0.0.3/::1 play the "allowed" intranet
// (via HTTP_REQUEST_ALLOW); 127.0.0.1 stays refused and has a trap server listening on the same port.
// Names are resolved by injected resolvers; a tripwire on net.connect fails any attempt to leave loopback.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import net from "node:net";
import { Readable } from "node:stream";
import tls from "node:tls";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { allowsHost, parseAllowlist, type Allowlist } from "../../src/net/allowlist.js";
import { readCapped } from "../../src/net/body.js";
import { createEgress, type EgressOptions } from "../../src/net/egress.js";
import type { Resolver } from "../../src/net/target.js";
import { createHttpRequestTool } from "../../src/runtime/tools/http-request.js";
import type { Tool, ToolContext, ToolOutput } from "../../src/runtime/tools/tool.js";

// --- the tripwire: every outbound connection of this file is recorded, and anything but loopback is stopped ---

const isLoopback = (address: string) => address.startsWith("127.") || address === "::1" || /^::ffff:127\./i.test(address);
interface Connection {
  host: string;
  remoteAddress?: string;
  socket: net.Socket;
}
const connections: Connection[] = [];
const realConnect = net.connect;

function tripwire(options: unknown, ...rest: unknown[]): net.Socket {
  if (typeof options !== "object" || options === null) throw new Error("tripwire: unexpected net.connect call form");
  const opts = options as net.TcpNetConnectOpts;
  const host = opts.host ?? "localhost";
  if (net.isIP(host) !== 0 && !isLoopback(host)) throw new Error(`tripwire: connection to ${host} attempted`);
  let guarded = opts;
  if (net.isIP(host) === 0) {
    const lookup = opts.lookup;
    if (!lookup) throw new Error(`tripwire: ${host} would be resolved by the system resolver`);
    guarded = {
      ...opts,
      lookup: ((name: string, o: object, cb: (...args: unknown[]) => void) =>
        lookup(
          name,
          o as never,
          ((err: Error | null, address: unknown, family?: number) => {
            const list = Array.isArray(address) ? address.map((a: { address: string }) => a.address) : [address as string];
            if (!err && list.some((a) => !isLoopback(a))) return cb(new Error(`tripwire: ${name} pinned to ${list.join(", ")}`));
            cb(err, address, family);
          }) as never,
        )) as never,
    };
  }
  const socket = (realConnect as (...args: unknown[]) => net.Socket)(guarded, ...rest);
  const record: Connection = { host, socket };
  connections.push(record);
  socket.once("connect", () => (record.remoteAddress = socket.remoteAddress));
  return socket;
}

// --- loopback servers ---

interface Hit {
  method: string;
  url: string;
  localAddress: string;
  headers: IncomingMessage["headers"];
  body: string;
}

class Site {
  readonly hits: Hit[] = [];
  server!: Server;
  bigResponse: { closedEarly: boolean; sent: number; closed: Promise<unknown> } | null = null;
  constructor(readonly name: string) {}

  async listen(host: string, port = 0): Promise<number> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(port, host);
    await once(this.server, "listening");
    return (this.server.address() as net.AddressInfo).port;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = "";
    for await (const chunk of req) body += String(chunk);
    this.hits.push({ method: req.method!, url: req.url!, localAddress: req.socket.localAddress!, headers: req.headers, body });
    const url = new URL(req.url!, "http://x");
    const path = url.pathname;
    if (path === "/hello") return void res.end(`hello from ${this.name}`);
    if (path === "/echo") return void res.end(JSON.stringify({ method: req.method, body, host: req.headers.host, authorization: req.headers.authorization ?? null }));
    if (path === "/redirect") {
      return void res.writeHead(Number(url.searchParams.get("status") ?? 302), { location: url.searchParams.get("to")! }).end();
    }
    const chain = /^\/chain\/(\d+)$/.exec(path);
    if (chain) {
      const n = Number(chain[1]);
      if (n < Number(url.searchParams.get("end"))) return void res.writeHead(302, { location: `/chain/${n + 1}${url.search}` }).end();
      return void res.end(`end of chain at ${n}`);
    }
    if (path === "/big") return this.sendBig(res);
    if (path === "/gzip-bomb") return void res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(Buffer.alloc(10 * 1024 * 1024)));
    if (path === "/gzip") return void res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync("zipped hello"));
    if (path === "/br") return void res.writeHead(200, { "content-encoding": "br" }).end(brotliCompressSync("brotli hello"));
    if (path === "/hang") return; // never answers
    if (path === "/trickle") {
      res.writeHead(200);
      const timer = setInterval(() => res.write("."), 10);
      res.on("close", () => clearInterval(timer));
      return;
    }
    res.writeHead(404).end("no such page");
  }

  /** 10 MB, written only as fast as the client takes it; records whether the client hung up first. */
  private sendBig(res: ServerResponse): void {
    const state = { closedEarly: false, sent: 0, closed: once(res, "close") };
    this.bigResponse = state;
    const chunk = Buffer.alloc(64 * 1024, "a");
    res.on("close", () => (state.closedEarly = !res.writableFinished));
    const pump = () => {
      while (state.sent < 10 * 1024 * 1024 && !res.destroyed) {
        state.sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end();
    };
    res.writeHead(200, { "content-length": String(10 * 1024 * 1024) });
    pump();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
  }
}

const intranet = new Site("intranet"); // 127.0.0.2, allowed by CIDR
const other = new Site("other"); // 127.0.0.3, allowed by address: another origin
const trap = new Site("trap"); // 127.0.0.1, same port as intranet: must never be reached
const v6 = new Site("v6"); // [::1], allowed only where a test allows ::1/128
let port = 0;
let otherPort = 0;
let v6Port = 0;
let base = "";

beforeAll(async () => {
  vi.spyOn(net, "connect").mockImplementation(tripwire as typeof net.connect);
  vi.spyOn(tls, "connect").mockImplementation(() => {
    throw new Error("tripwire: no TLS connection is expected in this file");
  });
  vi.spyOn(globalThis, "fetch").mockImplementation(() => {
    throw new Error("the guard must not use the global fetch");
  });
  for (let attempt = 0; ; attempt++) {
    port = await intranet.listen("127.0.0.2");
    try {
      await trap.listen("127.0.0.1", port);
      break;
    } catch (error) {
      await intranet.close();
      if (attempt === 10) throw error;
    }
  }
  otherPort = await other.listen("127.0.0.3");
  v6Port = await v6.listen("::1");
  base = `http://127.0.0.2:${port}`;
});

afterEach(() => {
  expect(trap.hits, "the refused 127.0.0.1 was reached").toEqual([]);
  expect(connections.filter((c) => c.remoteAddress !== undefined && !isLoopback(c.remoteAddress))).toEqual([]);
});

afterAll(async () => {
  vi.restoreAllMocks();
  await Promise.all([intranet.close(), other.close(), trap.close(), v6.close()]);
});

// --- helpers ---

function allowlist(text: string): Allowlist {
  const parsed = parseAllowlist(text);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.allow;
}

const names: Record<string, string[]> = {
  localhost: ["127.0.0.1", "::1"],
  "metadata.google.internal": ["169.254.169.254"],
  "intranet.example": ["10.1.2.3"],
  "cdn.example": ["93.184.216.34", "10.0.0.7"],
  "wiki.corp.example": ["127.0.0.2"],
  "wiki.other.example": ["127.0.0.2"],
  "mixed.example": ["127.0.0.2", "127.0.0.1"],
};
const resolver: Resolver = async (host) => {
  const addresses = names[host];
  if (!addresses) throw Object.assign(new Error(`no such name ${host}`), { code: "ENOTFOUND" });
  return addresses.map((address) => ({ address, family: net.isIP(address) }));
};

function tool(options: Partial<EgressOptions> = {}): Tool {
  return createHttpRequestTool(createEgress({ allow: allowlist(`127.0.0.2/32, 127.0.0.3`), maxBytes: 102_400, timeoutMs: 5_000, resolve: resolver, ...options }));
}

function call(t: Tool, input: Record<string, unknown>): Promise<ToolOutput> {
  return t.run(input, { signal: new AbortController().signal } as unknown as ToolContext);
}

const needsApproval = (input: Record<string, unknown>) => (tool().requiresApproval as (raw: Record<string, unknown>) => boolean)(input);
type Idempotent = (raw: Record<string, unknown>, ctx: Pick<ToolContext, "catalog">) => boolean;
const idempotent = (input: Record<string, unknown>) => (tool().idempotent as Idempotent)(input, { catalog: {} as never });

// --- the tests ---

describe("http_request refuses private and special addresses", () => {
  const refused: Array<[url: string, shown: string, why: RegExp]> = [
    ["http://127.0.0.1:PORT/", "127.0.0.1", /loopback/],
    ["http://localhost:PORT/", "127.0.0.1 (localhost)", /loopback/],
    ["http://127.1:PORT/", "127.0.0.1", /loopback/],
    ["http://2130706433:PORT/", "127.0.0.1", /loopback/],
    ["http://0x7f.1:PORT/", "127.0.0.1", /loopback/],
    ["http://0.0.0.0:PORT/", "0.0.0.0", /unspecified/],
    ["http://10.0.0.1:PORT/", "10.0.0.1", /private/],
    ["http://172.16.0.1:PORT/", "172.16.0.1", /private/],
    ["http://172.31.255.254:PORT/", "172.31.255.254", /private/],
    ["http://192.168.1.1:PORT/", "192.168.1.1", /private/],
    ["http://100.64.0.1:PORT/", "100.64.0.1", /carrier-grade NAT/],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254", /link-local/],
    ["http://metadata.google.internal/computeMetadata/v1/", "169.254.169.254 (metadata.google.internal)", /link-local/],
    ["http://intranet.example/", "10.1.2.3 (intranet.example)", /private/],
    ["http://224.0.0.1/", "224.0.0.1", /multicast/],
    ["http://255.255.255.255/", "255.255.255.255", /broadcast/],
    ["http://192.0.0.8/", "192.0.0.8", /reserved/],
    ["http://192.0.2.1/", "192.0.2.1", /documentation/],
    ["http://198.18.0.1/", "198.18.0.1", /benchmarking/],
    ["http://198.51.100.1/", "198.51.100.1", /documentation/],
    ["http://203.0.113.1/", "203.0.113.1", /documentation/],
    ["http://240.0.0.1/", "240.0.0.1", /reserved/],
    ["http://[::]:PORT/", "::", /unspecified/],
    ["http://[::1]:PORT/", "::1", /loopback/],
    ["http://[fc00::1]/", "fc00::1", /unique local/],
    ["http://[fd12:3456::1]/", "fd12:3456::1", /unique local/],
    ["http://[fe80::1]/", "fe80::1", /link-local/],
    ["http://[ff02::1]/", "ff02::1", /multicast/],
    ["http://[2001:db8::1]/", "2001:db8::1", /documentation/],
    ["http://[::ffff:127.0.0.1]:PORT/", "::ffff:7f00:1", /IPv4-mapped address of 127\.0\.0\.1, a loopback/],
    ["http://[::ffff:7f00:1]:PORT/", "::ffff:7f00:1", /IPv4-mapped address of 127\.0\.0\.1, a loopback/],
    ["http://[::ffff:169.254.169.254]/", "::ffff:a9fe:a9fe", /IPv4-mapped address of 169\.254\.169\.254, a link-local/],
    ["http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe", /NAT64 address of 169\.254\.169\.254, a link-local/],
    ["http://[2002:a00:1::1]/", "2002:a00:1::1", /6to4 address of 10\.0\.0\.1, a private/],
  ];

  it.each(refused)("refuses %s", async (url, shown, why) => {
    const before = connections.length;
    const out = await call(tool(), { url: url.replace("PORT", String(port)) });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(new RegExp(`^http_request refused: ${shown.replace(/[.()[\]]/g, "\\$&")} is `));
    expect(out.content).toMatch(why);
    expect(out.content).toContain("HTTP_REQUEST_ALLOW");
    expect(connections.length).toBe(before);
  });

  it("names the metadata host, its address and why", async () => {
    const out = await call(tool(), { url: "http://metadata.google.internal/" });
    expect(out.content).toBe("http_request refused: 169.254.169.254 (metadata.google.internal) is a link-local address; an admin can allow it with HTTP_REQUEST_ALLOW");
  });

  it("refuses a name when any one of its addresses is private, not just the first", async () => {
    const out = await call(tool(), { url: "http://cdn.example/" });
    expect(out.content).toBe("http_request refused: 10.0.0.7 (cdn.example) is a private address; an admin can allow it with HTTP_REQUEST_ALLOW");
    const mixed = await call(tool(), { url: `http://mixed.example:${port}/hello` });
    expect(mixed.content).toMatch(/^http_request refused: 127\.0\.0\.1 \(mixed\.example\) is a loopback address/);
  });

  it.each(["file:///etc/passwd", "ftp://ftp.example/pub", "gopher://127.0.0.2:70/"])("refuses the non-http URL %s", async (url) => {
    const out = await call(tool(), { url });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^http_request refused: (file|ftp|gopher): URLs are not allowed \(only http: and https:\)$/);
  });
});

describe("HTTP_REQUEST_ALLOW", () => {
  it("lets an allowed CIDR (v4 and v6) through while loopback 127.0.0.1 stays refused", async () => {
    const out = await call(tool(), { url: `${base}/hello` });
    expect(out).toEqual({ content: "HTTP 200 OK\nhello from intranet", isError: false });
    const v6out = await call(tool({ allow: allowlist("::1/128") }), { url: `http://[::1]:${v6Port}/hello` });
    expect(v6out).toEqual({ content: "HTTP 200 OK\nhello from v6", isError: false });
    const refused = await call(tool(), { url: `http://127.0.0.1:${port}/hello` });
    expect(refused.content).toMatch(/^http_request refused: 127\.0\.0\.1 is a loopback address/);
  });

  it("lets a name under an allowed *.domain through, whatever it resolves to, and nothing else", async () => {
    const t = tool({ allow: allowlist("*.corp.example") });
    expect(await call(t, { url: `http://wiki.corp.example:${port}/hello` })).toEqual({ content: "HTTP 200 OK\nhello from intranet", isError: false });
    expect((await call(t, { url: `http://wiki.other.example:${port}/hello` })).content).toMatch(/^http_request refused: 127\.0\.0\.2 \(wiki\.other\.example\)/);
    expect((await call(t, { url: `${base}/hello` })).content).toMatch(/^http_request refused: 127\.0\.0\.2 is a loopback/);
  });

  it("parses hosts, wildcards, addresses and CIDRs", () => {
    const allow = allowlist(" wiki.corp.example, *.Corp.Example ,10.0.0.5, fd00::1, [::1], 10.0.0.0/8, fd00::/8,WIKI. ");
    expect(allow.hosts).toEqual(["wiki.corp.example", "wiki"]);
    expect(allow.suffixes).toEqual([".corp.example"]);
    expect(allow.ranges.map(([a, bits]) => `${a.toString()}/${bits}`)).toEqual(["10.0.0.5/32", "fd00::1/128", "::1/128", "10.0.0.0/8", "fd00::/8"]);
    expect(allowsHost(allow, "a.b.corp.example")).toBe(true);
    expect(allowsHost(allow, "corp.example")).toBe(false);
    expect(allowsHost(allow, "evilcorp.example")).toBe(false);
    expect(parseAllowlist("")).toEqual({ allow: { entries: [], hosts: [], suffixes: [], ranges: [] } });
  });

  it.each(["http://wiki.corp", "10.0.0.0/33", "fd00::/129", "10.0.0.1/x", "*", "foo*.bar", "wiki corp", "host:8080", "127.1", "-bad.example"])(
    "rejects the entry %j and names it",
    (entry) => {
      const parsed = parseAllowlist(`ok.example, ${entry}`);
      expect("error" in parsed && parsed.error).toContain(`"${entry}"`);
    },
  );

  it("is a configuration error naming the variable and the entry; the limits have defaults and checked ranges", () => {
    expect(() => loadConfig({ HTTP_REQUEST_ALLOW: "ok.example, 10.0.0.0/40" })).toThrow(ConfigError);
    expect(() => loadConfig({ HTTP_REQUEST_ALLOW: "ok.example, 10.0.0.0/40" })).toThrow(/HTTP_REQUEST_ALLOW: "10\.0\.0\.0\/40" is not a CIDR range/);
    expect(() => loadConfig({ HTTP_REQUEST_MAX_BYTES: "lots" })).toThrow(/HTTP_REQUEST_MAX_BYTES: must be a whole number/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: "0" })).toThrow(/HTTP_REQUEST_TIMEOUT_MS: must be a whole number/);
    const config = loadConfig({ HTTP_REQUEST_ALLOW: "*.corp.example,10.0.0.0/8" });
    expect(config.HTTP_REQUEST_MAX_BYTES).toBe(102_400);
    expect(config.HTTP_REQUEST_TIMEOUT_MS).toBe(15_000);
    expect(config.HTTP_REQUEST_ALLOW.suffixes).toEqual([".corp.example"]);
  });
});

describe("redirects", () => {
  const redirect = (to: string, status = 302) => `${base}/redirect?status=${status}&to=${encodeURIComponent(to)}`;

  it.each([
    ["http://127.0.0.1:PORT/hello", /127\.0\.0\.1 is a loopback address/],
    ["http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a link-local address/],
    ["http://metadata.google.internal/", /169\.254\.169\.254 \(metadata\.google\.internal\) is a link-local address/],
    ["http://[::ffff:7f00:1]:PORT/", /IPv4-mapped address of 127\.0\.0\.1/],
    ["file:///etc/passwd", /file: URLs are not allowed/],
    ["gopher://127.0.0.2:70/", /gopher: URLs are not allowed/],
  ])("re-checks the hop to %s and refuses it", async (to, why) => {
    const target = to.replace("PORT", String(port));
    const out = await call(tool(), { url: redirect(target) });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^http_request refused: the server redirected to \S+: /);
    expect(out.content).toMatch(why);
  });

  it("follows at most 5 redirects", async () => {
    expect(await call(tool(), { url: `${base}/chain/0?end=5` })).toEqual({ content: "HTTP 200 OK\nend of chain at 5", isError: false });
    const out = await call(tool(), { url: `${base}/chain/0?end=6` });
    expect(out).toEqual({ content: `http_request refused: stopped after 5 redirects; the next one was to ${base}/chain/6?end=6`, isError: true });
    expect(intranet.hits.filter((h) => h.url.endsWith("end=6")).map((h) => h.url)).toHaveLength(6);
  });

  it("stops a write redirected to another origin and says a new approval is needed", async () => {
    const to = `http://127.0.0.3:${otherPort}/echo`;
    const out = await call(tool(), { method: "POST", url: redirect(to, 307), body: "pay 10" });
    expect(out.content).toBe(
      `HTTP 307 Temporary Redirect\nThe server redirected this POST request to ${to}, another origin, so it was not followed. ` +
        "Calling http_request again with that URL needs a new approval.",
    );
    expect(other.hits).toEqual([]);
    const toFile = await call(tool(), { method: "POST", url: redirect("file:///etc/passwd", 307), body: "x" });
    expect(toFile.content).toBe("http_request refused: the server redirected to file:///etc/passwd: file: URLs are not allowed (only http: and https:)");
    // A read that names a write in an override header is a write here too.
    const overridden = await call(tool(), { url: redirect(to), headers: { "X-HTTP-Method-Override": "DELETE" } });
    expect(overridden.content).toContain("needs a new approval");
    expect(other.hits).toEqual([]);
  });

  it("follows a write's same-origin redirect with fetch's method rules", async () => {
    const see = await call(tool(), { method: "POST", url: redirect("/echo", 303), body: "pay 10" });
    expect(JSON.parse(see.content.split("\n")[1]!)).toMatchObject({ method: "GET", body: "" });
    const temp = await call(tool(), { method: "POST", url: redirect("/echo", 307), body: "pay 10" });
    expect(JSON.parse(temp.content.split("\n")[1]!)).toMatchObject({ method: "POST", body: "pay 10" });
    const put = await call(tool(), { method: "PUT", url: redirect("/echo", 302), body: "v2" });
    expect(JSON.parse(put.content.split("\n")[1]!)).toMatchObject({ method: "PUT", body: "v2" });
  });

  it("follows a read across origins, checked, without the Authorization header", async () => {
    const out = await call(tool(), { url: redirect(`http://127.0.0.3:${otherPort}/echo`), headers: { Authorization: "Bearer secret" } });
    expect(JSON.parse(out.content.split("\n")[1]!)).toMatchObject({ method: "GET", authorization: null });
    expect(intranet.hits.at(-1)!.headers.authorization).toBe("Bearer secret");
  });
});

describe("method-override headers", () => {
  it.each(["X-HTTP-Method-Override", "x-http-method", "X-METHOD-OVERRIDE"])("a GET with %s: DELETE needs approval like a DELETE", (header) => {
    const input = { method: "GET", url: `${base}/echo`, headers: { [header]: "delete" } };
    expect(needsApproval(input)).toBe(true);
    expect(idempotent(input)).toBe(false);
    expect(needsApproval({ method: "DELETE", url: `${base}/echo` })).toBe(true);
    expect(needsApproval({ url: `${base}/echo`, headers: { Accept: "text/plain" } })).toBe(false);
    expect(idempotent({ url: `${base}/echo` })).toBe(true);
  });
});

describe("DNS rebinding", () => {
  it("connects to the address it checked and resolves once per hop", async () => {
    const calls: string[] = [];
    let answer = "127.0.0.2";
    const rebinding: Resolver = async (host) => {
      calls.push(host);
      const address = answer;
      answer = "127.0.0.1"; // the attacker's DNS flips to loopback right after the check
      return [{ address, family: 4 }];
    };
    const from = connections.length;
    const out = await call(tool({ resolve: rebinding }), { url: `http://rebind.example:${port}/echo` });
    expect(JSON.parse(out.content.split("\n")[1]!)).toMatchObject({ method: "GET", host: `rebind.example:${port}` });
    expect(calls).toEqual(["rebind.example"]);
    expect(intranet.hits.at(-1)!.localAddress).toBe("127.0.0.2");
    expect(connections.slice(from).map((c) => [c.host, c.remoteAddress])).toEqual([["rebind.example", "127.0.0.2"]]);

    // A second hop to the same name resolves again and is checked again: the flipped answer is refused.
    calls.length = 0;
    answer = "127.0.0.2";
    const hop = await call(tool({ resolve: rebinding }), { url: `http://rebind.example:${port}/redirect?to=/hello` });
    expect(calls).toEqual(["rebind.example", "rebind.example"]);
    expect(hop.content).toBe(
      `http_request refused: the server redirected to http://rebind.example:${port}/hello: 127.0.0.1 (rebind.example) is a loopback address; an admin can allow it with HTTP_REQUEST_ALLOW`,
    );
  });
});

describe("limits", () => {
  it("reads at most the cap of a 10 MB body and says where it was cut", async () => {
    const from = connections.length;
    const out = await call(tool({ maxBytes: 65_536 }), { url: `${base}/big` });
    const [head, ...rest] = out.content.split("\n");
    expect(head).toBe("HTTP 200 OK");
    expect(rest.join("\n")).toBe(`${"a".repeat(65_536)}\n[truncated at 65536 bytes]`);
    const socket = connections.slice(from)[0]!.socket;
    expect(socket.bytesRead).toBeLessThan(65_536 + 512 * 1024);
    await intranet.bigResponse!.closed;
    expect(intranet.bigResponse!.closedEarly).toBe(true);
  });

  it("pulls no more than the cap plus the stream buffers from a 10 MB body stream", async () => {
    let pulled = 0;
    // 10 MB if read to the end: a reader that ignored the cap would finish and fail the count below.
    const endless = new Readable({
      read() {
        if (pulled >= 10 * 1024 * 1024) return void this.push(null);
        pulled += 16_384;
        this.push(Buffer.alloc(16_384, "b"));
      },
    });
    const read = await readCapped(endless, undefined, 50_000);
    expect(read.bytes.length).toBe(50_000);
    expect(read.truncated).toBe(true);
    expect(pulled).toBeLessThanOrEqual(50_000 + 2 * 16_384 + endless.readableHighWaterMark);
    expect(endless.destroyed).toBe(true);
  });

  it("decodes gzip and br bodies and caps a decompression bomb", async () => {
    expect(await call(tool(), { url: `${base}/gzip` })).toEqual({ content: "HTTP 200 OK\nzipped hello", isError: false });
    expect(await call(tool(), { url: `${base}/br` })).toEqual({ content: "HTTP 200 OK\nbrotli hello", isError: false });
    const bomb = await call(tool({ maxBytes: 10_000 }), { url: `${base}/gzip-bomb` });
    expect(bomb.content).toBe(`HTTP 200 OK\n${"\0".repeat(10_000)}\n[truncated at 10000 bytes]`);
  });

  it("gives up on a server that never answers, one that trickles forever, and a resolver that hangs", async () => {
    const t = tool({ timeoutMs: 200 });
    const why = "failed: no complete answer within 200 ms (HTTP_REQUEST_TIMEOUT_MS)";
    expect(await call(t, { url: `${base}/hang` })).toEqual({ content: `http_request to ${base}/hang ${why}`, isError: true });
    expect(await call(t, { url: `${base}/trickle` })).toEqual({ content: `http_request to ${base}/trickle ${why}`, isError: true });
    const stuck = tool({ timeoutMs: 200, resolve: () => new Promise(() => {}) });
    expect(await call(stuck, { url: "http://slow.example/" })).toEqual({ content: `http_request to http://slow.example/ ${why}`, isError: true });
  });
});
