// vitest globalSetup: can the sandbox tests run here? Asked once per `vitest run`, so a machine without a
// sandbox gets one message instead of one per file; each sandbox test file then probes for itself (cheap) and
// skips quietly when the answer is no. With CI set, a missing sandbox fails the run instead (.ci/run installs
// bubblewrap, socat and ripgrep).
import pino from "pino";
import { probeSandbox } from "../../src/sandbox/probe.js";
import { systemClock, systemTimers } from "../../src/runtime/deps.js";

export default async function setup(): Promise<void> {
  const probe = await probeSandbox({ hidden: [], timers: systemTimers, clock: systemClock, log: pino({ level: "silent" }) });
  const ci = process.env.CI;
  if (!probe.ok) {
    if (ci && ci !== "false" && ci !== "0") throw new Error(`the sandbox tests cannot run: ${probe.problem}. In CI they must: ${probe.fix}.`);
    process.stderr.write(`\n⚠ Sandbox tests skipped: ${probe.problem}.\n  To run them: ${probe.fix}.\n\n`);
    return;
  }
  if (!probe.socat || !probe.ripgrep) {
    const missing = [!probe.socat && "socat", !probe.ripgrep && "ripgrep"].filter(Boolean).join(" and ");
    if (ci && ci !== "false" && ci !== "0") throw new Error(`the sandbox tests need ${missing}: apt-get install ${missing}`);
    process.stderr.write(`\n⚠ Sandbox network and search tests skipped: ${missing} not installed (apt-get install ${missing}).\n\n`);
  }
}
