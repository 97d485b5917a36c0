// Can a sandbox run here? The probe answers with what to install or enable, and never settles for a sandbox
// that does not hold: a bubblewrap stand-in that runs commands without limits is refused, as Bash would then
// run a fork bomb unconfined.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock, systemTimers } from "../../src/runtime/deps.js";
import { probeSandbox } from "../../src/sandbox/probe.js";
import { describeSandbox, silent } from "../helpers/sandbox.js";

let bin: string;
beforeEach(() => {
  bin = mkdtempSync(join(tmpdir(), "switchboard-fake-bin-"));
  chmodSync(bin, 0o755);
});
afterEach(() => rmSync(bin, { recursive: true, force: true }));

const probe = (path: string) => probeSandbox({ hidden: [], path, timers: systemTimers, clock: systemClock, log: silent });

/** A stand-in for bwrap in `bin`: answers --version with `version`, and runs `body` for anything else. */
function fakeBwrap(version: string, body: string): void {
  const file = join(bin, "bwrap");
  writeFileSync(file, `#!/bin/bash\nif [ "$1" = --version ]; then echo "bubblewrap ${version}"; exit 0; fi\n${body}\n`);
  chmodSync(file, 0o755);
}

describe("the sandbox probe", () => {
  it("says to install bubblewrap when there is none", async () => {
    const answer = await probe(bin);
    expect(answer).toMatchObject({ ok: false, problem: "bubblewrap (bwrap) is not installed" });
    expect(!answer.ok && answer.fix).toContain("apt-get install bubblewrap");
  });

  it("refuses a bubblewrap too old for the options the sandbox needs", async () => {
    fakeBwrap("0.6.1", "exit 1");
    const answer = await probe(bin);
    expect(answer).toMatchObject({ ok: false, problem: expect.stringContaining("bubblewrap 0.6.1 is too old") });
  });

  it("explains a bubblewrap that may not create namespaces, and how to allow them", async () => {
    fakeBwrap("0.8.0", 'echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1');
    const answer = await probe(bin);
    expect(answer).toMatchObject({ ok: false, problem: expect.stringContaining("bubblewrap cannot create its namespaces here: bwrap: No permissions") });
    expect(!answer.ok && answer.fix).toContain("kernel.apparmor_restrict_unprivileged_userns=0");
  });

  it("refuses a sandbox whose process limit does not hold", async () => {
    // Runs the command in the trial workspace (fd 3) with every `ulimit` made a no-op: no confinement at all.
    fakeBwrap("0.8.0", 'while [ "$1" != -- ]; do shift; done; shift\nulimit() { :; }; export -f ulimit\ncd /proc/self/fd/3 && exec "$@"');
    const answer = await probe(`${bin}:/usr/bin:/bin`);
    expect(answer).toMatchObject({ ok: false, problem: expect.stringContaining("the sandbox's process limit is not enforced") });
  });
});

describeSandbox("the sandbox probe on this machine", () => {
  it("finds a working sandbox, and says what is missing for its optional parts", async () => {
    const answer = await probe(process.env.PATH ?? "/usr/bin:/bin");
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(answer.setup.user).toEqual(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : null);
    expect(answer.notes.filter((n) => n.includes("socat"))).toEqual(answer.socat ? [] : [expect.stringContaining("apt-get install socat")]);
  });
});
