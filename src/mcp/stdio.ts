import { spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Timers } from "../runtime/deps.js";
import type { ServerSandbox } from "./config.js";

// The stdio transport, written here instead of taken from the SDK for two reasons: the SDK's always adds six
// variables of the gateway's environment (LOGNAME, SHELL, TERM, USER besides PATH and HOME) to the server's, and the
// process must be started by an injected function, the seam where the sandbox starts it instead (sandboxed.ts).

/** What starts a stdio server: the program, its arguments, its whole environment and working folder. */
export interface StdioLaunch {
  server: string;
  /** How the entry asks to run inside the OS sandbox; null: with the gateway's rights. */
  sandbox: ServerSandbox | null;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | null;
}

/** A started server process, as much of a ChildProcess as the transport uses. */
export interface ServerProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly pid?: number | undefined;
  readonly exitCode: number | null;
  kill(signal?: NodeJS.Signals): boolean;
  on(event: "spawn", listener: () => void): this;
  on(event: "error", listener: (error: Error) => void): this;
  on(event: "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  once(event: "close", listener: () => void): this;
}

/**
 * Starts a stdio server's process. `spawnDirect` runs it with the gateway's rights; the sandbox's (sandboxed.ts) first
 * prepares a box, so it answers with a promise of a process that has started.
 */
export type SpawnServer = (launch: StdioLaunch) => ServerProcess | Promise<ServerProcess>;

export const spawnDirect: SpawnServer = (launch) =>
  spawn(launch.command, launch.args, { env: launch.env, cwd: launch.cwd ?? undefined, stdio: ["pipe", "pipe", "pipe"], shell: false, windowsHide: true });

/** The environment a stdio server gets: PATH and HOME of the gateway's, and what its entry names (which wins). */
export function serverEnvironment(entry: Readonly<Record<string, string>>, parent: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  const base: Record<string, string> = {};
  for (const name of ["PATH", "HOME"]) {
    const value = parent[name];
    if (value !== undefined) base[name] = value;
  }
  return { ...base, ...entry };
}

/** A stderr line longer than this is logged cut. */
const MAX_STDERR_LINE = 4096;
/** After stdin is closed, how long a server has to exit before SIGTERM, and then before SIGKILL. */
const EXIT_GRACE_MS = 2000;

export interface StdioOptions {
  spawn: SpawnServer;
  timers: Timers;
  /** Each line the server writes to stderr. */
  onStderr(line: string): void;
  /** A message (one line of JSON) longer than this closes the connection. */
  maxMessageBytes: number;
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ServerProcess | null = null;
  private readonly buffer: ReadBuffer;
  private stderrRest = "";

  constructor(
    private readonly launch: StdioLaunch,
    private readonly options: StdioOptions,
  ) {
    this.buffer = new ReadBuffer({ maxBufferSize: options.maxMessageBytes });
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error("the stdio transport was started twice");
    const spawned = this.options.spawn(this.launch);
    // A promised process has started already (its "spawn" is past); a plain one says so with "spawn", which is
    // emitted on the next tick: its listeners are attached before anything is awaited.
    if (spawned instanceof Promise) return this.attach(await spawned, true);
    return this.attach(spawned, false);
  }

  private attach(child: ServerProcess, started: boolean): Promise<void> {
    this.child = child;
    return new Promise((resolve, reject) => {
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      if (started) resolve();
      else child.on("spawn", () => resolve());
      child.on("close", (code, signal) => {
        this.flushStderr();
        if (this.child === child) this.child = null;
        this.onerror?.(new Error(`the server process exited (${signal ? `signal ${signal}` : `code ${code}`})`));
        this.onclose?.();
      });
      child.stdin.on("error", (error) => this.onerror?.(error));
      child.stdout.on("error", (error) => this.onerror?.(error));
      child.stdout.on("data", (chunk: Buffer) => this.read(chunk));
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => this.stderr(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Ends stdin and waits for the process to exit; SIGTERM, then SIGKILL, for one that does not. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const within = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const timer = this.options.timers.setTimeout(() => resolve(false), ms);
        void exited.then(() => {
          this.options.timers.clearTimeout(timer);
          resolve(true);
        });
      });
    try {
      child.stdin.end();
    } catch {
      // already closed
    }
    if (child.exitCode === null && !(await within(EXIT_GRACE_MS))) {
      child.kill("SIGTERM");
      if (!(await within(EXIT_GRACE_MS))) child.kill("SIGKILL");
    }
    this.buffer.clear();
  }

  private read(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      this.onerror?.(new Error(`the server sent a message larger than ${this.options.maxMessageBytes} bytes`, { cause: error }));
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server printing to stdout): reported, and the next line is read.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private stderr(chunk: string): void {
    const lines = (this.stderrRest + chunk).split("\n");
    this.stderrRest = lines.pop() ?? "";
    if (this.stderrRest.length > MAX_STDERR_LINE) {
      lines.push(this.stderrRest);
      this.stderrRest = "";
    }
    for (const line of lines) this.emitStderr(line);
  }

  private flushStderr(): void {
    if (this.stderrRest) this.emitStderr(this.stderrRest);
    this.stderrRest = "";
  }

  private emitStderr(line: string): void {
    const text = line.replace(/\r$/, "");
    if (text.trim() === "") return;
    this.options.onStderr(text.length > MAX_STDERR_LINE ? `${text.slice(0, MAX_STDERR_LINE)}…` : text);
  }
}
