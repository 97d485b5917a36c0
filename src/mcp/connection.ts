import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { Timers } from "../runtime/deps.js";
import { fail, type ToolOutput } from "../runtime/tools/tool.js";
import { adaptTool, type McpTool } from "./adapter.js";
import { callTool, connectionLost, describe } from "./call.js";
import type { ServerConfig } from "./config.js";
import { listTools, type ListedTool, type Listing } from "./listing.js";
import type { McpObserver } from "./observer.js";
import { bound, readResult } from "./result.js";
import { toToolOutput, type KeepFile } from "./tool-output.js";

// One configured server: connecting (bounded), its tools (re-listed on list_changed), calls, and reconnecting with
// backoff after a crash or a dropped connection. Whatever happens to the server, a call answers: with its result, or
// with an error result that says what is wrong.

export type ServerStatus = "disabled" | "connecting" | "connected" | "retrying" | "closed";

/** A server as `npm run mcp -- list` and the admin view show it. */
export interface ServerView {
  name: string;
  transport: ServerConfig["transport"];
  status: ServerStatus;
  /** Since when it has this status (ms since the epoch). */
  since: number;
  /** The model's names of its tools (none unless connected). */
  tools: string[];
  lastError: string | null;
  /** When the next attempt to connect is due (status retrying). */
  retryAt: number | null;
  /** Its last lines on stderr (stdio servers), redacted. */
  stderr: string[];
  /** Whether it runs in the OS sandbox, and how or why not (stdio servers); null for HTTP servers. */
  sandbox: string | null;
}

export interface ConnectionDeps {
  log: Logger;
  timers: Timers;
  now: () => number;
  observer: McpObserver;
  /** Removes mcp.json's secrets from a text (errors, stderr lines) before it is logged or shown. */
  scrub(text: string): string;
  transport(server: ServerConfig, onStderr: (line: string) => void): Transport;
  /** How a stdio server is confined, for its view. */
  sandbox?(server: ServerConfig): string | null;
  toolTimeoutMs: number;
  maxResultBytes: number;
  /** One attempt to connect (start, initialize, list the tools) is given up after this long. */
  attemptTimeoutMs: number;
  version: string;
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 60_000;
/** A connection that lasted this long was healthy: the next failure starts the backoff again. */
const STABLE_MS = 60_000;
const STDERR_TAIL = 20;
const STDERR_LOGGED = 200;
/** Progress keeps a call alive for at most this many times MCP_TOOL_TIMEOUT_MS. */
const PROGRESS_CAP = 10;

export class McpConnection {
  private client: Client | null = null;
  private tools = new Map<string, McpTool>();
  private listed: ListedTool[] = [];
  private status: ServerStatus = "connecting";
  private since: number;
  private lastError: string | null = null;
  private retryAt: number | null = null;
  private failures = 0;
  private retry: unknown = null;
  private connectedAt = 0;
  private closed = false;
  private relisting: Promise<void> | null = null;
  private relistAgain = false;
  private notes = new Set<string>();
  private stderrTail: string[] = [];
  private stderrLogged = 0;
  private readonly log: Logger;

  constructor(
    readonly config: ServerConfig,
    private readonly deps: ConnectionDeps,
  ) {
    this.since = deps.now();
    this.log = deps.log.child({ mcp: config.name });
  }

  /** Connects; resolves when the first attempt has ended, connected or not (a failed one is retried later). */
  start(): Promise<void> {
    if (this.config.disabled) {
      this.setStatus("disabled");
      return Promise.resolve();
    }
    return this.attempt();
  }

  /** The tools it offers now, in the server's order. */
  offered(): McpTool[] {
    return [...this.tools.values()];
  }

  tool(name: string): McpTool | undefined {
    return this.tools.get(name);
  }

  /** Why a tool of this server cannot be called now. */
  unavailable(name: string): string {
    const what = `the MCP server ${this.config.name}`;
    const known = this.listed.map((t) => t.name);
    switch (this.status) {
      case "connected":
        return `${what} has no tool ${name} (it has ${known.slice(0, 20).join(", ") || "none"}${known.length > 20 ? ", …" : ""})`;
      case "disabled":
        return `${what} is disabled in the MCP configuration ("disabled": true)`;
      case "closed":
        return `${what} was closed: the gateway is shutting down`;
      case "connecting":
        return `${what} is still connecting; try again in a moment`;
      case "retrying":
        return `${what} is not connected (${this.lastError ?? "no answer"}); it is being reconnected, try again later`;
    }
  }

