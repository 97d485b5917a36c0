import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { inject } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;
/** tsx's loader by its file, so that a process started in another working directory finds it too. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/**
 * The `node` arguments that run a TypeScript entry point of the repository (`src/main.ts`), after `preload`
 * modules: the copy compiled once for this run (test/setup/build.ts), or the source through tsx when there is none.
 * `node --import tsx`, not the tsx binary: the binary runs the program in a child process, and a SIGKILL to the
 * wrapper would leave that child running on.
 */
export function nodeArgs(entry: string, preload: string[] = []): string[] {
  const built = inject("build");
  if (!built) return ["--import", TSX, ...preload.flatMap((p) => ["--import", `${ROOT}${p}`]), `${ROOT}${entry}`];
  const js = (path: string) => `${built}/${path.replace(/\.ts$/, ".js")}`;
  return [...preload.flatMap((p) => ["--import", js(p)]), js(entry)];
}

/** A Switchboard process (terminal chat or service) with its stdout read line by line. */
export class Proc {
  readonly lines: string[] = [];
  private waiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];
  readonly exited: Promise<number | null>;
  stderr = "";
  private stderrWaiters: Array<{ text: string; resolve: () => void }> = [];

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      this.lines.push(line);
      for (const w of this.waiters.filter((w) => w.match(line))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(line);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString();
      for (const w of this.stderrWaiters.filter((w) => this.stderr.includes(w.text))) {
        this.stderrWaiters.splice(this.stderrWaiters.indexOf(w), 1);
        w.resolve();
      }
    });
    this.exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  }

  /** Resolves with the first stdout line (seen or future) that matches. */
  line(match: (line: string) => boolean): Promise<string> {
    return this.lineAfter(0, match);
  }

  /** The same, among the lines from index `from` on. */
  lineAfter(from: number, match: (line: string) => boolean): Promise<string> {
    const found = this.lines.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Resolves once stderr (the log) has contained `text`. */
  logged(text: string): Promise<void> {
    if (this.stderr.includes(text)) return Promise.resolve();
    return new Promise((resolve) => this.stderrWaiters.push({ text, resolve }));
  }

  send(value: unknown): void {
    this.child.stdin.write(`${typeof value === "string" ? value : JSON.stringify(value)}\n`);
  }

  /** The JSON lines, without the per-message `id` (tests compare content). */
  json(): Array<Record<string, unknown>> {
    return this.lines.map((l) => {
      const { id: _id, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return rest;
    });
  }
}

/** `preload`: more modules for `node --import` (e.g. a test's crash hook), after tsx. */
export function run(entry: string, args: string[], env: Record<string, string>, preload: string[] = []): Proc {
  const child = spawn(process.execPath, [...nodeArgs(entry, preload), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  return new Proc(child);
}

/** A TCP port free on 127.0.0.1 right now, for a child process to listen on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The environment of a Switchboard process for a test: the fake Messages API at `modelUrl` (no retries), the
 * definitions folders of `defs` and DATA_DIR beside them, an OS-chosen HTTP port, memory off; `extra` adds or overrides.
 */
export function processEnv(modelUrl: string, defs: { root: string; skills: string; agents: string }, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ANTHROPIC_API_KEY: "test-key",
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_MAX_RETRIES: "0",
    DATA_DIR: `${defs.root}/data`,
    SKILLS_DIR: defs.skills,
    AGENTS_DIR: defs.agents,
    LOG_LEVEL: "info",
    HTTP_PORT: "0",
    // Memory extraction calls the model after each task; the tests about memory switch it on.
    MEMORY: "off",
    ...extra,
  };
}
