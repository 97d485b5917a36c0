// MCP servers for tests: the real ones from npm (server-everything, server-filesystem) and the fault server, as
// mcp.json entries; and the MCP manager started on them with a log a test can read and wait on.
import { createRequire } from "node:module";
import { Writable } from "node:stream";
import type { Logger } from "pino";
import { createLogger } from "../../src/log.js";
import { parseMcpConfig, type McpConfig } from "../../src/mcp/config.js";
import { McpManager, type McpSettings } from "../../src/mcp/manager.js";
import type { McpCallOutcome, McpObserver } from "../../src/mcp/observer.js";
import type { McpSandboxOptions } from "../../src/mcp/sandboxed.js";
import { systemTimers, type Timers } from "../../src/runtime/deps.js";
import { nodeArgs } from "../integration/child-process.js";

const require = createRequire(import.meta.url);
const ROOT = new URL("../../", import.meta.url).pathname;

/** server-everything's launcher (dist/index.js), which takes the transport as its argument. */
export const EVERYTHING = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
export const FILESYSTEM = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");

export function everythingStdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [EVERYTHING, "stdio"], ...extra };
}

export function filesystemStdio(dir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FILESYSTEM, dir], ...extra };
}

/** The fault server (test/fakes/mcp/fault-server.ts), run by node as the tests run Switchboard (compiled, or with tsx). */
export function faultServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: nodeArgs("test/fakes/mcp/fault-server.ts"), cwd: ROOT, ...extra };
}

export function mcpConfig(servers: Record<string, Record<string, unknown>>, env: Record<string, string | undefined> = {}): McpConfig {
  return parseMcpConfig(JSON.stringify({ mcpServers: servers }), "mcp.json", env);
}

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** The real logger (secrets scrubbed), writing into `lines`; `waitFor` resolves on a line to come (or already there). */
export function capturedLog(secrets: readonly string[] = []) {
  const lines: LogLine[] = [];
  const waiting: Array<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split("\n").filter(Boolean)) {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        for (const w of waiting.filter((w) => w.match(line))) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve(line);
        }
      }
      done();
    },
  });
  return {
    log: createLogger("debug", stream, secrets),
    lines,
    text: () => lines.map((l) => JSON.stringify(l)).join("\n"),
    /** The `nth` line (1: the first) whose message contains `text`, logged already or to come. */
    waitFor(text: string, nth = 1): Promise<LogLine> {
      const matches = (line: LogLine) => line.msg.includes(text);
      const found = lines.filter(matches)[nth - 1];
      if (found) return Promise.resolve(found);
      let seen = lines.filter(matches).length;
      return new Promise((resolve) => waiting.push({ match: (line) => matches(line) && ++seen === nth, resolve }));
    },
  };
}

/** Records the observer's reports; `connected(server)` resolves when the server is (again) connected. */
export function recordingObserver() {
  const calls: Array<{ server: string; outcome: McpCallOutcome }> = [];
  const states: Array<{ server: string; connected: boolean; tools: number }> = [];
  const waiting: Array<{ server: string; after: number; connected: boolean; resolve: () => void }> = [];
  const observer: McpObserver = {
    call: (server, outcome) => void calls.push({ server, outcome }),
    state(server, connected, tools) {
      states.push({ server, connected, tools });
      for (const w of waiting.filter((w) => w.server === server && w.connected === connected && states.length > w.after)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    },
  };
  return {
    observer,
    calls,
    states,
    /** Resolves on the server's next report of being connected. */
    connected(server: string): Promise<void> {
      return new Promise((resolve) => waiting.push({ server, after: states.length, connected: true, resolve }));
    },
    /** Resolves on the server's next report of not being connected. */
    disconnected(server: string): Promise<void> {
      return new Promise((resolve) => waiting.push({ server, after: states.length, connected: false, resolve }));
    },
  };
}

export const TEST_SETTINGS: McpSettings = { connectTimeoutMs: 20_000, toolTimeoutMs: 20_000, maxResultBytes: 100 * 1024 };

/** The manager on `config`, started (every server connected or failed). */
export async function startMcp(
  config: McpConfig,
  options: {
    settings?: Partial<McpSettings>;
    timers?: Timers;
    env?: Record<string, string | undefined>;
    observer?: McpObserver;
    sandbox?: (log: Logger) => McpSandboxOptions;
  } = {},
) {
  const captured = capturedLog(config.secrets);
  const manager = new McpManager(
    config,
    { ...TEST_SETTINGS, ...options.settings },
    {
      log: captured.log,
      timers: options.timers ?? systemTimers,
      now: Date.now,
      env: options.env ?? process.env,
      ...(options.observer ? { observer: options.observer } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox(captured.log) } : {}),
    },
  );
  await manager.start();
  return { manager, ...captured };
}