  /** The answer to a call of a tool it does not offer now (counted as unavailable). */
  refuse(name: string): ToolOutput {
    this.deps.observer.call(this.config.name, "unavailable", 0);
    return fail(`${name} cannot be called now: ${this.unavailable(name)}`);
  }

  view(): ServerView {
    return {
      name: this.config.name,
      transport: this.config.transport,
      status: this.status,
      since: this.since,
      tools: [...this.tools.keys()],
      lastError: this.lastError,
      retryAt: this.retryAt,
      stderr: [...this.stderrTail],
      sandbox: this.deps.sandbox?.(this.config) ?? null,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry !== null) this.deps.timers.clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    this.setTools({ tools: [], notes: [] });
    this.setStatus("closed");
    await client?.close().catch(() => {});
  }

  private async attempt(): Promise<void> {
    this.retry = null;
    if (this.closed) return;
    this.setStatus("connecting");
    this.stderrLogged = 0;
    const client = new Client({ name: "switchboard", version: this.deps.version }, { capabilities: {} });
    const abort = new AbortController();
    const limit = this.deps.timers.setTimeout(() => abort.abort(`no answer within ${this.deps.attemptTimeoutMs} ms`), this.deps.attemptTimeoutMs);
    // The transport's last error says why a connection closed (the process exited with code 1, the stream broke).
    let lastError: string | null = null;
    try {
      client.onclose = () => this.lost(client, lastError ?? "the connection closed");
      client.onerror = (error) => {
        lastError = describe(error);
        this.log.debug({ error: this.deps.scrub(lastError) }, `MCP server ${this.config.name}: transport error`);
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.relist(client));
      await client.connect(
        this.deps.transport(this.config, (line) => this.stderr(line)),
        { signal: abort.signal, timeout: 2_147_483_647 },
      );
      const listing = await listTools(client, this.config.name, abort.signal);
      if (this.closed) {
        await client.close().catch(() => {});
        return;
      }
      const again = this.failures > 0 || this.connectedAt > 0;
      this.client = client;
      this.connectedAt = this.deps.now();
      this.retryAt = null;
      this.setTools(listing);
      this.setStatus("connected");
      const info = client.getServerVersion();
      this.log.info(
        { tools: listing.tools.length, server: info ? `${info.name} ${info.version}` : null },
        `MCP server ${this.config.name} ${again ? "reconnected" : "connected"} with ${listing.tools.length} tools`,
      );
    } catch (error) {
      client.onclose = undefined;
      await client.close().catch(() => {});
      this.failed(abort.signal.aborted ? `no answer within ${this.deps.attemptTimeoutMs} ms of starting` : describe(error), "could not connect");
    } finally {
      this.deps.timers.clearTimeout(limit);
    }
  }

  /** The connection under `client` is gone (ignored once another has replaced it): drop its tools, reconnect. */
  private lost(client: Client, reason: string): void {
    if (client !== this.client || this.closed) return;
    this.client = null;
    this.setTools({ tools: [], notes: [] });
    if (this.deps.now() - this.connectedAt >= STABLE_MS) this.failures = 0;
    void client.close().catch(() => {});
    this.failed(reason, "disconnected");
  }

  private failed(reason: string, what: string): void {
    if (this.closed) return;
    const tail = this.stderrTail.at(-1);
    const error = this.deps.scrub(tail && this.config.transport === "stdio" ? `${reason}; its last line on stderr: ${tail}` : reason);
    const repeated = error === this.lastError;
    this.failures += 1;
    this.lastError = error;
    const delay = Math.min(RETRY_FIRST_MS * 2 ** (this.failures - 1), RETRY_MAX_MS);
    this.retryAt = this.deps.now() + delay;
    this.setStatus("retrying");
    const line = `MCP server ${this.config.name} ${what}: ${error}. Its tools are unavailable; trying again in ${Math.round(delay / 1000)} s`;
    if (this.failures === 1) this.log.error({ error }, line);
    else if (!repeated) this.log.warn({ error }, line);
    else this.log.debug({ error }, line);
    this.retry = this.deps.timers.setTimeout(() => void this.attempt(), delay);
  }

