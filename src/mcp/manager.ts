import type { Logger } from "pino";
import { MCP_PREFIX } from "../catalog/tool-patterns.js";
import type { Timers } from "../runtime/deps.js";
import type { DynamicTools } from "../runtime/tools/registry.js";
import { secretScrubber } from "../secrets.js";
import { unavailableTool, type McpTool } from "./adapter.js";
import type { McpConfig } from "./config.js";
import { McpConnection, type ServerView } from "./connection.js";
import { NO_MCP_OBSERVER, type McpObserver } from "./observer.js";
import { sandboxSpawner, type McpSandboxOptions } from "./sandboxed.js";
import type { SpawnServer } from "./stdio.js";
import { createTransport } from "./transports.js";

// Every configured MCP server of this process (replicas each connect their own; nothing is shared), as the tools
// the registry offers. Started with the gateway: servers are connected before the first message, within
// MCP_CONNECT_TIMEOUT_MS; one slower than that joins when it is up, one that fails is retried with backoff.

export interface McpSettings {
  /** MCP_CONNECT_TIMEOUT_MS: how long the start waits for the servers. */
  connectTimeoutMs: number;
  /** MCP_TOOL_TIMEOUT_MS: a call without an answer or progress for this long is cancelled. */
  toolTimeoutMs: number;
  /** MCP_MAX_RESULT_BYTES: a result is cut to this size. */
  maxResultBytes: number;
  /** One attempt to connect is given up after this long. Default: 60 s, at least the connect timeout. */
  attemptTimeoutMs?: number;
}

export interface McpDeps {
  log: Logger;
  timers: Timers;
  now: () => number;
  observer?: McpObserver;
  /** Starts the stdio servers that are not sandboxed; default: directly, with the gateway's rights. */
  spawn?: SpawnServer;
  /** The sandbox for the entries with `"sandbox": true`; absent: such a server does not start. */
  sandbox?: McpSandboxOptions;
  /** The gateway's environment (a stdio server gets its PATH and HOME only). */
  env?: Readonly<Record<string, string | undefined>>;
  version?: string;
}

export class McpManager implements DynamicTools {
  private readonly connections: McpConnection[];

  constructor(
    readonly config: McpConfig,
    private readonly settings: McpSettings,
    private readonly deps: McpDeps,
  ) {
    const scrub = secretScrubber(config.secrets);
    const { spawn, describe } = sandboxSpawner(deps.sandbox ?? null, deps.spawn);
    // A line of JSON may hold a whole result: a little more than the result limit, and never less than the SDK's 10 MB.
    const maxMessageBytes = Math.max(16 * 1024 * 1024, 4 * settings.maxResultBytes);
    const log = deps.log;
    this.connections = config.servers.map(
      (server) =>
        new McpConnection(server, {
          log,
          timers: deps.timers,
          now: deps.now,
          observer: deps.observer ?? NO_MCP_OBSERVER,
          scrub,
          sandbox: describe,
          transport: (s, onStderr) => createTransport(s, { spawn, timers: deps.timers, onStderr, maxMessageBytes, ...(deps.env ? { env: deps.env } : {}) }),
          toolTimeoutMs: settings.toolTimeoutMs,
          maxResultBytes: settings.maxResultBytes,
          attemptTimeoutMs: settings.attemptTimeoutMs ?? Math.max(60_000, settings.connectTimeoutMs),
          version: deps.version ?? "0.1.0",
        }),
    );
    for (const warning of config.warnings) log.warn(warning);
  }

  /**
   * Connects every server, waiting at most MCP_CONNECT_TIMEOUT_MS; those still connecting then go on in the
   * background (and are logged when they are up). Never throws: a server that fails is logged and retried.
   */
  async start(): Promise<void> {
    if (this.connections.length === 0) return;
    let timer: unknown = null;
    const waited = new Promise<"timeout">((resolve) => (timer = this.deps.timers.setTimeout(() => resolve("timeout"), this.settings.connectTimeoutMs)));
    const all = Promise.all(this.connections.map((c) => c.start())).then(() => "done" as const);
    const how = await Promise.race([all, waited]);
    this.deps.timers.clearTimeout(timer);
    if (how === "timeout") {
      const slow = this.connections.filter((c) => c.view().status === "connecting").map((c) => c.config.name);
      if (slow.length)
        this.deps.log.warn(
          { servers: slow },
          `MCP servers still connecting after ${this.settings.connectTimeoutMs} ms (MCP_CONNECT_TIMEOUT_MS): ${slow.join(", ")}; their tools join when they are up`,
        );
    }
  }

  list(): McpTool[] {
    return this.connections.flatMap((c) => c.offered());
  }

  get(name: string): McpTool | undefined {
    const connection = this.connectionOf(name);
    if (!connection) return undefined;
    return connection.tool(name) ?? unavailableTool(name, connection.config.name, () => connection.refuse(name));
  }

  /** Whether a tool of that name is offered now. */
  offers(name: string): boolean {
    return this.connectionOf(name)?.tool(name) !== undefined;
  }

  /** The configured servers' names, in the order of the configuration. */
  servers(): string[] {
    return this.connections.map((c) => c.config.name);
  }

  views(): ServerView[] {
    return this.connections.map((c) => c.view());
  }

  /** Closes every connection (a stdio server's stdin is closed, then it is stopped). */
  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.close()));
  }

  private connectionOf(name: string): McpConnection | undefined {
    if (!name.startsWith(MCP_PREFIX)) return undefined;
    return this.connections.find((c) => name.startsWith(`${MCP_PREFIX}${c.config.name}__`));
  }
}
