// Stdio MCP servers in the OS sandbox ("sandbox": true) with real bubblewrap: server-everything from npm runs boxed and
// its tools work through a scripted model turn; a hostile server (test/fakes/mcp/box-server.ts) finds none of the
// gateway's secrets, files or database, cannot connect to a listener on the machine, cannot write outside its own
// folder, reaches only the hosts its entry lists, and when it dies or is closed, everything it started is gone.
// Each test runs in a gateway-shaped site (test/helpers/sandbox.ts): a DATA_DIR with the database, a project with .env.
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import net from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { McpManager } from "../../src/mcp/manager.js";
import { formatServers } from "../../src/mcp/report.js";
import type { McpSandboxOptions } from "../../src/mcp/sandboxed.js";
import type { ToolContext, ToolOutput } from "../../src/runtime/tools/tool.js";
import type { Resolver } from "../../src/net/target.js";
import { systemClock, systemTimers } from "../../src/runtime/deps.js";
import { probeSandbox } from "../../src/sandbox/probe.js";
import { nodeArgs } from "../integration/child-process.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { everythingStdio, mcpConfig, recordingObserver, startMcp } from "../helpers/mcp.js";
import { toolResults } from "../helpers/requests.js";
import { describeNetwork, describeSandbox, makeSite, probe, processesWith, silent, type Site } from "../helpers/sandbox.js";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const user = probe.ok ? probe.setup.user : null;
const SECRETS = { ANTHROPIC_API_KEY: "sk-ant-api03-gateway-secret-for-the-box", DATABASE_URL: "postgres://sb:db-password@db/sb" };

let site: Site;
let manager: McpManager | undefined;
let h: Harness | undefined;
beforeEach(() => {
  site = makeSite(user);
});
afterEach(async () => {
  await h?.close();
  await manager?.close();
  h = manager = undefined;
  site.remove();
});

/** The MCP sandbox on this machine, hiding the site's private paths; each server's HOME under the site's DATA_DIR. */
function boxFor(extra: Partial<McpSandboxOptions> = {}) {
  return (log: Logger): McpSandboxOptions => ({
    probe: async () => (probe.ok ? { ...probe, setup: { ...probe.setup, hidden: site.hidden } } : probe),
    homes: join(site.data, "mcp"),
    limits: { processes: 128, memoryBytes: 1024 * 1024 * 1024, fileBytes: 64 * 1024 * 1024 },
    log,
    ...extra,
  });
}

/** The box server as a sandboxed entry: its code is in the repository, shown read-only as its working folder. */
function boxServer(marker: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [...nodeArgs("test/fakes/mcp/box-server.ts"), marker], cwd: ROOT, sandbox: true, ...extra };
}

function run(name: string, input: Record<string, unknown> = {}): Promise<ToolOutput> {
  const tool = manager!.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.run(input, { signal: new AbortController().signal } as ToolContext);
}
/** A box server tool's text answer. */
const said = async (name: string, input: Record<string, unknown> = {}) => String((await run(`mcp__box__${name}`, input)).content);

