// mcp.json as Claude Code and Claude Desktop write it (their documented examples: a stdio server with command, args
// and env; {"type": "http", "url", "headers"}; {"type": "sse", "url"}), ${VAR} expansion, and errors that name
// the server and the field.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { McpConfigError, parseMcpConfig } from "../../src/mcp/config.js";
import { loadMcpConfig } from "../../src/mcp/load.js";

const parse = (value: unknown, env: Record<string, string> = {}) => parseMcpConfig(JSON.stringify(value), "mcp.json", env);
function problem(value: unknown, env: Record<string, string> = {}): string {
  try {
    parse(value, env);
  } catch (error) {
    if (error instanceof McpConfigError) return error.message;
    throw error;
  }
  throw new Error("no error");
}

describe("mcp.json", () => {
  it("reads the three kinds of server, with ${VAR} and ${VAR:-default} from the environment", () => {
    const config = parse(
      {
        mcpServers: {
          github: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"], env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}" } },
          linear: { type: "http", url: "${LINEAR_URL:-https://mcp.linear.app/mcp}", headers: { Authorization: "Bearer ${LINEAR_KEY}" }, approval: "always" },
          legacy: { type: "sse", url: "https://legacy.example.com/sse" },
        },
      },
      { GITHUB_TOKEN: "ghp_secret_value_123", LINEAR_KEY: "lin_api_abcdefgh" },
    );
    expect(config.servers).toEqual([
      {
        name: "github",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_secret_value_123" },
        cwd: null,
        sandbox: null,
        approval: "writes",
        disabled: false,
      },
      {
        name: "linear",
        transport: "http",
        url: "https://mcp.linear.app/mcp",
        headers: { Authorization: "Bearer lin_api_abcdefgh" },
        approval: "always",
        disabled: false,
      },
      { name: "legacy", transport: "sse", url: "https://legacy.example.com/sse", headers: {}, approval: "writes", disabled: false },
    ]);
    expect(config.secrets).toEqual(expect.arrayContaining(["ghp_secret_value_123", "Bearer lin_api_abcdefgh", "lin_api_abcdefgh"]));
  });

  it("names the server and the field of every problem at once", () => {
    const message = problem({
      mcpServers: {
        github: { command: "npx", env: { TOKEN: "${MISSING_TOKEN}" } },
        remote: { type: "http", url: "ftp://example.com" },
        odd: { type: "websocket", url: "ws://x" },
        vague: { url: "https://example.com/mcp" },
        picky: { command: "x", approval: "sometimes" },
        "bad name": { command: "x" },
      },
    });
    expect(message).toContain("mcp.json: mcpServers.github.env.TOKEN: ${MISSING_TOKEN} is not set in the environment and has no default");
    expect(message).toContain("mcp.json: mcpServers.remote.url: must be an http:// or https:// URL");
    expect(message).toContain('mcp.json: mcpServers.odd.type: must be "stdio" (a program), "http" (Streamable HTTP) or "sse" (older HTTP servers), got "websocket"');
    expect(message).toContain('mcp.json: mcpServers.vague.type: an entry with a url needs "type": "http"');
    expect(message).toContain('mcp.json: mcpServers.picky.approval: must be "always", "writes" or "never"');
    expect(message).toContain("mcp.json: mcpServers.bad name: a server's name may use only A-Z, a-z, 0-9, _ and -");
  });

  it("a missing command, a list where text belongs and a number where text belongs are errors of their field", () => {
    const message = problem({ mcpServers: { a: { args: ["x"] }, b: { command: "x", args: "--flag" }, c: { command: "x", env: { PORT: 8080 } } } });
    expect(message).toContain("mcpServers.a.command: must be the program to run, e.g. npx");
    expect(message).toContain("mcpServers.b.args: must be a list of arguments");
    expect(message).toContain("mcpServers.c.env.PORT: must be text (write numbers and booleans in quotes)");
  });

  it('"sandbox": true with its allow_hosts and writable_cwd; no network and a read-only cwd unless they say otherwise', () => {
    const config = parse({
      mcpServers: {
        fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"], sandbox: true },
        github: { command: "npx", sandbox: true, allow_hosts: ["api.github.com", "*.githubusercontent.com", "registry.npmjs.org"] },
        notes: { command: "node", args: ["server.js"], cwd: "/srv/notes", sandbox: true, writable_cwd: true },
      },
    });
    expect(config.servers.map((s) => (s.transport === "stdio" ? [s.name, s.sandbox] : null))).toEqual([
      ["fs", { allowHosts: { entries: [], hosts: [], suffixes: [], ranges: [] }, writableCwd: false }],
      [
        "github",
        {
          allowHosts: {
            entries: ["api.github.com", "*.githubusercontent.com", "registry.npmjs.org"],
            hosts: ["api.github.com", "registry.npmjs.org"],
            suffixes: [".githubusercontent.com"],
            ranges: [],
          },
          writableCwd: false,
        },
      ],
      ["notes", { allowHosts: { entries: [], hosts: [], suffixes: [], ranges: [] }, writableCwd: true }],
    ]);
  });

  it("the sandbox's fields: what is wrong, on which server and field", () => {
    const message = problem({
      mcpServers: {
        open: { command: "x", allow_hosts: ["api.github.com"] },
        loose: { command: "x", writable_cwd: true },
        nocwd: { command: "x", sandbox: true, writable_cwd: true },
        address: { command: "x", sandbox: true, allow_hosts: ["10.0.0.5"] },
        typo: { command: "x", sandbox: true, allow_hosts: ["https://api.github.com/"] },
        list: { command: "x", sandbox: true, allow_hosts: "api.github.com" },
        comma: { command: "x", sandbox: true, allow_hosts: ["a.example,b.example"] },
        yes: { command: "x", sandbox: "yes" },
      },
    });
    expect(message).toContain('mcpServers.open.allow_hosts: applies only with "sandbox": true');
    expect(message).toContain('mcpServers.loose.writable_cwd: applies only with "sandbox": true');
    expect(message).toContain('mcpServers.nocwd.writable_cwd: needs "cwd", the folder to make writable');
    expect(message).toContain("mcpServers.address.allow_hosts: takes host names and *.domain wildcards only, not IP addresses or ranges");
    expect(message).toContain('mcpServers.typo.allow_hosts: "https://api.github.com/" is a URL; write the host name alone, e.g. "api.github.com"');
    expect(message).toContain('mcpServers.list.allow_hosts: must be a list of host names, e.g. ["api.github.com"]');
    expect(message).toContain("mcpServers.comma.allow_hosts: write one host name per item, without commas");
    expect(message).toContain("mcpServers.yes.sandbox: must be true or false");
  });

  it("not JSON, or without mcpServers, says what the file must look like", () => {
    expect(() => parseMcpConfig("{", "mcp.json", {})).toThrow(/mcp\.json: not valid JSON/);
    expect(problem({ servers: {} })).toContain('must be a JSON object with an "mcpServers" object');
  });

  it("fields of other hosts load with a warning; a disabled server is kept, switched off", () => {
    const config = parse({ mcpServers: { a: { command: "x", alwaysAllow: ["y"], disabled: true } } });
    expect(config.servers[0]).toMatchObject({ name: "a", disabled: true });
    expect(config.warnings).toEqual(["mcp.json: mcpServers.a.alwaysAllow is not a field Switchboard reads; it is ignored"]);
  });

  it("short env values are not secrets (they would blank ordinary words in the logs)", () => {
    expect(parse({ mcpServers: { a: { command: "x", env: { DEBUG: "true", KEY: "s3cr3t-value-1234" } } } }).secrets).toEqual(["s3cr3t-value-1234"]);
  });
});

describe("MCP_CONFIG", () => {
  it("no ./mcp.json means no servers; a MCP_CONFIG that names no file is an error", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchboard-mcp-"));
    try {
      expect(loadMcpConfig(undefined).servers).toEqual([]);
      expect(() => loadMcpConfig(join(dir, "nope.json"))).toThrow(/MCP_CONFIG=.*nope\.json: there is no such file/);
      writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { a: { command: "x" } } }));
      expect(loadMcpConfig(join(dir, "mcp.json")).servers.map((s) => s.name)).toEqual(["a"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
