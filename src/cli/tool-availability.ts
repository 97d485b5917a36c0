// What `npm run skills -- list` says about the tools a definition declares: which it gets here, and for each one it
// does not, why and what would change that. The workspace tools' reasons come from the configuration and from
// probing the sandbox as the gateway would at start-up.
import type { Config } from "../config.js";
import type { Definition } from "../catalog/definition.js";
import { silentLogger } from "../log.js";
import { systemClock, systemTimers } from "../runtime/deps.js";
import { WORKSPACE_TOOLS } from "../runtime/tools/workspace/index.js";
import { probeSandbox, type SandboxProbe } from "../sandbox/probe.js";
import { hiddenPaths } from "../sandbox/start.js";
import { WORKSPACE_OFF } from "../workspace/start.js";

export type SandboxCheck = () => Promise<Pick<SandboxProbe, "ok" | "ripgrep"> & { problem?: string; fix?: string }>;

export const probeHere: (config: Pick<Config, "DATA_DIR">) => SandboxCheck = (config) => () =>
  probeSandbox({ hidden: hiddenPaths(config, process.cwd()), timers: systemTimers, clock: systemClock, log: silentLogger() });

/**
 * The workspace tools `npm start` offers here and why each other one is missing: WORKSPACE=off, no sandbox (Bash),
 * no ripgrep (Glob, Grep). The same rule as src/workspace/start.ts, from the same probe.
 */
export async function workspaceToolsHere(config: Pick<Config, "WORKSPACE">, sandbox: SandboxCheck): Promise<{ offered: string[]; off: Record<string, string> }> {
  if (!config.WORKSPACE) return { offered: [], off: Object.fromEntries(WORKSPACE_TOOLS.map((tool) => [tool, WORKSPACE_OFF])) };
  const probe = await sandbox();
  const why = (tool: string): string | null => {
    if (tool === "Bash" && !probe.ok) return `no sandbox here: ${probe.problem ?? "bubblewrap cannot run"}; ${probe.fix ?? "install bubblewrap"}`;
    if ((tool === "Glob" || tool === "Grep") && !probe.ripgrep) return "ripgrep is not installed (apt-get install ripgrep)";
    return null;
  };
  const offered = WORKSPACE_TOOLS.filter((tool) => why(tool) === null);
  return { offered, off: Object.fromEntries(WORKSPACE_TOOLS.flatMap((tool) => (why(tool) === null ? [] : [[tool, why(tool)!]]))) };
}

/** One line per definition that declares a tool it does not get here; none when every declared tool is there. */
export function missingToolLines(definitions: Iterable<Definition>): string[] {
  const lines: string[] = [];
  for (const d of definitions) {
    if (!d.missingTools?.length) continue;
    lines.push(`tools: ${d.kind} ${d.name} lacks ${d.missingTools.map((m) => `${m.entry} (${m.why})`).join(", ")}`);
  }
  return lines;
}
