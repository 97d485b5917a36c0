// ripgrep for the Grep and Glob tools. Inside a sandbox when there is one (it then sees only the workspace and
// the read-only folders, under the paths the tools use); where there is none (no bubblewrap, or rg installed
// outside /usr), as a plain child process that reads only folders the caller has opened: each target is handed
// over as a descriptor and named /proc/self/fd/N, so nothing can swap a path for a symlink out of the workspace
// between the check and the search. ripgrep follows no symlinks while it walks (no --follow), writes nothing,
// and gets an environment of two variables.
import type { FileHandle } from "node:fs/promises";
import type { Clock, Timers } from "../runtime/deps.js";
import { linesBeforeCut } from "./output.js";
import type { Ripgrep } from "./probe.js";
import { runProcess } from "./process.js";
import type { Mount, Sandbox } from "./types.js";

export interface SearchRequest {
  key: string;
  /** ripgrep's options. */
  args: readonly string[];
  /**
   * What to search, as the tools see it (an absolute path inside the workspace or a read-only folder). A folder
   * is searched from inside (ripgrep runs there, so --glob patterns with a "/" are relative to it, as in a
   * .gitignore) and the output names files relative to it; a file is named after "--" and printed as given.
   */
  target: { path: string; folder: boolean };
  /** Opens the target (safely, inside its folder); used only when ripgrep runs outside a sandbox. */
  open(path: string): Promise<FileHandle>;
  workspace: string;
  readOnly: readonly Mount[];
  timeoutMs: number;
  outputBytes: number;
  signal?: AbortSignal;
}

export type SearchResult =
  /**
   * ripgrep's exit code: 0 found, 1 nothing found, 2 an error (its message is in stderr). Paths in the output are the
   * tools' paths; output past the cap is left out whole lines at a time (`truncated`).
   */
  { status: "done"; exitCode: number; stdout: string; stderr: string; truncated: boolean } | { status: "failed"; reason: string };

export interface Searcher {
  search(request: SearchRequest): Promise<SearchResult>;
}

export interface SearcherOptions {
  ripgrep: Ripgrep;
  sandbox: Sandbox | null;
  timers: Timers;
  clock: Clock;
}

export function createSearcher(options: SearcherOptions): Searcher {
  const { ripgrep, sandbox } = options;
  if (sandbox && ripgrep.inSandbox) {
    return {
      async search(request) {
        const { path, folder } = request.target;
        const result = await sandbox.run({
          key: request.key,
          argv: folder ? ["rg", ...request.args] : ["rg", ...request.args, "--", path],
          ...(folder ? { cwd: path } : {}),
          workspace: request.workspace,
          readOnly: request.readOnly,
          timeoutMs: request.timeoutMs,
          outputBytes: request.outputBytes,
          ...(request.signal ? { signal: request.signal } : {}),
        });
        switch (result.status) {
          case "exited":
            return {
              status: "done",
              exitCode: result.exitCode,
              stdout: linesBeforeCut(result.output.stdout),
              stderr: result.output.stderr,
              truncated: result.output.truncated,
            };
          case "timed_out":
            return { status: "failed", reason: `the search took longer than ${Math.round(result.timeoutMs / 1000)} s and was stopped; search a smaller folder` };
          case "cancelled":
            return { status: "failed", reason: "the search was cancelled" };
          case "busy":
          case "failed":
            return { status: "failed", reason: result.reason };
          default: {
            const never: never = result;
            throw new Error(`unhandled sandbox result ${JSON.stringify(never)}`);
          }
        }
      },
    };
  }
  return {
    async search(request) {
      const { path, folder } = request.target;
      let handle: FileHandle;
      try {
        handle = await request.open(path);
      } catch (error) {
        return { status: "failed", reason: (error as Error).message };
      }
      try {
        // The child gets the opened target as fd 3 (its cwd is set after the descriptors are in place).
        const named = "/proc/self/fd/3";
        const outcome = await runProcess(
          {
            file: ripgrep.path,
            args: folder ? [...request.args] : [...request.args, "--", named],
            env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
            cwd: folder ? named : "/",
            fds: [handle.fd],
          },
          {
            timeoutMs: request.timeoutMs,
            timers: options.timers,
            clock: options.clock,
            outputBytes: request.outputBytes,
            ...(request.signal ? { signal: request.signal } : {}),
          },
        );
        const { end, output } = outcome;
        if (end.kind === "spawn_failed") return { status: "failed", reason: `ripgrep could not be started: ${end.reason}` };
        if (end.kind === "timed_out")
          return { status: "failed", reason: `the search took longer than ${Math.round(request.timeoutMs / 1000)} s and was stopped; search a smaller folder` };
        if (end.kind === "cancelled") return { status: "failed", reason: "the search was cancelled" };
        const toToolPath = (text: string) => text.replaceAll(named, path);
        return {
          status: "done",
          exitCode: end.code ?? 2,
          stdout: toToolPath(linesBeforeCut(output.stdout)),
          stderr: toToolPath(output.stderr),
          truncated: output.truncated,
        };
      } finally {
        await handle.close().catch(() => {});
      }
    },
  };
}
