// The long-lived mode of the sandbox, for a program that talks over stdin and stdout for as long as it runs (an MCP
// server): the same bubblewrap box a command gets (the system read-only, nothing of DATA_DIR or the gateway's folder,
// an environment built from nothing, no network unless hosts are listed, through the same filtering proxy), but the
// program keeps a folder of its own as HOME between runs (its caches, npx's packages) and is shown its working folder
// at the same path, read-only unless asked otherwise. It has no CPU-time limit; the other limits hold. Stopping it
// stops everything it started: the gateway's signal goes to bubblewrap's process group, and bubblewrap's death takes
// the box's PID 1 with it (--die-with-parent), whose end the kernel makes the end of every process inside.
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { realpathSync } from "node:fs";
import { mkdir, type FileHandle } from "node:fs/promises";
import { dirname, isAbsolute, normalize } from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { bwrapArgs, HOME, type Limits } from "./bwrap.js";
import type { SandboxSetup } from "./launch.js";
import { checkReach, folderOpener, makeRunFolder, type RunFolder } from "./prepare.js";
import type { ProxyOptions } from "./proxy.js";
import { masksFor } from "./system.js";

export interface ServerBox {
  /** The folder kept between runs, shown writable as HOME (created when missing). */
  home: string;
  /** The program's working folder, shown at the same path; null: it starts in HOME. */
  cwd: { dir: string; writable: boolean } | null;
  /** The program and its arguments, looked up on the sandbox's PATH. */
  argv: readonly string[];
  /** Variables besides the sandbox's own (PATH, HOME, LANG, the proxy's); these win. */
  env: Readonly<Record<string, string>>;
  /** cpuSeconds is ignored: a server runs for as long as it is wanted. */
  limits: Omit<Limits, "cpuSeconds">;
  /** The proxy's rules; null: no network at all. */
  network: Omit<ProxyOptions, "log"> | null;
}

/** Why a server could not be put in a sandbox; nothing was started. */
export class ServerBoxError extends Error {
  override name = "ServerBoxError";
}

/** Paths of the box's own layout a working folder may not cover or sit in (/tmp is a scratch folder; inside it is fine). */
const LAYOUT = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev", "/run", HOME];
const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** Why `dir` cannot be a server's working folder in the box, or null. */
export function workingFolderProblem(dir: string, hidden: readonly string[]): string | null {
  if (!isAbsolute(dir) || normalize(dir) !== dir || (dir.endsWith("/") && dir !== "/")) return `"${dir}" is not a normalised absolute path`;
  const clash = LAYOUT.find((r) => overlaps(dir, r));
  if (clash || dir === "/" || dir === "/tmp") return `${dir} would cover ${clash ?? dir}, part of the sandbox's own layout; give the server a folder of its own`;
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    return `${dir} does not exist`;
  }
  const secret = hidden.find((h) => {
    try {
      return realpathSync(h) === real;
    } catch {
      return false;
    }
  });
  if (secret) return `${dir} is the gateway's own folder or DATA_DIR, which no sandbox may see; give the server a folder of its own`;
  return null;
}

/** A program running in its box, as much of a ChildProcess as a stdio transport uses. */
export class BoxedProcess extends EventEmitter {
  private innerPid: number | null = null;

  constructor(private readonly child: ChildProcess) {
    super();
  }

  get stdin(): Writable {
    return this.child.stdin!;
  }
  get stdout(): Readable {
    return this.child.stdout!;
  }
  get stderr(): Readable {
    return this.child.stderr!;
  }
  get pid(): number | undefined {
    return this.child.pid;
  }
  get exitCode(): number | null {
    return this.child.exitCode;
  }

  /** The box's PID 1 as the host sees it, once bubblewrap has said. */
  setInnerPid(pid: number): void {
    this.innerPid = pid;
  }

