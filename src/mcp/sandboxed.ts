import { join, resolve } from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { systemResolver, type Resolver } from "../net/target.js";
import type { Clock, Timers } from "../runtime/deps.js";
import type { Limits } from "../sandbox/bwrap.js";
import { probeSandbox, type SandboxProbe } from "../sandbox/probe.js";
import { tcpConnect, type ProxyOptions } from "../sandbox/proxy.js";
import { ServerBoxError, startServerBox } from "../sandbox/server.js";
import { hiddenPaths } from "../sandbox/start.js";
import type { ServerConfig } from "./config.js";
import { spawnDirect, type ServerProcess, type SpawnServer, type StdioLaunch } from "./stdio.js";

// Stdio servers whose entry says `"sandbox": true` run in the sandbox's long-lived mode (src/sandbox/server.ts): the
// system read-only, DATA_DIR/mcp/<server> as their HOME, their cwd read-only (writable with "writable_cwd"), only the
// entry's env, no network unless "allow_hosts" names hosts. Whether a sandbox can run here is asked when the first
// such server starts; a "no" is asked again at the server's next attempt, so installing bubblewrap needs no restart.
// A sandboxed server never falls back to running with the gateway's rights.

export interface McpSandboxOptions {
  /** Can a sandbox run here, and with what (the probe of src/sandbox/probe.ts). */
  probe(): Promise<SandboxProbe>;
  /** The folder of the servers' own folders: each server's HOME is <homes>/<server> (DATA_DIR/mcp). */
  homes: string;
  limits: Omit<Limits, "cpuSeconds">;
  resolve?: Resolver;
  connect?: ProxyOptions["connect"];
  log: Logger;
}

export interface SandboxSpawner {
  spawn: SpawnServer;
  /** How a server is confined, as `npm run mcp -- list` shows it; null for HTTP servers. */
  describe: (server: ServerConfig) => string | null;
}

export const UNCONFINED = "not sandboxed: runs with the gateway's user, files and network";

/** Starts sandboxed servers in the sandbox (with `options`), the others with `direct`. */
export function sandboxSpawner(options: McpSandboxOptions | null, direct: SpawnServer = spawnDirect): SandboxSpawner {
  let last: SandboxProbe | null = null;
  let pending: Promise<SandboxProbe> | null = null;
  const probed = (sandbox: McpSandboxOptions): Promise<SandboxProbe> => {
    if (last?.ok) return Promise.resolve(last);
    pending ??= sandbox.probe().then(
      (answer) => {
        last = answer;
        pending = null;
        return answer;
      },
      (error: unknown) => {
        pending = null;
        throw error;
      },
    );
    return pending;
  };

  async function boxed(launch: StdioLaunch & { sandbox: NonNullable<StdioLaunch["sandbox"]> }): Promise<ServerProcess> {
    if (!options) throw new Error("the entry asks for the sandbox, but this process has none set up for MCP servers");
    const probe = await probed(options);
    if (!probe.ok) throw new Error(`the sandbox cannot run here: ${probe.problem}; to run this server, ${probe.fix}`);
    const hosts = launch.sandbox.allowHosts;
    const network = hosts.entries.length > 0 && probe.socat ? { allow: hosts, resolve: options.resolve ?? systemResolver, connect: options.connect ?? tcpConnect } : null;
    if (hosts.entries.length > 0 && !network) options.log.warn(`MCP server ${launch.server}: socat is not installed, so it runs without network (apt-get install socat)`);
    try {
      return await startServerBox(
        probe.setup,
        {
          home: join(options.homes, launch.server),
          cwd: launch.cwd === null ? null : { dir: resolve(launch.cwd), writable: launch.sandbox.writableCwd },
          argv: [launch.command, ...launch.args],
          // Node 24 and later send fetch() through HTTP(S)_PROXY only when told to.
          env: { ...(network ? { NODE_USE_ENV_PROXY: "1" } : {}), ...launch.env },
          limits: options.limits,
          network,
        },
        options.log.child({ mcp: launch.server }),
      );
    } catch (error) {
      if (error instanceof ServerBoxError) error.message = `the sandbox could not start it: ${error.message}`;
      throw error;
    }
  }

  return {
    spawn: (launch) => (launch.sandbox ? boxed({ ...launch, sandbox: launch.sandbox }) : direct(launch)),
    describe: (server) => {
      if (server.transport !== "stdio") return null;
      if (!server.sandbox) return UNCONFINED;
      if (!options) return "sandbox asked for, but none is set up in this process: it does not run";
      if (last && !last.ok) return `sandbox unavailable, so it does not run: ${last.problem}; ${last.fix}`;
      const hosts = server.sandbox.allowHosts.entries;
      const socat = last?.ok && hosts.length > 0 && !last.socat;
      const network = socat ? "no network (socat is not installed: apt-get install socat)" : hosts.length ? `network: ${hosts.join(", ")}` : "no network";
      return `sandboxed (${network}; cwd ${server.cwd === null ? "none" : server.sandbox.writableCwd ? "writable" : "read-only"})`;
    },
  };
}

/** The sandbox for MCP servers as the gateway configures it: its limits, DATA_DIR/mcp, the paths no box may see. */
export function mcpSandbox(
  config: Pick<Config, "DATA_DIR" | "SANDBOX_MEMORY_MB" | "SANDBOX_MAX_PROCESSES" | "WORKSPACE_MAX_BYTES">,
  deps: { timers: Timers; clock: Clock; log: Logger; projectDir?: string },
): McpSandboxOptions {
  const log = deps.log.child({ component: "sandbox" });
  return {
    probe: () => probeSandbox({ hidden: hiddenPaths(config, deps.projectDir ?? process.cwd()), timers: deps.timers, clock: deps.clock, log }),
    homes: resolve(config.DATA_DIR, "mcp"),
    limits: { processes: config.SANDBOX_MAX_PROCESSES, memoryBytes: config.SANDBOX_MEMORY_MB * 1024 * 1024, fileBytes: config.WORKSPACE_MAX_BYTES },
    log,
  };
}
