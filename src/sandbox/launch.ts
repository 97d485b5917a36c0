// One sandboxed command from start to clean-up: open the folders it may see (as descriptors handed to
// bubblewrap), write the few files it gets (/etc/passwd, /etc/group) into a private run folder, start the
// filtering proxy when it may use the network, run it, and remove everything again whatever happened.
import type { FileHandle } from "node:fs/promises";
import type { Logger } from "pino";
import type { Clock, Timers } from "../runtime/deps.js";
import { bwrapArgs, type Limits, type ScratchSizes } from "./bwrap.js";
import { checkReach, folderOpener, makeRunFolder, type RunFolder } from "./prepare.js";
import { runProcess, type ProcessOutcome } from "./process.js";
import type { ProxyOptions } from "./proxy.js";
import { masksFor, type MountOp, type SystemView } from "./system.js";
import type { Mount, SandboxUser } from "./types.js";

/** What stays the same for every command of a process: found at start by the probe. */
export interface SandboxSetup {
  bwrap: string;
  user: SandboxUser | null;
  system: SystemView;
  /** Paths no command may see (DATA_DIR, the database, .env, the project folder). */
  hidden: readonly string[];
  /** Covers for hidden paths inside the system folders, worked out once. */
  systemMasks: readonly MountOp[];
  scratch: ScratchSizes;
  /** Where run folders are made (default: the OS temporary folder). */
  runDirBase?: string;
}

export interface Launch {
  workspace: string;
  readOnly: readonly Mount[];
  cwd: string;
  argv: readonly string[];
  limits: Limits;
  /** The proxy's rules; null: no network. */
  network: Omit<ProxyOptions, "log"> | null;
  timeoutMs: number;
  outputBytes: number;
  signal?: AbortSignal;
  onOutput?: (text: string, stream: "stdout" | "stderr") => void;
}

export interface LaunchDeps {
  timers: Timers;
  clock: Clock;
  log: Logger;
}

export type LaunchOutcome = (ProcessOutcome & { refusals: readonly string[] }) | { end: { kind: "setup_failed"; reason: string } };

export async function launch(setup: SandboxSetup, job: Launch, deps: LaunchDeps): Promise<LaunchOutcome> {
  const handles: FileHandle[] = [];
  let run: RunFolder | null = null;
  try {
    const opened = folderOpener(handles, (message) => new SetupError(message));
    const workspace = await opened(job.workspace, "the workspace");
    // Commands run as the sandbox user: its workspace must be its own to write in.
    if (setup.user) await workspace.chown(setup.user.uid, setup.user.gid);
    const roots = [];
    for (const mount of job.readOnly) roots.push({ handle: await opened(mount.dir, "the read-only folder"), path: mount.path });
    await checkReach([job.workspace, ...job.readOnly.map((m) => m.dir)], setup.user, (message) => new SetupError(message));
    run = await makeRunFolder(setup, "switchboard-sandbox-", job.network, deps.log);

    // fd 3 is the workspace, then the read-only folders in order, then bubblewrap's status pipe.
    const fds = [workspace.fd, ...roots.map((r) => r.handle.fd)];
    const masks = [
      ...setup.systemMasks,
      ...masksFor(
        setup.hidden,
        job.readOnly.map((m) => ({ source: m.dir, dest: m.path })),
      ),
    ];
    const args = bwrapArgs({
      system: setup.system.ops,
      masks,
      passwd: run.passwd,
      group: run.group,
      workspaceFd: 3,
      roots: roots.map((r, i) => ({ fd: 4 + i, path: r.path })),
      infoFd: 4 + roots.length,
      proxySocket: run.proxySocket,
      cwd: job.cwd,
      argv: job.argv,
      limits: job.limits,
      scratch: setup.scratch,
    });
    const outcome = await runProcess(
      { file: setup.bwrap, args, env: {}, user: setup.user, fds, statusPipe: true },
      {
        timeoutMs: job.timeoutMs,
        timers: deps.timers,
        clock: deps.clock,
        outputBytes: job.outputBytes,
        ...(job.signal ? { signal: job.signal } : {}),
        ...(job.onOutput ? { onOutput: job.onOutput } : {}),
      },
    );
    return { ...outcome, refusals: run.refusals() };
  } catch (error) {
    if (error instanceof SetupError) return { end: { kind: "setup_failed", reason: error.message } };
    const e = error as NodeJS.ErrnoException;
    return { end: { kind: "setup_failed", reason: `could not prepare the sandbox: ${e.code ?? ""} ${e.message}`.trim() } };
  } finally {
    for (const handle of handles) await handle.close().catch(() => {});
    await run?.remove();
  }
}

class SetupError extends Error {}
