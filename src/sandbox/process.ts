// The one place in the gateway that starts a process. Everything it runs is either bubblewrap (which then
// confines the command) or a read-only helper the sandbox module vouches for (ripgrep over an opened folder).
// The child gets exactly the environment given, its own process group, and is killed with that whole group on
// timeout or abort; the caller learns which of those ended it.
import { spawn, type StdioOptions } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { Clock, Timers } from "../runtime/deps.js";
import { OutputCapture } from "./output.js";
import type { Captured, SandboxUser } from "./types.js";

export interface ProcessSpec {
  file: string;
  args: readonly string[];
  /** The child's whole environment: nothing of the gateway's own is passed on. */
  env: Record<string, string>;
  cwd?: string;
  /** Run as this user (the gateway must be root to switch). */
  user?: SandboxUser | null;
  /** Open descriptors handed to the child as fd 3, 4, …, in order. */
  fds?: readonly number[];
  /**
   * One more pipe after `fds`, on which the child reports JSON status (bubblewrap's --info-fd). When it names a
   * `child-pid`, a kill goes to that process, the sandbox's PID 1: the kernel then kills everything in the
   * sandbox, and bubblewrap exits only once all of it is gone, so the run ends with nothing left behind.
   */
  statusPipe?: boolean;
}

export interface ProcessControls {
  timeoutMs: number;
  timers: Timers;
  clock: Clock;
  signal?: AbortSignal;
  /** stdout + stderr kept at most, in bytes. */
  outputBytes: number;
  onOutput?: (text: string, stream: "stdout" | "stderr") => void;
}

export type ProcessEnd =
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null }
  | { kind: "timed_out" }
  | { kind: "cancelled" }
  | { kind: "spawn_failed"; reason: string };

export interface ProcessOutcome {
  end: ProcessEnd;
  output: Captured;
  durationMs: number;
}

/** Runs `spec` to its end, or until the timeout or the signal kills it and its process group. Never rejects. */
export function runProcess(spec: ProcessSpec, controls: ProcessControls): Promise<ProcessOutcome> {
  const started = controls.clock.now();
  const capture = new OutputCapture(controls.outputBytes);
  const stdio: StdioOptions = ["ignore", "pipe", "pipe", ...(spec.fds ?? []), ...(spec.statusPipe ? ["pipe" as const] : [])];
  return new Promise((resolve) => {
    let stoppedBy: "timed_out" | "cancelled" | null = null;
    let settled = false;
    const child = spawn(spec.file, [...spec.args], {
      env: spec.env,
      stdio,
      detached: true, // its own process group, so a kill reaches everything it started outside a PID namespace too
      ...(spec.cwd ? { cwd: spec.cwd } : {}),
      ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
    });
    const finish = (end: ProcessEnd) => {
      if (settled) return;
      settled = true;
      controls.timers.clearTimeout(timer);
      controls.signal?.removeEventListener("abort", onAbort);
      resolve({ end, output: capture.result(), durationMs: controls.clock.now() - started });
    };
    let innerPid: number | null = null;
    const kill = (why: "timed_out" | "cancelled") => {
      stoppedBy ??= why;
      try {
        if (innerPid !== null) process.kill(innerPid, "SIGKILL");
        else if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL"); // it is gone already, or the group never formed
      }
    };
    if (spec.statusPipe) {
      let status = "";
      const pipe = child.stdio[3 + (spec.fds?.length ?? 0)] as NodeJS.ReadableStream | null;
      pipe?.setEncoding("utf8");
      pipe?.on("data", (text: string) => {
        status += text;
        const pid = /"child-pid"\s*:\s*(\d+)/.exec(status);
        if (pid && innerPid === null) {
          innerPid = Number(pid[1]);
          if (stoppedBy) kill(stoppedBy); // a kill asked for before the pid was known goes to the sandbox too
        }
      });
    }
    const timer = controls.timers.setTimeout(() => kill("timed_out"), controls.timeoutMs);
    const onAbort = () => kill("cancelled");
    if (controls.signal?.aborted) onAbort();
    else controls.signal?.addEventListener("abort", onAbort, { once: true });

    for (const stream of ["stdout", "stderr"] as const) {
      const decoder = new StringDecoder("utf8");
      child[stream]!.on("data", (chunk: Buffer) => {
        capture.add(stream, chunk);
        if (controls.onOutput) {
          const text = decoder.write(chunk);
          if (text) controls.onOutput(text, stream);
        }
      });
    }
    child.on("error", (error: NodeJS.ErrnoException) => {
      // Spawning failed (no such program, no permission to switch user): nothing runs that could be left over.
      finish({ kind: "spawn_failed", reason: `${spec.file}: ${error.code ?? error.message}` });
    });
    // "close": the process has exited and its pipes are drained, so the output is complete.
    child.on("close", (code, signal) => {
      finish(stoppedBy ? { kind: stoppedBy } : { kind: "exited", code, signal });
    });
  });
}
