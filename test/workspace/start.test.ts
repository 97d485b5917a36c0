// What `npm start` offers of the workspace tools: all six where a sandbox runs; without one (no bubblewrap on the
// path) no Bash, the log saying what to install, and the file tools still working. Bash asks the owner first
// exactly when SANDBOX_ALLOW_HOSTS gives commands a network.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createTools } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { effectiveToolsFor } from "../../src/runtime/tools/registry.js";
import { systemClock, systemTimers } from "../../src/runtime/deps.js";
import { startWorkspace } from "../../src/workspace/start.js";
import { describeSandbox } from "../helpers/sandbox.js";

let root = "";
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = "";
});

function configWith(env: Record<string, string> = {}) {
  root = mkdtempSync(join(tmpdir(), "switchboard-ws-"));
  chmodSync(root, 0o711);
  return loadConfig({ DATA_DIR: join(root, "data"), ...env });
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

describe("without a sandbox", () => {
  it("does not offer Bash, logs what to install, and registers the file tools", async () => {
    const config = configWith();
    const { log, lines } = capture();
    const workspace = await startWorkspace(config, { timers: systemTimers, clock: systemClock, log, path: join(root, "no-such-bin") });
    const { registry, off } = createTools(config, undefined, undefined, undefined, undefined, workspace);
    expect(registry.names()).toEqual(expect.arrayContaining(["Read", "Write", "Edit"]));
    expect(registry.names()).not.toContain("Bash");
    expect(off.Bash).toMatch(/bubblewrap.*install/i);
    expect(lines.find((l) => l.msg === "sandbox: unavailable, so Bash is not offered")).toMatchObject({ level: 40, fix: expect.stringMatching(/bubblewrap/) });
  });

  it("offers none of them with WORKSPACE=off, and says how to turn them on", async () => {
    const config = configWith({ WORKSPACE: "off" });
    const workspace = await startWorkspace(config, { timers: systemTimers, clock: systemClock, log: pino({ level: "silent" }) });
    const { registry, off } = createTools(config, undefined, undefined, undefined, undefined, workspace);
    expect(registry.names().filter((n) => ["Read", "Write", "Edit", "Glob", "Grep", "Bash"].includes(n))).toEqual([]);
    expect(off.Read).toBe("WORKSPACE=off: WORKSPACE=on turns it on");
  });
});

describeSandbox("with a sandbox", () => {
  it("offers all six to main; a child inherits them without a whitelist and gets only those it declares with one", async () => {
    const config = configWith();
    const workspace = await startWorkspace(config, { timers: systemTimers, clock: systemClock, log: pino({ level: "silent" }) });
    const names = createTools(config, undefined, undefined, undefined, undefined, workspace).registry.names();
    const six = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];
    expect(effectiveToolsFor("main", names, null)).toEqual(expect.arrayContaining(six));
    expect(effectiveToolsFor("agent", names, null)).toEqual(expect.arrayContaining(six));
    expect(effectiveToolsFor("skill", names, ["Read", "Bash"]).filter((n) => six.includes(n))).toEqual(["Read", "Bash"]);
  });

  it("runs Bash freely without a network, and asks the owner first when SANDBOX_ALLOW_HOSTS is set", async () => {
    const bashOf = async (env: Record<string, string>) => {
      const config = configWith(env);
      const workspace = await startWorkspace(config, { timers: systemTimers, clock: systemClock, log: pino({ level: "silent" }) });
      rmSync(root, { recursive: true, force: true });
      return workspace.tools.find((t) => t.spec.name === "Bash")!;
    };
    expect((await bashOf({})).requiresApproval).toBe(false);
    expect((await bashOf({ SANDBOX_ALLOW_HOSTS: "pypi.org" })).requiresApproval).toBe(true);
  });
});
