// The workspace and sandbox settings: defaults, bounds, and refusals that name the variable and what to write.
import pino from "pino";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { systemClock, systemTimers } from "../../src/runtime/deps.js";
import { hiddenPaths, startSandbox } from "../../src/sandbox/start.js";
import { describeSandbox, silent } from "../helpers/sandbox.js";

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
};

describe("workspace and sandbox settings", () => {
  it("have defaults that work for a small deployment", () => {
    const c = loadConfig({});
    expect({
      WORKSPACE: c.WORKSPACE,
      WORKSPACE_MAX_BYTES: c.WORKSPACE_MAX_BYTES,
      WORKSPACE_MAX_FILES: c.WORKSPACE_MAX_FILES,
      BASH_DEFAULT_TIMEOUT_MS: c.BASH_DEFAULT_TIMEOUT_MS,
      BASH_MAX_TIMEOUT_MS: c.BASH_MAX_TIMEOUT_MS,
      SANDBOX_ALLOW_HOSTS: c.SANDBOX_ALLOW_HOSTS.entries,
      SANDBOX_MEMORY_MB: c.SANDBOX_MEMORY_MB,
      SANDBOX_MAX_PROCESSES: c.SANDBOX_MAX_PROCESSES,
      SANDBOX_CONCURRENCY: c.SANDBOX_CONCURRENCY,
      SANDBOX_QUEUE_MAX: c.SANDBOX_QUEUE_MAX,
    }).toEqual({
      WORKSPACE: true,
      WORKSPACE_MAX_BYTES: 104_857_600,
      WORKSPACE_MAX_FILES: 2000,
      BASH_DEFAULT_TIMEOUT_MS: 120_000,
      BASH_MAX_TIMEOUT_MS: 600_000,
      SANDBOX_ALLOW_HOSTS: [],
      SANDBOX_MEMORY_MB: 1024,
      SANDBOX_MAX_PROCESSES: 128,
      SANDBOX_CONCURRENCY: 4,
      SANDBOX_QUEUE_MAX: 32,
    });
    expect(loadConfig({ WORKSPACE: "off" }).WORKSPACE).toBe(false);
  });

  it("takes host names and wildcards in SANDBOX_ALLOW_HOSTS, and refuses addresses", () => {
    expect(loadConfig({ SANDBOX_ALLOW_HOSTS: "pypi.org, *.pythonhosted.org" }).SANDBOX_ALLOW_HOSTS).toMatchObject({
      hosts: ["pypi.org"],
      suffixes: [".pythonhosted.org"],
    });
    expect(refusal({ SANDBOX_ALLOW_HOSTS: "pypi.org,169.254.169.254" })).toContain(
      "SANDBOX_ALLOW_HOSTS: takes host names and *.domain wildcards only, not IP addresses or ranges",
    );
    expect(refusal({ SANDBOX_ALLOW_HOSTS: "pypi.org,not a host" })).toContain('SANDBOX_ALLOW_HOSTS: "not a host" is not a host name');
  });

  it("refuses values out of range, naming the variable", () => {
    expect(refusal({ SANDBOX_MAX_PROCESSES: "2" })).toContain('SANDBOX_MAX_PROCESSES: must be a whole number from 8 to 65536, got "2"');
    expect(refusal({ WORKSPACE_MAX_BYTES: "10k" })).toContain("WORKSPACE_MAX_BYTES: must be a whole number");
    expect(refusal({ WORKSPACE: "yes" })).toContain('WORKSPACE: must be "on" or "off"');
    expect(refusal({ BASH_DEFAULT_TIMEOUT_MS: "900000" })).toContain(
      "BASH_DEFAULT_TIMEOUT_MS: 900000 is over BASH_MAX_TIMEOUT_MS (600000); lower it or raise the maximum",
    );
  });

  it("keeps the data folder, the project folder and .env out of every sandbox", () => {
    expect(hiddenPaths({ DATA_DIR: "./data" }, "/srv/switchboard")).toEqual([`${process.cwd()}/data`, "/srv/switchboard", "/srv/switchboard/.env"]);
  });
});

describe("starting without a sandbox", () => {
  it("offers no sandbox, and logs what to install, instead of running anything unconfined", async () => {
    const lines: Array<{ level: number; msg: string; fix?: string }> = [];
    const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const started = await startSandbox(loadConfig({}), { timers: systemTimers, clock: systemClock, log, path: "/nonexistent" });
    expect(started.sandbox).toBeNull();
    expect(started.searcher).toBeNull();
    expect(started.problem).toMatch(
      /^bubblewrap \(bwrap\) is not installed; to offer Bash, install bubblewrap 0\.8 or newer \(Debian\/Ubuntu: apt-get install bubblewrap/,
    );
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: "sandbox: unavailable, so Bash is not offered", fix: expect.stringContaining("apt-get install bubblewrap") }),
      expect.objectContaining({ level: 40, msg: "sandbox: ripgrep is not installed, so Grep and Glob are not offered (apt-get install ripgrep)" }),
    ]);
  });
});

describeSandbox("starting the sandbox from the configuration", () => {
  it("builds a sandbox with the configured limits and network, and a searcher", async () => {
    const started = await startSandbox(loadConfig({ SANDBOX_ALLOW_HOSTS: "pypi.org", BASH_MAX_TIMEOUT_MS: "300000" }), {
      timers: systemTimers,
      clock: systemClock,
      log: silent,
    });
    expect(started.problem).toBeNull();
    expect(started.sandbox?.maxTimeoutMs).toBe(300_000);
    expect(started.sandbox?.network).toEqual(started.probe.ok && started.probe.socat ? { hosts: ["pypi.org"] } : { unavailable: expect.any(String) });
    expect(started.searcher).not.toBeNull();
  });
});
