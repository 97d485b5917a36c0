// The sandbox as configured: probe once at start, log what is there and what is missing (and how to get it),
// and build the sandbox and the searcher the workspace tools take. Nothing here falls back to running unconfined.
import { resolve } from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Resolver } from "../net/target.js";
import type { Clock, Timers } from "../runtime/deps.js";
import { probeSandbox, type SandboxProbe } from "./probe.js";
import type { ProxyOptions } from "./proxy.js";
import { createSearcher, type Searcher } from "./ripgrep.js";
import { createSandbox } from "./sandbox.js";
import type { Sandbox } from "./types.js";

export type SandboxConfig = Pick<
  Config,
  | "DATA_DIR"
  | "WORKSPACE_MAX_BYTES"
  | "BASH_MAX_TIMEOUT_MS"
  | "SANDBOX_ALLOW_HOSTS"
  | "SANDBOX_MEMORY_MB"
  | "SANDBOX_MAX_PROCESSES"
  | "SANDBOX_CONCURRENCY"
  | "SANDBOX_QUEUE_MAX"
>;

export interface SandboxStart {
  /** null: no sandbox can run here; `problem` says why and what to do. */
  sandbox: Sandbox | null;
  /** null: ripgrep is not installed (Glob and Grep are not offered). */
  searcher: Searcher | null;
  problem: string | null;
  probe: SandboxProbe;
}

export interface SandboxStartDeps {
  timers: Timers;
  clock: Clock;
  log: Logger;
  /** The gateway's own folder (its code, .env); default: the working directory. */
  projectDir?: string;
  /** Where to look for bwrap, socat and rg; default: $PATH and the usual system folders. */
  path?: string;
  resolve?: Resolver;
  connect?: ProxyOptions["connect"];
}

/** Paths no sandboxed command may see: the data folder (database, workspaces), the project folder, .env. */
export function hiddenPaths(config: Pick<Config, "DATA_DIR">, projectDir: string): string[] {
  return [resolve(config.DATA_DIR), resolve(projectDir), resolve(projectDir, ".env")];
}

export async function startSandbox(config: SandboxConfig, deps: SandboxStartDeps): Promise<SandboxStart> {
  const log = deps.log.child({ component: "sandbox" });
  const probe = await probeSandbox({
    hidden: hiddenPaths(config, deps.projectDir ?? process.cwd()),
    timers: deps.timers,
    clock: deps.clock,
    log,
    ...(deps.path ? { path: deps.path } : {}),
  });
  const searcherFor = (sandbox: Sandbox | null) => (probe.ripgrep ? createSearcher({ ripgrep: probe.ripgrep, sandbox, timers: deps.timers, clock: deps.clock }) : null);
  if (!probe.ok) {
    const problem = `${probe.problem}; to offer Bash, ${probe.fix}`;
    log.warn({ problem: probe.problem, fix: probe.fix }, "sandbox: unavailable, so Bash is not offered");
    if (!probe.ripgrep) log.warn("sandbox: ripgrep is not installed, so Grep and Glob are not offered (apt-get install ripgrep)");
    return { sandbox: null, searcher: searcherFor(null), problem, probe };
  }
  for (const note of probe.notes) log.warn(note);
  const sandbox = createSandbox({
    setup: probe.setup,
    memoryBytes: config.SANDBOX_MEMORY_MB * 1024 * 1024,
    processes: config.SANDBOX_MAX_PROCESSES,
    fileBytes: config.WORKSPACE_MAX_BYTES,
    outputBytes: 30_000,
    maxTimeoutMs: config.BASH_MAX_TIMEOUT_MS,
    concurrency: config.SANDBOX_CONCURRENCY,
    queueMax: config.SANDBOX_QUEUE_MAX,
    network: {
      allow: config.SANDBOX_ALLOW_HOSTS,
      socat: probe.socat !== null,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
      ...(deps.connect ? { connect: deps.connect } : {}),
    },
    timers: deps.timers,
    clock: deps.clock,
    log,
  });
  const hosts = "hosts" in sandbox.network ? sandbox.network.hosts : [];
  log.info({ bubblewrap: probe.version, user: probe.setup.user?.uid ?? "the gateway's", network: hosts.length ? hosts : "none" }, "sandbox: ready");
  return { sandbox, searcher: searcherFor(sandbox), problem: null, probe };
}