describeSandbox("a stdio MCP server in the sandbox", () => {
  it("server-everything runs boxed, and its tools work through a scripted model turn", async () => {
    const started = await startMcp(mcpConfig({ everything: everythingStdio({ cwd: ROOT, sandbox: true }) }), { sandbox: boxFor() });
    manager = started.manager;
    expect(manager.views()[0]).toMatchObject({ status: "connected", sandbox: "sandboxed (no network; cwd read-only)" });
    h = await startHarness({ mcp: manager });
    h.fake.script(
      reply(toolUse("mcp__everything__echo", { message: "from the box" }, "toolu_echo"), toolUse("mcp__everything__get-sum", { a: 2, b: 40 }, "toolu_sum")),
      (req) => {
        expect(toolResults(req)).toEqual([
          { id: "toolu_echo", content: "Echo: from the box", error: false },
          { id: "toolu_sum", content: "The sum of 2 and 40 is 42.", error: false },
        ]);
        return text("Echoed and summed, sandboxed.");
      },
    );
    expect(await h.say("try the boxed tools")).toEqual(["main: Echoed and summed, sandboxed."]);
    expect(h.fake.rejected()).toEqual([]);
  });

  it("get-env of server-everything shows the sandbox's environment and the entry's, none of the gateway's", async () => {
    const gateway = { ...process.env, ...SECRETS };
    const config = mcpConfig({ everything: everythingStdio({ cwd: ROOT, sandbox: true, env: { SERVER_SETTING: "given-by-mcp-json" } }) });
    manager = (await startMcp(config, { sandbox: boxFor(), env: gateway })).manager;
    const result = await run("mcp__everything__get-env");
    const env = JSON.parse(String(result.content)) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(
      ["HOME", "LANG", "LOGNAME", "PATH", "PWD", "SERVER_SETTING", "SHELL", "SHLVL", "TMPDIR", "USER", "_"].filter((k) => k in env),
    );
    expect(env).toMatchObject({ HOME: "/home/sandbox", PATH: "/usr/local/bin:/usr/bin:/bin", SERVER_SETTING: "given-by-mcp-json", USER: "sandbox" });
    for (const secret of Object.values(SECRETS)) expect(String(result.content)).not.toContain(secret);
  });

  it("the server finds none of the gateway's secrets: not its variables, .env, nor the database; a hidden path in its cwd is covered", async () => {
    const secretInCwd = join(ROOT, "package.json");
    const started = await startMcp(mcpConfig({ box: boxServer("box-secrets") }), {
      sandbox: boxFor({ probe: async () => (probe.ok ? { ...probe, setup: { ...probe.setup, hidden: [...site.hidden, secretInCwd] } } : probe) }),
      env: { ...process.env, ...SECRETS },
    });
    manager = started.manager;
    const env = await said("env");
    for (const secret of Object.values(SECRETS)) expect(env).not.toContain(secret);
    expect(Object.keys(JSON.parse(env) as object)).not.toContain("ANTHROPIC_API_KEY");
    expect(await said("read_file", { path: site.dotenv })).toBe("error: ENOENT");
    expect(await said("read_file", { path: site.database })).toBe("error: ENOENT");
    expect(await said("read_file", { path: join(site.bob, "diary.txt") })).toBe("error: ENOENT");
    expect(await said("read_file", { path: "/proc/1/environ" })).not.toContain(SECRETS.ANTHROPIC_API_KEY);
    expect(await said("read_file", { path: "/etc/shadow" })).toBe("error: ENOENT");
    // The cwd is shown (the server's code is there), but a path the gateway keeps hidden inside it is covered.
    expect(readFileSync(secretInCwd, "utf8")).toContain('"name"');
    expect(await said("read_file", { path: secretInCwd })).toMatch(/^(|error: EACCES)$/);
    expect(JSON.parse(await said("whoami"))).toEqual({ cwd: ROOT, home: "/home/sandbox" });
  });

  it("cannot connect to a listener on the machine's loopback: the box has a network of its own with nothing in it", async () => {
    const listener = net.createServer((socket) => socket.end("you reached the host\n"));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    try {
      const port = (listener.address() as net.AddressInfo).port;
      manager = (await startMcp(mcpConfig({ box: boxServer("box-loopback") }), { sandbox: boxFor() })).manager;
      expect(await said("connect", { host: "127.0.0.1", port })).toBe("error: ECONNREFUSED");
      expect(await said("http_get", { url: "http://example.com/" })).toBe("error: no HTTP_PROXY");
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it("writes only in its own folder (HOME, kept under DATA_DIR/mcp/<server>), not in its cwd or the system", async () => {
    manager = (await startMcp(mcpConfig({ box: boxServer("box-writes") }), { sandbox: boxFor() })).manager;
    expect(await said("write_file", { path: join(ROOT, "written-by-the-box.txt"), text: "x" })).toBe("error: EROFS");
    expect(existsSync(join(ROOT, "written-by-the-box.txt"))).toBe(false);
    expect(await said("write_file", { path: "/usr/written-by-the-box.txt", text: "x" })).toBe("error: EROFS");
    expect(await said("write_file", { path: join(site.data, "switchboard.db"), text: "x" })).toMatch(/^error: (ENOENT|EROFS)$/);
    expect(readFileSync(site.database, "utf8")).toContain("the-database-contents");
    expect(await said("write_file", { path: "/home/sandbox/cache.txt", text: "kept" })).toBe("written");
    expect(readFileSync(join(site.data, "mcp", "box", "cache.txt"), "utf8")).toBe("kept");
  });

  it("with writable_cwd its working folder is writable", async () => {
    manager = (await startMcp(mcpConfig({ box: boxServer("box-writable", { writable_cwd: true }) }), { sandbox: boxFor() })).manager;
    expect(manager.views()[0]!.sandbox).toBe("sandboxed (no network; cwd writable)");
    // A folder of the sandbox's user inside the cwd (a gateway running as root runs servers as nobody).
    const folder = join(ROOT, "node_modules", ".cache", `box-writable-${process.pid}`);
    mkdirSync(folder, { recursive: true });
    if (user) chownSync(folder, user.uid, user.gid);
    try {
      expect(await said("write_file", { path: join(folder, "note.txt"), text: "ok" })).toBe("written");
      expect(readFileSync(join(folder, "note.txt"), "utf8")).toBe("ok");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("a server that dies answers with an error result, is reported like an unsandboxed one, and comes back boxed", async () => {
    const watch = recordingObserver();
    const started = await startMcp(mcpConfig({ box: boxServer("box-crash") }), { sandbox: boxFor(), observer: watch.observer });
    manager = started.manager;
    const tag = `box-orphan-${process.pid}-${Date.now()}`;
    expect(await said("linger", { tag })).toMatch(/^started \d+$/);
    expect(processesWith(tag).length).toBe(1);
    const back = watch.connected("box");
    const crashed = await run("mcp__box__crash");
    expect(crashed).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^mcp__box__crash failed: the MCP server box could not be reached: .*Connection closed/),
    });
    await back;
    // The process it started went with its box.
    expect(processesWith(tag)).toEqual([]);
    expect(started.lines.some((l) => l.level === 50 && l.msg.includes("MCP server box disconnected"))).toBe(true);
    expect(started.lines.some((l) => l.msg === "MCP server box (stderr): crashing on purpose")).toBe(true);
    expect(JSON.parse(await said("whoami"))).toEqual({ cwd: ROOT, home: "/home/sandbox" });
  });

  it("closing the manager stops a server that will not exit, and everything in its box", async () => {
    const marker = `box-close-${process.pid}-${Date.now()}`;
    const started = await startMcp(mcpConfig({ box: boxServer(marker) }), { sandbox: boxFor() });
    manager = started.manager;
    const tag = `${marker}-child`;
    expect(await said("linger", { tag })).toMatch(/^started \d+$/);
    expect(processesWith(tag).length).toBe(1);
    await manager.close();
    expect(started.lines.some((l) => l.msg === "MCP server box (stderr): stdin closed; staying")).toBe(true);
    manager = undefined;
    expect(processesWith(marker)).toEqual([]);
  });
});

describeNetwork("a sandboxed MCP server's network (allow_hosts)", () => {
  const PUBLIC = "93.184.215.14";
  const DNS: Record<string, string> = { "api.allowed.example": PUBLIC, "other.example": PUBLIC, "rebound.allowed.example": "127.0.0.1" };
  const resolve: Resolver = async (host) => {
    const address = DNS[host];
    if (!address) throw Object.assign(new Error(`no such host ${host}`), { code: "ENOTFOUND" });
    return [{ address, family: 4 }];
  };
  let web: HttpServer;
  beforeEach(async () => {
    web = createHttpServer((req, res) => res.end(`hello from ${req.headers.host}${req.url}`));
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  });
  afterEach(async () => {
    await new Promise<void>((r) => web.close(() => r()));
  });

  it("reaches the hosts its entry lists through the sandbox's proxy, and nothing else", async () => {
    // "The internet" is the loopback web server: the proxy's resolver and dialler are the test's.
    const connect = (address: string) =>
      address === PUBLIC ? net.connect({ host: "127.0.0.1", port: (web.address() as net.AddressInfo).port }) : net.connect({ host: "127.0.0.1", port: 1 });
    const entry = boxServer("box-network", { allow_hosts: ["*.allowed.example"] });
    manager = (await startMcp(mcpConfig({ box: entry }), { sandbox: boxFor({ resolve, connect }) })).manager;
    expect(manager.views()[0]!.sandbox).toBe("sandboxed (network: *.allowed.example; cwd read-only)");
    expect(await said("http_get", { url: "http://api.allowed.example/v1" })).toBe("200 hello from api.allowed.example/v1");
    expect(await said("http_get", { url: "http://other.example/" })).toMatch(/^403 other\.example is not in SANDBOX_ALLOW_HOSTS/);
    expect(await said("http_get", { url: "http://rebound.allowed.example/" })).toMatch(/^403 rebound\.allowed\.example resolves to 127\.0\.0\.1/);
    expect(await said("http_get", { url: `http://127.0.0.1:${(web.address() as net.AddressInfo).port}/` })).toMatch(/^403 connections to IP addresses/);
  });
});

describe("a sandboxed MCP server where no sandbox can run", () => {
  it("does not start (never unconfined); its status says what to install, and the others still start", async () => {
    const started = await startMcp(mcpConfig({ box: boxServer("box-nobwrap"), everything: everythingStdio() }), {
      sandbox: boxFor({ probe: () => probeSandbox({ hidden: site.hidden, path: "/nonexistent", timers: systemTimers, clock: systemClock, log: silent }) }),
    });
    manager = started.manager;
    const [box, everything] = manager.views();
    expect(box).toMatchObject({
      status: "retrying",
      lastError: expect.stringContaining("the sandbox cannot run here: bubblewrap (bwrap) is not installed; to run this server, install bubblewrap 0.8 or newer"),
      sandbox: expect.stringMatching(/^sandbox unavailable, so it does not run: bubblewrap \(bwrap\) is not installed; install bubblewrap/),
    });
    expect(everything).toMatchObject({ status: "connected", sandbox: "not sandboxed: runs with the gateway's user, files and network" });
    expect(processesWith("box-nobwrap")).toEqual([]);
    expect(
      started.lines.some((l) => l.level === 50 && l.msg.startsWith("MCP server box could not connect: the sandbox cannot run here: bubblewrap (bwrap) is not installed")),
    ).toBe(true);
    expect(formatServers(manager.views(), Date.now())).toMatch(
      /^box {2}stdio {2}retrying\n {2}sandbox unavailable, so it does not run: bubblewrap \(bwrap\) is not installed; install/m,
    );
  });
});
