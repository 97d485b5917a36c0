// SANDBOX_ALLOW_HOSTS with real bubblewrap: a sandboxed program reaches a listed host only through the
// filtering proxy, by name; unlisted names, IP addresses, and listed names that resolve to private or metadata
// addresses are refused, and nothing else leaves the sandbox. "The internet" is a loopback server: the proxy's
// resolver and dialler are injected, so the test never touches real DNS or the network, and every dial is recorded.
import { writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import net from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { parseAllowlist, type Allowlist } from "../../src/net/allowlist.js";
import type { Resolver } from "../../src/net/target.js";
import { checkDestination } from "../../src/sandbox/proxy.js";
import { describeNetwork, makeSite, probe, testSandbox, type Site } from "../helpers/sandbox.js";

const PUBLIC = "93.184.215.14";
const DNS: Record<string, string> = {
  "allowed.example": PUBLIC,
  "api.allowed.example": PUBLIC,
  "other.example": "93.184.215.15",
  "internal.example": "10.0.0.7",
  "metadata.google.internal": "169.254.169.254",
  "rebound.example": "127.0.0.1",
};
const resolve: Resolver = async (host) => {
  const address = DNS[host];
  if (!address) throw Object.assign(new Error(`no such host ${host}`), { code: "ENOTFOUND" });
  return [{ address, family: 4 }];
};
const allow = (parseAllowlist("allowed.example,*.allowed.example,internal.example,metadata.google.internal,rebound.example") as { allow: Allowlist }).allow;

let web: Server;
let echo: net.Server;
const dials: string[] = [];
// Only the public address leads anywhere (to the loopback servers); a dial anywhere else is recorded and fails.
const connect = (address: string, port: number) => {
  dials.push(`${address}:${port}`);
  if (address !== PUBLIC) return net.connect({ host: "127.0.0.1", port: 1 });
  const local = port === 443 ? (echo.address() as net.AddressInfo).port : (web.address() as net.AddressInfo).port;
  return net.connect({ host: "127.0.0.1", port: local });
};

beforeAll(async () => {
  web = createHttpServer((req, res) => res.end(`hello from ${req.headers.host}${req.url}`));
  echo = net.createServer((socket) => socket.pipe(socket));
  await Promise.all([new Promise<void>((r) => web.listen(0, "127.0.0.1", r)), new Promise<void>((r) => echo.listen(0, "127.0.0.1", r))]);
});
afterAll(async () => {
  await Promise.all([new Promise<void>((r) => web.close(() => r())), new Promise<void>((r) => echo.close(() => r()))]);
});

const FETCH = `
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        body = urllib.request.urlopen(url, timeout=20).read().decode()
        print(url, "->", 200, body)
    except urllib.error.HTTPError as e:
        print(url, "->", e.code, e.read().decode().strip())
    except Exception as e:
        print(url, "->", "error", type(e).__name__, e)
`;

// Opens a CONNECT tunnel through the proxy the way an https client does, then talks through it.
const TUNNEL = `
import os, socket, sys
proxy = os.environ["HTTPS_PROXY"].split("//")[1].split(":")
for target in sys.argv[1:]:
    s = socket.create_connection((proxy[0], int(proxy[1])), timeout=20)
    s.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
    head = s.recv(4096).decode()
    status = head.split(" ")[1]
    if status == "200":
        s.sendall(b"ping through the tunnel")
        print(target, "->", status, s.recv(4096).decode())
    else:
        print(target, "->", status, head.split("\\r\\n\\r\\n", 1)[1].strip())
    s.close()
`;

let site: Site;
beforeEach(() => {
  dials.length = 0;
  site = makeSite(probe.ok ? probe.setup.user : null);
  writeFileSync(join(site.alice, "fetch.py"), FETCH);
  writeFileSync(join(site.alice, "tunnel.py"), TUNNEL);
});
afterEach(() => site.remove());

const sandboxWithNetwork = () => testSandbox(site.hidden, { network: { allow, socat: true, resolve, connect } });

describeNetwork("the sandbox's network (SANDBOX_ALLOW_HOSTS)", () => {
  it("reaches a listed host by name, through the proxy, and nothing else", async () => {
    const sandbox = sandboxWithNetwork();
    expect(sandbox.network).toEqual({ hosts: ["allowed.example", "*.allowed.example", "internal.example", "metadata.google.internal", "rebound.example"] });
    const r = await sandbox.run({
      key: "alice",
      argv: ["python3", "fetch.py", "http://allowed.example/data.csv", "http://api.allowed.example/v1", "http://other.example/"],
      workspace: site.alice,
      timeoutMs: 30_000,
      network: true,
    });
    expect(r.status === "exited" && r.output.stdout.split("\n")).toEqual([
      "http://allowed.example/data.csv -> 200 hello from allowed.example/data.csv",
      "http://api.allowed.example/v1 -> 200 hello from api.allowed.example/v1",
      "http://other.example/ -> 403 other.example is not in SANDBOX_ALLOW_HOSTS (allowed: allowed.example, *.allowed.example, internal.example, " +
        "metadata.google.internal, rebound.example); an admin can list host names in SANDBOX_ALLOW_HOSTS",
      "",
    ]);
    expect(dials).toEqual([`${PUBLIC}:80`, `${PUBLIC}:80`]);
    expect(r.status === "exited" && r.refusals).toEqual([expect.stringMatching(/^other\.example:80: other\.example is not in SANDBOX_ALLOW_HOSTS/)]);
  });

  it("refuses a listed name that resolves to a private, loopback or metadata address, and any IP address", async () => {
    const sandbox = sandboxWithNetwork();
    const r = await sandbox.run({
      key: "alice",
      argv: [
        "python3",
        "fetch.py",
        "http://internal.example/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://rebound.example/",
        "http://169.254.169.254/latest/meta-data/",
        `http://${PUBLIC}/`,
      ],
      workspace: site.alice,
      timeoutMs: 30_000,
      network: true,
    });
    expect(r.status === "exited" && r.output.stdout.split("\n")).toEqual([
      "http://internal.example/ -> 403 internal.example resolves to 10.0.0.7, a private address; the sandbox never connects there",
      "http://metadata.google.internal/computeMetadata/v1/ -> 403 metadata.google.internal resolves to 169.254.169.254, a link-local address; the sandbox never connects there",
      "http://rebound.example/ -> 403 rebound.example resolves to 127.0.0.1, a loopback address; the sandbox never connects there",
      "http://169.254.169.254/latest/meta-data/ -> 403 connections to IP addresses (169.254.169.254) are not allowed from the sandbox; an admin can list host names in SANDBOX_ALLOW_HOSTS",
      `http://${PUBLIC}/ -> 403 connections to IP addresses (${PUBLIC}) are not allowed from the sandbox; an admin can list host names in SANDBOX_ALLOW_HOSTS`,
      "",
    ]);
    expect(dials).toEqual([]);
  });

  it("tunnels TLS and other TCP to a listed host with CONNECT, and refuses the rest", async () => {
    const sandbox = sandboxWithNetwork();
    const r = await sandbox.run({
      key: "alice",
      argv: ["python3", "tunnel.py", "allowed.example:443", "internal.example:443", "other.example:22"],
      workspace: site.alice,
      timeoutMs: 30_000,
      network: true,
    });
    expect(r.status === "exited" && r.output.stdout.split("\n")).toEqual([
      "allowed.example:443 -> 200 ping through the tunnel",
      "internal.example:443 -> 403 internal.example resolves to 10.0.0.7, a private address; the sandbox never connects there",
      expect.stringMatching(/^other\.example:22 -> 403 other\.example is not in SANDBOX_ALLOW_HOSTS/),
      "",
    ]);
    expect(dials).toEqual([`${PUBLIC}:443`]);
  });

  it("has no route out except the proxy: a direct connection to the listed host's address fails", async () => {
    const sandbox = sandboxWithNetwork();
    const r = await sandbox.run({
      key: "alice",
      argv: ["bash", "-c", `(exec 3<>/dev/tcp/${PUBLIC}/80) 2>&1; env -u http_proxy -u HTTP_PROXY -u ALL_PROXY -u all_proxy python3 fetch.py http://allowed.example/`],
      workspace: site.alice,
      timeoutMs: 30_000,
      network: true,
    });
    expect(r.status === "exited" && r.output.stdout).toMatch(/Network is unreachable/);
    expect(r.status === "exited" && r.output.stdout).toMatch(/http:\/\/allowed\.example\/ -> error URLError/);
    expect(dials).toEqual([]);
  });

  it("gives a command no network when the call does not ask for it, even with hosts listed", async () => {
    const sandbox = sandboxWithNetwork();
    const r = await sandbox.run({ key: "alice", argv: ["python3", "fetch.py", "http://allowed.example/"], workspace: site.alice, timeoutMs: 30_000 });
    expect(r.status === "exited" && r.output.stdout).toMatch(/-> error URLError/);
    expect(dials).toEqual([]);
  });
});

it("says the network is off, and why, when socat is missing", () => {
  if (!probe.ok) return;
  const sandbox = testSandbox([], { network: { allow, socat: false } });
  expect(sandbox.network).toEqual({ unavailable: expect.stringContaining("socat is not installed") });
});

it("checks a destination's name before its addresses, and every address a name has", async () => {
  const twoFaced: Resolver = async () => [{ address: PUBLIC }, { address: "192.168.1.10" }];
  expect(await checkDestination("allowed.example", 443, { allow, resolve: twoFaced })).toEqual({
    ok: false,
    status: 403,
    reason: "allowed.example resolves to 192.168.1.10, a private address; the sandbox never connects there",
  });
  expect(await checkDestination("ALLOWED.example.", 443, { allow, resolve })).toEqual({ ok: true, host: "allowed.example", address: PUBLIC, port: 443 });
  expect(await checkDestination("allowed.example", 0, { allow, resolve })).toMatchObject({ ok: false, status: 400 });
  expect(await checkDestination("[::ffff:10.0.0.1]", 80, { allow, resolve })).toMatchObject({ ok: false, status: 403 });
});
