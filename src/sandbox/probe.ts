// Can a sandbox run here? Asked once at start. The answer is either yes (with what was found) or no with exactly
// what to install or enable; a "no" means commands are not offered at all, never run unconfined. The check is
// real: a command is started in a sandbox built the way every later one is, and it must prove that the process
// limit holds (a fork fails past it), which is not so when the sandboxed processes would run as root.
import { accessSync, constants } from "node:fs";
import { chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { Logger } from "pino";
import type { Clock, Timers } from "../runtime/deps.js";
import { launch, type SandboxSetup } from "./launch.js";
import { runProcess } from "./process.js";
import { masksFor, systemView } from "./system.js";
import type { SandboxUser } from "./types.js";

export type SandboxProbe =
  | {
      ok: true;
      setup: SandboxSetup;
      version: string;
      /** null: commands get no network even when SANDBOX_ALLOW_HOSTS names hosts. */
      socat: string | null;
      ripgrep: Ripgrep | null;
      /** What is missing for parts of the sandbox (socat, ripgrep), said once at start. */
      notes: string[];
    }
  | { ok: false; problem: string; fix: string; ripgrep: Ripgrep | null };

export interface Ripgrep {
  path: string;
  /** Installed under /usr (or /bin), so a sandbox sees it too. */
  inSandbox: boolean;
}

export interface ProbeOptions {
  /** Paths no command may see: DATA_DIR, the database, .env, the project folder. */
  hidden: readonly string[];
  scratch?: SandboxSetup["scratch"];
  /** The search path for bwrap, socat and rg; default: $PATH plus the usual system folders. */
  path?: string;
  /** Who commands run as when the gateway runs as root; default nobody (65534). */
  rootUser?: SandboxUser;
  runDirBase?: string;
  timers: Timers;
  clock: Clock;
  log: Logger;
}

export const MIN_BWRAP = [0, 8, 0] as const;
export const DEFAULT_SCRATCH = { tmp: 256 * 1024 * 1024, home: 32 * 1024 * 1024, shm: 64 * 1024 * 1024 };
const NOBODY: SandboxUser = { uid: 65534, gid: 65534 };

/** The first executable `name` on `path`. */
export function findExecutable(name: string, path: string): string | null {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

const INSTALL_BWRAP = "install bubblewrap 0.8 or newer (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";
const USERNS_FIX =
  "allow unprivileged user namespaces for bubblewrap: on Ubuntu 23.10+ set sysctl kernel.apparmor_restrict_unprivileged_userns=0 " +
  "(or give /usr/bin/bwrap an AppArmor profile with 'userns'), on older Debian kernels sysctl kernel.unprivileged_userns_clone=1, " +
  "make sure user.max_user_namespaces is above 0, and in a container run it with --security-opt seccomp=unconfined " +
  "--security-opt apparmor=unconfined (or a runtime that permits nested user namespaces)";

export async function probeSandbox(options: ProbeOptions): Promise<SandboxProbe> {
  const path = options.path ?? [process.env.PATH ?? "", "/usr/local/bin", "/usr/bin", "/bin"].join(delimiter);
  const rgPath = findExecutable("rg", path);
  const ripgrep = rgPath ? { path: rgPath, inSandbox: /^\/(usr|bin)\//.test(rgPath) } : null;
  const no = (problem: string, fix: string): SandboxProbe => ({ ok: false, problem, fix, ripgrep });

  if (process.platform !== "linux")
    return no(`the sandbox needs Linux (bubblewrap); this is ${process.platform}`, "run the gateway on Linux (a container works) to offer Bash");
  const bwrap = findExecutable("bwrap", path);
  if (!bwrap) return no("bubblewrap (bwrap) is not installed", INSTALL_BWRAP);

  const controls = { timeoutMs: 10_000, timers: options.timers, clock: options.clock, outputBytes: 4096 };
  const versionRun = await runProcess({ file: bwrap, args: ["--version"], env: {} }, controls);
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(versionRun.output.stdout);
  if (!version) return no(`${bwrap} --version said nothing readable (${versionRun.output.stderr.trim() || "no output"})`, INSTALL_BWRAP);
  const [major, minor, patch] = version.slice(1).map(Number) as [number, number, number];
  if (major * 1e6 + minor * 1e3 + patch < MIN_BWRAP[0] * 1e6 + MIN_BWRAP[1] * 1e3 + MIN_BWRAP[2]) {
    return no(`bubblewrap ${version[0]} is too old (it lacks --disable-userns, --bind-fd or tmpfs sizes)`, INSTALL_BWRAP);
  }

  const user = process.getuid?.() === 0 ? (options.rootUser ?? NOBODY) : null;
  const system = systemView();
  const setup: SandboxSetup = {
    bwrap,
    user,
    system,
    hidden: options.hidden,
    systemMasks: masksFor(options.hidden, system.sources),
    scratch: options.scratch ?? DEFAULT_SCRATCH,
    ...(options.runDirBase ? { runDirBase: options.runDirBase } : {}),
  };

  const trial = await mkdtemp(join(options.runDirBase ?? tmpdir(), "switchboard-probe-"));
  try {
    if (user) await chown(trial, user.uid, user.gid);
    // `timeout` forks once; with at most two processes (bubblewrap's init and this one) the fork must fail.
    const outcome = await launch(
      setup,
      {
        workspace: trial,
        readOnly: [],
        cwd: "/workspace",
        argv: ["bash", "-c", "echo ok > probe && ulimit -u 2 && exec timeout 5 true"],
        limits: { cpuSeconds: 10, processes: 64, memoryBytes: 256 * 1024 * 1024, fileBytes: 1024 * 1024 },
        network: null,
        timeoutMs: 10_000,
        outputBytes: 4096,
      },
      options,
    );
    if (outcome.end.kind === "setup_failed") return no(`a trial sandbox could not be prepared: ${outcome.end.reason}`, "check that the temporary folder is writable");
    if (!("output" in outcome)) throw new Error("unreachable");
    const stderr = outcome.output.stderr.trim();
    if (outcome.end.kind !== "exited") return no(`a trial sandbox did not finish (${outcome.end.kind}${stderr ? `: ${stderr}` : ""})`, INSTALL_BWRAP);
    const wrote = await readFile(join(trial, "probe"), "utf8").catch(() => "");
    if (wrote.trim() !== "ok") {
      if (/namespace|uid map|Operation not permitted|No space left on device/i.test(stderr)) {
        return no(`bubblewrap cannot create its namespaces here: ${stderr}`, USERNS_FIX);
      }
      return no(`a trial sandbox failed: ${stderr || `exit code ${outcome.end.code}`}`, INSTALL_BWRAP);
    }
    if (outcome.end.code === 0) {
      return no(
        "the sandbox's process limit is not enforced (a fork past it succeeded), so a fork bomb would not stay in its box",
        user ? "run the gateway as an unprivileged user" : "use Linux 5.14 or newer and run the gateway as an unprivileged user",
      );
    }
  } finally {
    await rm(trial, { recursive: true, force: true });
  }

  const socat = findExecutable("socat", path);
  const notes: string[] = [];
  if (!socat) notes.push("socat is not installed, so sandboxed commands get no network even with SANDBOX_ALLOW_HOSTS (apt-get install socat)");
  if (!ripgrep) notes.push("ripgrep is not installed, so Grep and Glob are not offered (apt-get install ripgrep)");
  else if (!ripgrep.inSandbox) notes.push(`ripgrep at ${ripgrep.path} is outside /usr, so searches run it outside the sandbox (read-only, on opened folders)`);
  return { ok: true, setup, version: version[0], socat, ripgrep, notes };
}
