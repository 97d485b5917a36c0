// Real bubblewrap for the sandbox tests: the probe's answer for this machine, sandboxes built from it, and
// throwaway data folders shaped like the gateway's (a database file, sibling workspaces). Tests that need the
// sandbox use `describeSandbox`, which skips where none can run (test/setup/sandbox.ts said so once, or failed
// the run in CI).
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { describe } from "vitest";
import { EMPTY_ALLOWLIST, type Allowlist } from "../../src/net/allowlist.js";
import { systemClock, systemTimers, type Timers } from "../../src/runtime/deps.js";
import { probeSandbox, type SandboxProbe } from "../../src/sandbox/probe.js";
import { createSandbox, type SandboxOptions } from "../../src/sandbox/sandbox.js";
import type { Sandbox } from "../../src/sandbox/types.js";

export const silent = pino({ level: "silent" });

/** A gateway-shaped folder: data/switchboard.db, data/workspaces/{alice,bob}, and a project folder with .env. */
export interface Site {
  root: string;
  data: string;
  database: string;
  project: string;
  dotenv: string;
  alice: string;
  bob: string;
  /** Paths commands must never see. */
  hidden: string[];
  remove(): void;
}

export function makeSite(user: { uid: number; gid: number } | null): Site {
  const root = mkdtempSync(join(tmpdir(), "switchboard-site-"));
  // The sandbox's user must be able to pass through the folders above a workspace (test/sandbox: "reach").
  chmodSync(root, 0o711);
  const data = join(root, "data");
  const project = join(root, "project");
  const alice = join(data, "workspaces", "alice");
  const bob = join(data, "workspaces", "bob");
  for (const dir of [alice, bob, project]) mkdirSync(dir, { recursive: true });
  const database = join(data, "switchboard.db");
  writeFileSync(database, "SQLite format 3\0 the-database-contents");
  writeFileSync(join(bob, "diary.txt"), "bob's private diary");
  const dotenv = join(project, ".env");
  writeFileSync(dotenv, "ANTHROPIC_API_KEY=sk-ant-site-secret\n");
  // The workspaces belong to the sandbox's user, as the persistence layer will make them.
  if (user) for (const dir of [alice, bob]) chownSync(dir, user.uid, user.gid);
  return { root, data, database, project, dotenv, alice, bob, hidden: [data, project, dotenv], remove: () => rmSync(root, { recursive: true, force: true }) };
}

const probeOptions = { hidden: [], timers: systemTimers, clock: systemClock, log: silent };
export const probe: SandboxProbe = await probeSandbox(probeOptions);
export const available = probe.ok;
export const describeSandbox = probe.ok ? describe : describe.skip;
export const describeNetwork = probe.ok && probe.socat ? describe : describe.skip;
export const describeSearch = probe.ok && probe.ripgrep ? describe : describe.skip;

/** A sandbox on this machine with test-sized limits; `hidden` are the site's private paths. */
export function testSandbox(hidden: readonly string[], overrides: Partial<Omit<SandboxOptions, "setup">> & { allow?: Allowlist } = {}): Sandbox {
  if (!probe.ok) throw new Error(`no sandbox here: ${probe.problem}`);
  const { allow, ...rest } = overrides;
  return createSandbox({
    setup: { ...probe.setup, hidden },
    memoryBytes: 512 * 1024 * 1024,
    processes: 64,
    fileBytes: 64 * 1024 * 1024,
    outputBytes: 30_000,
    maxTimeoutMs: 60_000,
    concurrency: 4,
    queueMax: 16,
    network: { allow: allow ?? EMPTY_ALLOWLIST, socat: probe.socat !== null },
    timers: systemTimers as Timers,
    clock: systemClock,
    log: silent,
    ...rest,
  });
}

/** Host processes whose command line contains `marker` (a unique string in the sandboxed command). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Resolves with the output once `predicate` holds for what a command printed so far. */
export function outputWatcher() {
  let seen = "";
  const waiters: Array<{ test: (s: string) => boolean; resolve: () => void }> = [];
  return {
    onOutput: (text: string) => {
      seen += text;
      for (const w of [...waiters]) {
        if (w.test(seen)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    },
    until: (test: (s: string) => boolean) =>
      new Promise<void>((resolve) => {
        if (test(seen)) resolve();
        else waiters.push({ test, resolve });
      }),
    get seen() {
      return seen;
    },
  };
}