  /** notifications/tools/list_changed: list again (one listing at a time; a change during one lists once more). */
  private async relist(client: Client): Promise<void> {
    if (this.relisting) {
      this.relistAgain = true;
      return this.relisting;
    }
    this.relisting = (async () => {
      do {
        this.relistAgain = false;
        const abort = new AbortController();
        const limit = this.deps.timers.setTimeout(() => abort.abort("timeout"), this.deps.attemptTimeoutMs);
        try {
          const listing = await listTools(client, this.config.name, abort.signal);
          if (client !== this.client) return;
          this.setTools(listing);
          this.log.info({ tools: listing.tools.length }, `MCP server ${this.config.name} changed its tools; it has ${listing.tools.length} now`);
        } catch (error) {
          if (client !== this.client) return;
          this.log.warn(
            { error: this.deps.scrub(describe(error)) },
            `MCP server ${this.config.name} said its tools changed but could not list them; keeping the ones it had`,
          );
          if (connectionLost(error)) this.lost(client, describe(error));
        } finally {
          this.deps.timers.clearTimeout(limit);
        }
      } while (this.relistAgain && client === this.client);
    })().finally(() => (this.relisting = null));
    return this.relisting;
  }

  private async call(tool: ListedTool, input: Record<string, unknown>, signal: AbortSignal, keep?: KeepFile): Promise<ToolOutput> {
    const client = this.client;
    const { observer, now, toolTimeoutMs } = this.deps;
    const server = this.config.name;
    if (!client) return this.refuse(tool.name);
    const started = now();
    const outcome = await callTool(client, tool.original, input, signal, {
      timers: this.deps.timers,
      now,
      timeoutMs: toolTimeoutMs,
      maxTotalMs: PROGRESS_CAP * toolTimeoutMs,
    });
    const seconds = (now() - started) / 1000;
    switch (outcome.kind) {
      case "result": {
        const output = await toToolOutput(bound(readResult(outcome.result), this.deps.maxResultBytes), keep, `${server}-${tool.original}`);
        observer.call(server, output.isError ? "error" : "ok", seconds);
        return output;
      }
      case "timeout":
        observer.call(server, "timeout", seconds);
        return fail(
          `${tool.name} timed out: the MCP server ${server} sent no answer and no progress for ${toolTimeoutMs / 1000} s (MCP_TOOL_TIMEOUT_MS), so the call was cancelled. It may or may not have had its effect.`,
        );
      case "cancelled":
        observer.call(server, "cancelled", seconds);
        return fail(`${tool.name} was cancelled before the MCP server ${server} answered`);
      case "error": {
        observer.call(server, "error", seconds);
        const message = this.deps.scrub(outcome.message);
        if (outcome.lost) this.lost(client, message);
        return fail(`${tool.name} failed: the MCP server ${server} ${outcome.lost ? "could not be reached" : "refused the call"}: ${message}`);
      }
    }
  }

  private setTools(listing: Listing): void {
    this.listed = listing.tools;
    this.tools = new Map(
      listing.tools.map((t) => [t.name, adaptTool(this.config.name, this.config.approval, t, (tool, input, signal, keep) => this.call(tool, input, signal, keep))]),
    );
    for (const note of listing.notes.filter((n) => !this.notes.has(n))) this.log.warn({ note }, `MCP server ${this.config.name}: ${note}`);
    if (listing.notes.length || listing.tools.length) this.notes = new Set(listing.notes);
    this.deps.observer.state(this.config.name, this.client !== null, listing.tools.length);
  }

  private setStatus(status: ServerStatus): void {
    if (status !== this.status) this.since = this.deps.now();
    this.status = status;
    if (status !== "connected") this.deps.observer.state(this.config.name, false, 0);
  }

  private stderr(line: string): void {
    const text = this.deps.scrub(line);
    this.stderrTail.push(text);
    if (this.stderrTail.length > STDERR_TAIL) this.stderrTail.shift();
    this.stderrLogged += 1;
    const message = `MCP server ${this.config.name} (stderr): ${text}`;
    if (this.stderrLogged <= STDERR_LOGGED) this.log.info(message);
    else if (this.stderrLogged === STDERR_LOGGED + 1)
      this.log.info(`MCP server ${this.config.name} writes much to stderr; further lines of this connection are logged at debug`);
    else this.log.debug(message);
  }
}
