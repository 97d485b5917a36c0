// What the rest of the gateway sees of the sandbox: a request to run one command, and what came of it.

/** Where a command's files live inside the sandbox: the session's workspace, writable. */
export const WORKSPACE_PATH = "/workspace";

/** A host folder shown inside the sandbox, read-only, at `path` (a skill's folder at /skills/<name>). */
export interface Mount {
  /** The folder on this machine (absolute). */
  dir: string;
  /** Where commands and the workspace tools see it (absolute, e.g. /skills/pdf). */
  path: string;
}

/** The unprivileged user commands run as when the gateway itself runs as root. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

export interface SandboxRequest {
  /** Whose call this is (a session's workspace id): queued calls take turns by key, so no key starves another. */
  key: string;
  /** The program and its arguments, e.g. ["bash", "-c", "ls"]; looked up on the sandbox's PATH. */
  argv: readonly string[];
  /** The workspace folder on this machine; mounted writable at /workspace. */
  workspace: string;
  /** More folders, read-only (a skill's folder). */
  readOnly?: readonly Mount[];
  /** Where the command starts, as the sandbox sees it. Default: /workspace. */
  cwd?: string;
  /** Wall-clock limit; the sandbox caps it at its own maximum. */
  timeoutMs: number;
  /** Reach the hosts of SANDBOX_ALLOW_HOSTS through the filtering proxy. Default false: no network at all. */
  network?: boolean;
  /** CPU seconds per process; default: the wall-clock limit. */
  cpuSeconds?: number;
  /** stdout + stderr kept at most (bytes); default: the sandbox's output cap. */
  outputBytes?: number;
  /** Cancels the call (/cancel, shutdown): a queued call leaves the queue, a running one is killed with its tree. */
  signal?: AbortSignal;
  /** Output as it arrives (already decoded), e.g. to show progress; called before the caps apply. */
  onOutput?: (text: string, stream: "stdout" | "stderr") => void;
}

/** A command's output, capped: when cut, the start and the end of each stream are kept. */
export interface Captured {
  stdout: string;
  stderr: string;
  /** Bytes the command wrote in all (both streams). */
  totalBytes: number;
  /** Some output was left out; the cut is marked in the text. */
  truncated: boolean;
}

interface Ran {
  output: Captured;
  durationMs: number;
  /** Time spent waiting for a free slot before the command started. */
  waitedMs: number;
  /** Connections the proxy refused ("host:port: why"), so the agent learns why its download failed. */
  refusals: readonly string[];
}

export type SandboxResult =
  /** `limit`: the process was stopped by a resource limit the sandbox set (its exit code says which signal). */
  | (Ran & { status: "exited"; exitCode: number; limit?: "cpu" })
  /** Killed, with every process it started, when the wall-clock limit passed. */
  | (Ran & { status: "timed_out"; timeoutMs: number })
  /** Killed, with every process it started, because the caller's signal aborted. */
  | (Ran & { status: "cancelled" })
  /** Not started: every slot is taken and the queue is full. */
  | { status: "busy"; reason: string }
  /** Not started: the request was wrong or the sandbox could not be set up. Nothing ran. */
  | { status: "failed"; reason: string };

export interface Sandbox {
  /** Runs one command in a fresh sandbox; never throws for anything the command does. */
  run(request: SandboxRequest): Promise<SandboxResult>;
  /** Host names commands may reach through the proxy (empty: no network), or why the network is off. */
  readonly network: { hosts: readonly string[] } | { unavailable: string };
  /** Files the gateway puts into a workspace must belong to this user so commands can change them; null: the gateway's own. */
  readonly user: SandboxUser | null;
  /** The longest wall-clock limit a request may have. */
  readonly maxTimeoutMs: number;
}