  /** Signals bubblewrap's process group (its death ends the box); SIGKILL goes to the box's PID 1 too. */
  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return false;
    if (signal === "SIGKILL" && this.innerPid !== null) {
      try {
        process.kill(this.innerPid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    try {
      process.kill(-this.child.pid!, signal);
      return true;
    } catch {
      return this.child.kill(signal);
    }
  }
}

/**
 * Starts `box.argv` in a long-lived sandbox; resolves once bubblewrap has started (the program may still fail inside:
 * that shows as its exit, with bubblewrap's message on stderr). Throws ServerBoxError when the box cannot be prepared.
 * Its run folder and proxy are removed when the process ends.
 */
export async function startServerBox(setup: SandboxSetup, box: ServerBox, log: Logger): Promise<BoxedProcess> {
  const handles: FileHandle[] = [];
  let run: RunFolder | null = null;
  const cleanUp = async () => {
    for (const handle of handles.splice(0)) await handle.close().catch(() => {});
    await run?.remove().catch(() => {});
    run = null;
  };
  const fail = (message: string) => new ServerBoxError(message);
  try {
    if (box.argv.length === 0 || box.argv.some((a) => a.includes("\0"))) throw fail("the command must be a program and arguments without NUL characters");
    if (box.cwd) {
      const problem = workingFolderProblem(box.cwd.dir, setup.hidden);
      if (problem) throw fail(`its working folder (cwd): ${problem}`);
    }
    // The folder above may be passed through (the sandbox's user must reach its own folder); its own is private.
    await mkdir(dirname(box.home), { recursive: true, mode: 0o711 })
      .then(() => mkdir(box.home, { mode: 0o700 }))
      .catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw fail(`cannot make its folder ${box.home} (${error.code ?? error.message})`);
      });
    const opened = folderOpener(handles, fail);
    const home = await opened(box.home, "its folder");
    if (setup.user) await home.chown(setup.user.uid, setup.user.gid);
    const cwd = box.cwd ? await opened(box.cwd.dir, "its working folder") : null;
    await checkReach([box.home, ...(box.cwd ? [box.cwd.dir] : [])], setup.user, fail);
    run = await makeRunFolder(setup, "switchboard-server-", box.network, log);

    // fd 3 is HOME, then the working folder, then bubblewrap's status pipe.
    const fds = [home.fd, ...(cwd ? [cwd.fd] : [])];
    const shown = box.cwd ? [{ source: realpathSync(box.cwd.dir), dest: box.cwd.dir }] : [];
    const args = bwrapArgs({
      system: setup.system.ops,
      masks: [...setup.systemMasks, ...masksFor(setup.hidden, shown)],
      passwd: run.passwd,
      group: run.group,
      workspaceFd: null,
      homeFd: 3,
      roots: box.cwd ? [{ fd: 4, path: box.cwd.dir, writable: box.cwd.writable }] : [],
      infoFd: 3 + fds.length,
      proxySocket: run.proxySocket,
      cwd: box.cwd?.dir ?? HOME,
      argv: box.argv,
      limits: { ...box.limits, cpuSeconds: null },
      scratch: setup.scratch,
      env: box.env,
    });
    const child = spawn(setup.bwrap, args, {
      env: {},
      stdio: ["pipe", "pipe", "pipe", ...fds, "pipe"],
      detached: true, // its own process group, which a stop signals as a whole
      ...(setup.user ? { uid: setup.user.uid, gid: setup.user.gid } : {}),
    });
    const boxed = new BoxedProcess(child);
    let status = "";
    const pipe = child.stdio[3 + fds.length] as Readable | null;
    pipe?.setEncoding("utf8");
    pipe?.on("data", (text: string) => {
      status += text;
      const pid = /"child-pid"\s*:\s*(\d+)/.exec(status);
      if (pid) boxed.setInnerPid(Number(pid[1]));
    });
    child.on("close", (code, signal) => {
      void cleanUp();
      boxed.emit("close", code, signal);
    });
    child.on("error", (error) => {
      if (boxed.listenerCount("error") > 0) boxed.emit("error", error);
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error: NodeJS.ErrnoException) =>
        reject(new ServerBoxError(`bubblewrap could not be started: ${setup.bwrap}: ${error.code ?? error.message}`)),
      );
    });
    // bubblewrap holds its own copies of the folders now.
    for (const handle of handles.splice(0)) await handle.close().catch(() => {});
    return boxed;
  } catch (error) {
    await cleanUp();
    if (error instanceof ServerBoxError) throw error;
    const e = error as NodeJS.ErrnoException;
    throw new ServerBoxError(`could not prepare the sandbox: ${e.code ?? ""} ${e.message}`.trim());
  }
}
