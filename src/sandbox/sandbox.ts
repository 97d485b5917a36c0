// The sandbox as the tools see it: check a request, wait for a slot (taking turns with other sessions), run the
// command under bubblewrap with the configured limits, and say plainly how it ended.
import { isAbsolute, normalize } from "node:path";
import type { Logger } from "pino";
import type { Allowlist } from "../net/allowlist.js";
import { systemResolver, type Resolver } from "../net/target.js";
import type { Clock, Timers } from "../runtime/deps.js";
import { launch, type LaunchOutcome, type SandboxSetup } from "./launch.js";
import { tcpConnect, type ProxyOptions } from "./proxy.js";
import { FairQueue } from "./queue.js";
import { WORKSPACE_PATH, type Sandbox, type SandboxRequest, type SandboxResult } from "./types.js";

export interface SandboxOptions {
  setup: SandboxSetup;
  /** Data + private writable memory per process (RLIMIT_DATA). */
  memoryBytes: number;
  /** Processes and threads per command, all together. */
  processes: number;
  /** Largest file one process may write (a workspace's quota is the natural value). */
  fileBytes: number;
  /** stdout + stderr kept per command. */
  outputBytes: number;
  maxTimeoutMs: number;
  concurrency: number;
  queueMax: number;
  /** SANDBOX_ALLOW_HOSTS; `socat` false means the bridge into the sandbox cannot be built, so no network. */
  network: { allow: Allowlist; socat: boolean; resolve?: Resolver; connect?: ProxyOptions["connect"] };
  timers: Timers;
  clock: Clock;
  log: Logger;
}

// Folders a read-only mount may not cover or sit in: the sandbox's own layout.
const RESERVED = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev", "/tmp", "/home", "/run", WORKSPACE_PATH];

const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** Why a path inside the sandbox is not usable for a mount or a working folder, or null. */
function insidePathProblem(path: string): string | null {
  if (!isAbsolute(path) || normalize(path) !== path || path.endsWith("/")) return `"${path}" is not a normalised absolute path`;
  return null;
}

function requestProblem(request: SandboxRequest): string | null {
  if (request.argv.length === 0 || request.argv.some((a) => typeof a !== "string" || a.includes("\0"))) {
    return "argv must be a non-empty list of strings without NUL characters";
  }
  if (!isAbsolute(request.workspace)) return `the workspace "${request.workspace}" is not an absolute path`;
  for (const mount of request.readOnly ?? []) {
    const problem = insidePathProblem(mount.path);
    if (problem) return `read-only folder: ${problem}`;
    const clash = RESERVED.find((r) => overlaps(mount.path, r));
    if (clash || mount.path === "/") return `read-only folder "${mount.path}" would cover ${clash ?? "/"}; choose a path such as /skills/<name>`;
    if (!isAbsolute(mount.dir)) return `read-only folder "${mount.dir}" is not an absolute path`;
  }
  const paths = (request.readOnly ?? []).map((m) => m.path);
  if (new Set(paths).size !== paths.length || paths.some((p, i) => paths.some((q, j) => i !== j && overlaps(p, q)))) {
    return "read-only folders overlap";
  }
  if (request.cwd !== undefined && insidePathProblem(request.cwd)) return `working folder: ${insidePathProblem(request.cwd)}`;
  if (!Number.isInteger(request.timeoutMs) || request.timeoutMs < 1) return `timeoutMs must be a whole number of milliseconds ≥ 1, got ${request.timeoutMs}`;
  return null;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15, SIGXCPU: 24, SIGXFSZ: 25 };

export function createSandbox(options: SandboxOptions): Sandbox {
  const queue = new FairQueue(options.concurrency, options.queueMax, options.clock);
  const { allow, socat } = options.network;
  const networkOn = socat && allow.entries.length > 0;
  const network =
    socat || allow.entries.length === 0
      ? { hosts: allow.entries }
      : { unavailable: "SANDBOX_ALLOW_HOSTS is set but socat is not installed (apt-get install socat), so commands have no network" };

  async function run(request: SandboxRequest): Promise<SandboxResult> {
    const problem = requestProblem(request);
    if (problem) return { status: "failed", reason: problem };
    const timeoutMs = Math.min(request.timeoutMs, options.maxTimeoutMs);
    let admission;
    try {
      admission = await queue.acquire(request.key, request.signal);
    } catch {
      return { status: "cancelled", output: { stdout: "", stderr: "", totalBytes: 0, truncated: false }, durationMs: 0, waitedMs: 0, refusals: [] };
    }
    if (!admission.ok) return { status: "busy", reason: admission.reason };
    const { slot } = admission;
    let outcome: LaunchOutcome;
    try {
      outcome = await launch(
        options.setup,
        {
          workspace: request.workspace,
          readOnly: request.readOnly ?? [],
          cwd: request.cwd ?? WORKSPACE_PATH,
          argv: request.argv,
          limits: {
            cpuSeconds: request.cpuSeconds ?? Math.ceil(timeoutMs / 1000),
            processes: options.processes,
            memoryBytes: options.memoryBytes,
            fileBytes: options.fileBytes,
          },
          network: request.network && networkOn ? { allow, resolve: options.network.resolve ?? systemResolver, connect: options.network.connect ?? tcpConnect } : null,
          timeoutMs,
          outputBytes: request.outputBytes ?? options.outputBytes,
          ...(request.signal ? { signal: request.signal } : {}),
          ...(request.onOutput ? { onOutput: request.onOutput } : {}),
        },
        options,
      );
    } finally {
      slot.release();
    }
    const result = resultOf(outcome, timeoutMs, slot.waitedMs);
    options.log.debug({ key: request.key, program: request.argv[0], status: result.status }, "sandbox: command ended");
    return result;
  }

  return { run, network, user: options.setup.user, maxTimeoutMs: options.maxTimeoutMs };
}

function resultOf(outcome: LaunchOutcome, timeoutMs: number, waitedMs: number): SandboxResult {
  const { end } = outcome;
  switch (end.kind) {
    case "setup_failed":
      return { status: "failed", reason: end.reason };
    case "spawn_failed":
      return { status: "failed", reason: `bubblewrap could not be started: ${end.reason}` };
    case "timed_out":
    case "cancelled":
    case "exited": {
      const ran = outcome as Exclude<LaunchOutcome, { end: { kind: "setup_failed" } }>;
      const base = { output: ran.output, durationMs: ran.durationMs, waitedMs, refusals: ran.refusals };
      if (end.kind === "timed_out") return { ...base, status: "timed_out", timeoutMs };
      if (end.kind === "cancelled") return { ...base, status: "cancelled" };
      const exitCode = end.code ?? 128 + (SIGNALS[end.signal ?? ""] ?? 0);
      const { stdout, stderr } = ran.output;
      // bubblewrap's own failures (a mount it could not make) and the limit script's come before the command ran.
      if (stdout === "" && ((exitCode === 1 && stderr.startsWith("bwrap: ")) || (exitCode === 125 && stderr.startsWith("sandbox: ")))) {
        return { status: "failed", reason: `the sandbox could not start: ${stderr.trim()}` };
      }
      return { ...base, status: "exited", exitCode, ...(exitCode === 128 + SIGNALS.SIGXCPU! ? { limit: "cpu" as const } : {}) };
    }
    default: {
      const never: never = end;
      throw new Error(`unhandled end ${JSON.stringify(never)}`);
    }
  }
}
