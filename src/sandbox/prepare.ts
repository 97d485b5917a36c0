// What every box needs before bubblewrap starts, for one command (launch.ts) or a long-lived server (server.ts): its
// folders opened (handed over as descriptors, so a path cannot be swapped between the check and the mount) and
// checked reachable by the sandbox's user, and a private run folder holding the box's /etc/passwd and /etc/group and,
// when it has a network, the filtering proxy's socket.
import { constants } from "node:fs";
import { chown, mkdtemp, open, rm, writeFile, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { identityFiles } from "./bwrap.js";
import type { SandboxSetup } from "./launch.js";
import { startProxy, type ProxyOptions, type RunningProxy } from "./proxy.js";
import { unreachable } from "./reach.js";
import type { SandboxUser } from "./types.js";

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY;

/** Opens folders into `handles` (the caller closes them); a folder that cannot be opened is `fail`ed, naming it. */
export function folderOpener(handles: FileHandle[], fail: (message: string) => Error): (dir: string, what: string) => Promise<FileHandle> {
  return async (dir, what) => {
    try {
      const handle = await open(dir, DIRECTORY);
      handles.push(handle);
      return handle;
    } catch (error) {
      throw fail(`cannot open ${what} ${dir} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  };
}

/** Fails with the first folder the sandbox's user cannot reach and read, and the fix (nothing to check without one). */
export async function checkReach(dirs: readonly string[], user: SandboxUser | null, fail: (message: string) => Error): Promise<void> {
  if (!user) return;
  for (const dir of dirs) {
    const problem = await unreachable(dir, user);
    if (problem) throw fail(problem);
  }
}

export interface RunFolder {
  passwd: string;
  group: string;
  /** Host path of the proxy's socket; null: no network. */
  proxySocket: string | null;
  /** Destinations the proxy refused so far. */
  refusals(): readonly string[];
  /** Stops the proxy and removes the folder. */
  remove(): Promise<void>;
}

/** A private run folder named `<prefix>…` with the box's identity files, and the proxy when `network` is given. */
export async function makeRunFolder(setup: SandboxSetup, prefix: string, network: Omit<ProxyOptions, "log"> | null, log: Logger): Promise<RunFolder> {
  const dir = await mkdtemp(join(setup.runDirBase ?? tmpdir(), prefix));
  let proxy: RunningProxy | null = null;
  const remove = async () => {
    await proxy?.close();
    proxy = null;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const files = identityFiles();
    await writeFile(join(dir, "passwd"), files.passwd, { mode: 0o644 });
    await writeFile(join(dir, "group"), files.group, { mode: 0o644 });
    if (setup.user) await chown(dir, setup.user.uid, setup.user.gid);
    let proxySocket: string | null = null;
    if (network) {
      proxySocket = join(dir, "proxy.sock");
      proxy = await startProxy(proxySocket, { ...network, log });
      if (setup.user) await chown(proxySocket, setup.user.uid, setup.user.gid);
    }
    const running = proxy as RunningProxy | null;
    return { passwd: join(dir, "passwd"), group: join(dir, "group"), proxySocket, refusals: () => running?.refusals ?? [], remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
