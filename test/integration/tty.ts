// A Switchboard process on a real pseudo-terminal, as a person at a terminal runs it: util-linux `script` gives the
// child a pty (stdin, stdout and stderr all TTYs) and relays what the terminal shows to us. Missing `script` skips
// the test with a message, and fails it in CI.
import { spawn, spawnSync } from "node:child_process";

const ROOT = new URL("../../", import.meta.url).pathname;

export const HAS_SCRIPT = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

/** Throws in CI and warns elsewhere when `script` is missing; `what` names the test. */
export function requireScript(what: string): void {
  if (!HAS_SCRIPT && process.env.CI) throw new Error(`CI must run the ${what}: install util-linux (for script)`);
  if (!HAS_SCRIPT) console.warn(`${what} skipped: no \`script\` command (util-linux)`);
}

export interface Terminal {
  /** Everything the terminal was sent so far, escape sequences included. */
  readonly shown: string;
  /** Resolves once the terminal has shown `text` after position `from` (default: anywhere). */
  until(text: string, from?: number): Promise<void>;
  /** Keys typed at the terminal ("\r" is Enter, "\x03" Ctrl-C). */
  type(keys: string): void;
  readonly exited: Promise<number | null>;
  kill(): void;
}

/** `node --import tsx <entry>` on a pty of 120 columns, with `env` as its whole environment (plus PATH and HOME). */
export function onTerminal(entry: string, env: Record<string, string>): Terminal {
  const command = `stty cols 120 rows 40; exec ${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(`${ROOT}${entry}`)}`;
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", TERM: "xterm", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let shown = "";
  const waiters: Array<{ text: string; from: number; resolve: () => void }> = [];
  child.stdout.on("data", (chunk: Buffer) => {
    shown += chunk.toString();
    for (const w of waiters.filter((w) => shown.indexOf(w.text, w.from) >= 0)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  child.stderr.on("data", (chunk: Buffer) => (shown += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    get shown() {
      return shown;
    },
    until: (text, from = 0) => (shown.indexOf(text, from) >= 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ text, from, resolve }))),
    type: (keys) => void child.stdin.write(keys),
    exited,
    kill: () => void child.kill("SIGKILL"),
  };
}
