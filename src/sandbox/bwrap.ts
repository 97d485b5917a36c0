// The bubblewrap command line for one sandboxed command: new namespaces of every kind (no network unless the
// proxy is bridged in, no other processes, no way to make more namespaces), the system read-only, small scratch
// folders in memory, the workspace writable and the extra folders read-only (both handed over as open
// descriptors, so the paths cannot be swapped between the check and the mount), the root itself read-only, an
// environment written out here, and resource limits set by a few lines of bash before the command is exec'd.
import { WORKSPACE_PATH } from "./types.js";
import { mountArgs, type MountOp } from "./system.js";

/** Who commands are inside: the same user on every machine, whatever uid the gateway runs as. */
export const INSIDE_UID = 1000;
export const INSIDE_GID = 1000;
export const HOME = "/home/sandbox";
export const PROXY_SOCKET = "/run/switchboard/proxy.sock";
export const PROXY_PORT = 3128;

export interface Limits {
  /** CPU seconds per process: SIGXCPU at this, SIGKILL a second later; null: none (a long-lived server). */
  cpuSeconds: number | null;
  /** Processes (and threads) the command may have at once, itself included. */
  processes: number;
  /** Data segment + private writable memory per process (RLIMIT_DATA), bytes. */
  memoryBytes: number;
  /** Largest file a process may write, bytes. */
  fileBytes: number;
}

export interface ScratchSizes {
  tmp: number;
  home: number;
  shm: number;
}

export interface BwrapPlan {
  system: readonly MountOp[];
  masks: readonly MountOp[];
  /** Host files to show as /etc/passwd and /etc/group (naming the inside user). */
  passwd: string;
  group: string;
  /** Descriptor number (in the child) of the opened workspace folder; null: no workspace (a server). */
  workspaceFd: number | null;
  /** Folders shown at `path`, read-only unless `writable`. */
  roots: ReadonlyArray<{ fd: number; path: string; writable?: boolean }>;
  /** Descriptor of a folder of its own shown writable as HOME, kept between runs; absent: a scratch HOME in memory. */
  homeFd?: number;
  /** Variables besides the sandbox's own (a server's entry names them); they win over the sandbox's. */
  env?: Readonly<Record<string, string>>;
  /** Descriptor number (in the child) bubblewrap reports its status on (the sandbox's PID 1). */
  infoFd: number;
  /** Host path of the proxy's socket; null: no network. */
  proxySocket: string | null;
  cwd: string;
  argv: readonly string[];
  limits: Limits;
  scratch: ScratchSizes;
}

/** The environment inside: built here from nothing; not one variable of the gateway's own is passed on. */
export function sandboxEnvironment(network: boolean): Record<string, string> {
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME,
    USER: "sandbox",
    LOGNAME: "sandbox",
    SHELL: "/bin/bash",
    LANG: "C.UTF-8",
    TMPDIR: "/tmp",
  };
  if (network) {
    const proxy = `http://127.0.0.1:${PROXY_PORT}`;
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]) env[name] = proxy;
    env.NO_PROXY = env.no_proxy = "localhost,127.0.0.1,::1";
  }
  return env;
}

// 127.0.0.1:3128 as /proc/net/tcp spells a local address (little-endian hex).
const PROXY_LOCAL = `0100007F:${PROXY_PORT.toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * The lines bash runs before exec'ing the command: close every descriptor but 0-2, the limits (they apply to
 * everything the command starts),
 * then, with a network, the bridge from 127.0.0.1:3128 to the proxy's socket, waited for so the command's first
 * connection finds it. Only whole numbers are put into the text; the command itself arrives as "$@".
 */
export function limitScript(limits: Limits, network: boolean): string {
  const whole = (n: number) => {
    if (!Number.isInteger(n) || n < 0) throw new Error(`sandbox limit must be a whole number, got ${n}`);
    return n;
  };
  const lines = [
    // Descriptors the gateway inherited from whatever started it would pass straight through to the command.
    // (No redirection on this loop: bash would park the real stderr on a descriptor above 2 and the loop close it.)
    `for f in /proc/self/fd/*; do f=\${f##*/}; [ "$f" -gt 2 ] && eval "exec $f>&-"; done`,
    (limits.cpuSeconds === null ? "" : `ulimit -S -t ${whole(limits.cpuSeconds)} && ulimit -H -t ${whole(limits.cpuSeconds) + 1} && `) +
      `ulimit -u ${whole(limits.processes)} && ulimit -d ${Math.ceil(whole(limits.memoryBytes) / 1024)} && ` +
      `ulimit -f ${Math.ceil(whole(limits.fileBytes) / 1024)} && ulimit -c 0 || { echo "sandbox: could not set the limits" >&2; exit 125; }`,
  ];
  if (network) {
    lines.push(
      `socat TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${PROXY_SOCKET} 2>/dev/null &`,
      `up() { local _a l _b; while read -r _a l _b; do [ "$l" = ${PROXY_LOCAL} ] && return 0; done < /proc/net/tcp; return 1; }`,
      `n=0; until up; do n=$((n+1)); [ $n -gt 500 ] && { echo "sandbox: the network bridge did not start" >&2; exit 125; }; sleep 0.01; done`,
      `unset -f up; unset n`,
    );
  }
  lines.push(`exec "$@"`);
  return lines.join("\n");
}

export function bwrapArgs(plan: BwrapPlan): string[] {
  const network = plan.proxySocket !== null;
  const env = { ...sandboxEnvironment(network), ...plan.env };
  return [
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--uid",
    String(INSIDE_UID),
    "--gid",
    String(INSIDE_GID),
    "--hostname",
    "sandbox",
    "--info-fd",
    String(plan.infoFd),
    ...mountArgs(plan.system),
    "--ro-bind",
    plan.passwd,
    "/etc/passwd",
    "--ro-bind",
    plan.group,
    "/etc/group",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    String(plan.scratch.shm),
    "--tmpfs",
    "/dev/shm",
    "--size",
    String(plan.scratch.tmp),
    "--tmpfs",
    "/tmp",
    ...(plan.homeFd === undefined ? ["--size", String(plan.scratch.home), "--tmpfs", HOME] : ["--bind-fd", String(plan.homeFd), HOME]),
    ...(plan.workspaceFd === null ? [] : ["--bind-fd", String(plan.workspaceFd), WORKSPACE_PATH]),
    ...plan.roots.flatMap((r) => [r.writable ? "--bind-fd" : "--ro-bind-fd", String(r.fd), r.path]),
    ...(plan.proxySocket ? ["--bind", plan.proxySocket, PROXY_SOCKET] : []),
    ...mountArgs(plan.masks),
    "--remount-ro",
    "/dev",
    "--remount-ro",
    "/",
    "--chdir",
    plan.cwd,
    "--clearenv",
    ...Object.entries(env).flatMap(([name, value]) => ["--setenv", name, value]),
    "--",
    "/bin/bash",
    "-c",
    limitScript(plan.limits, network),
    "sandbox",
    ...plan.argv,
  ];
}

/** /etc/passwd and /etc/group inside: the sandbox user and the overflow ids files of other owners show as. */
export function identityFiles(): { passwd: string; group: string } {
  return {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${INSIDE_UID}:${INSIDE_GID}:sandbox:${HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nsandbox:x:${INSIDE_GID}:\nnogroup:x:65534:\n`,
  };
}
