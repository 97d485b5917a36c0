// MCP at the gateway's start and in the operator's tools, as real processes: a bad mcp.json stops the start naming
// server and field; a server that fails to start leaves the gateway running with the others' tools; `npm run mcp --
// list` and `npm run skills -- list` say what is there and what is missing.
import { once } from "node:events";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { agentFile, writeDefinitions } from "../helpers/harness.js";
import { faultServer } from "../helpers/mcp.js";
import { toolResults } from "../helpers/requests.js";
import { processEnv, run, type Proc } from "../integration/child-process.js";

let fake: FakeAnthropic;
let defs: ReturnType<typeof writeDefinitions>;
let env: Record<string, string>;
const procs: Proc[] = [];
const SECRET = "fault-secret-in-mcp-json-42";
const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

beforeEach(async () => {
  fake = await startFakeAnthropic();
  defs = writeDefinitions({
    ...agentFile("triage", "Triage.", "tools: mcp__fault__echo, mcp__fault__no_such_tool, mcp__broken__anything\n"),
  });
  env = processEnv(fake.url, defs, { LOG_LEVEL: "info", MCP_CONFIG: join(defs.root, "mcp.json"), MCP_CONNECT_TIMEOUT_MS: "30000", FAULT_SECRET: SECRET });
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await fake.close();
  rmSync(defs.root, { recursive: true, force: true });
});

function mcpJson(servers: Record<string, unknown>): void {
  writeFileSync(join(defs.root, "mcp.json"), JSON.stringify({ mcpServers: servers }));
}
function start(entry: string, args: string[] = []): Proc {
  const p = run(entry, args, env);
  procs.push(p);
  return p;
}

describe("MCP at start", () => {
  it("a bad mcp.json stops the start, naming the server and the field", async () => {
    mcpJson({ github: { args: ["-y", "@modelcontextprotocol/server-github"] } });
    const p = start("src/main.ts");
    expect(await p.exited).toBe(1);
    expect(p.stderr).toContain(`Invalid MCP configuration:\n  ${join(defs.root, "mcp.json")}: mcpServers.github.command: must be the program to run, e.g. npx`);
  });

  it("a server that fails to start leaves the gateway running; the other's tools work, and mcp.json's secrets stay out of the log", async () => {
    mcpJson({ broken: { command: "/nonexistent/mcp-server" }, fault: faultServer({ env: { FAULT_SECRET: "${FAULT_SECRET}" } }) });
    fake.script(reply(toolUse("mcp__fault__echo", { text: "still here" }, "toolu_echo")), (req) => {
      expect(toolResults(req)).toEqual([{ id: "toolu_echo", content: "still here", error: false }]);
      return text("The fault server answered.");
    });
    const p = start("providers/console/cli.ts", ["--jsonl"]);
    p.send({ text: "echo please" });
    await p.line((l) => l.includes("The fault server answered."));
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
    expect(p.stderr).toMatch(/MCP server broken could not connect: spawn \/nonexistent\/mcp-server ENOENT/);
    expect(p.stderr).toContain("MCP server fault connected with 11 tools");
    expect(p.stderr).toMatch(/MCP server fault \(stderr\): fault server ready \(pid \d+, secret check: \[redacted\]\)/);
    expect(p.stderr).not.toContain(SECRET);
  });
});

describe("the operator's tools", () => {
  it("npm run mcp -- list: each server's transport, status, confinement, tools and last error; exit 1 when one is down", async () => {
    // The sandboxed one is given the gateway's own folder as its cwd, which no sandbox may see: it is refused, not run.
    mcpJson({ broken: { command: "/nonexistent/mcp-server" }, fault: faultServer(), boxed: faultServer({ sandbox: true }) });
    const p = start("src/cli/mcp.ts", ["list"]);
    expect(await p.exited).toBe(1);
    // "exit" can come before the last of stdout is read.
    if (!p.child.stdout.closed) await once(p.child.stdout, "close");
    const out = p.lines.join("\n");
    const unconfined = "not sandboxed: runs with the gateway's user, files and network";
    expect(out).toMatch(
      new RegExp(`^broken {2}stdio {2}retrying\n {2}${unconfined}\n {2}last error: spawn /nonexistent/mcp-server ENOENT\n {2}next attempt in \\d+ s$`, "m"),
    );
    expect(out).toMatch(new RegExp(`^fault {2}stdio {2}connected \\(11 tools\\)\n {2}${unconfined}\n {2}tools: mcp__fault__echo, mcp__fault__hang, `, "m"));
    expect(out).toContain(
      `boxed  stdio  retrying\n  sandboxed (no network; cwd read-only)\n  last error: the sandbox could not start it: its working folder (cwd): ${ROOT} is the gateway's own folder or DATA_DIR, which no sandbox may see; give the server a folder of its own\n`,
    );
  });

  it("npm run skills -- list: the MCP tools a definition names that are unknown or unavailable", async () => {
    mcpJson({ broken: { command: "/nonexistent/mcp-server" }, fault: faultServer() });
    const p = start("src/cli/skills.ts", ["list"]);
    expect(await p.exited).toBe(0);
    const mcp = p.lines.filter((l) => l.startsWith("mcp: "));
    expect(mcp).toEqual([
      "mcp: agent triage: mcp__fault__no_such_tool: unknown, the MCP server fault has no such tool",
      expect.stringMatching(/^mcp: agent triage: mcp__broken__anything: unavailable, the MCP server broken is retrying \(spawn \/nonexistent\/mcp-server ENOENT\)$/),
    ]);
  });
});
