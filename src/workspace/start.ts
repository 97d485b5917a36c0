// The workspace tools as `npm start` offers them (WORKSPACE=on): the sandbox probed once, each session's folder
// under DATA_DIR/workspaces, Read/Write/Edit always, Glob/Grep with ripgrep, Bash only where a sandbox runs.
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Clock, Timers } from "../runtime/deps.js";
import type { Tool } from "../runtime/tools/tool.js";
import { createWorkspaceTools } from "../runtime/tools/workspace/index.js";
import { startSandbox, type SandboxConfig, type SandboxStart } from "../sandbox/start.js";
import type { Store } from "../store/store.js";
import { LocalWorkspaces } from "./local.js";
import { WorkspaceSync } from "./sync.js";

/** Why a workspace tool is missing with WORKSPACE=off. */
export const WORKSPACE_OFF = "WORKSPACE=off: WORKSPACE=on turns it on";

export type WorkspaceConfig = SandboxConfig & Pick<Config, "WORKSPACE" | "WORKSPACE_MAX_FILES" | "BASH_DEFAULT_TIMEOUT_MS">;

export interface WorkspaceStart {
  tools: Tool[];
  /** The workspace tools not offered here, each with why and what to do (`skills list`, the catalog's warnings). */
  off: Record<string, string>;
  workspaces: LocalWorkspaces | null;
}

export interface WorkspaceStartDeps {
  timers: Timers;
  clock: Clock;
  log: Logger;
  /** Where to look for bwrap, socat and rg (tests give one without them); default: $PATH and the system folders. */
  path?: string;
  /** Starts the sandbox (tests inject one); default: the real probe. */
  sandbox?: () => Promise<SandboxStart>;
  /** The database the workspaces are kept in; none: the folders alone keep them (tests of the tools). */
  store?: Pick<Store, "workspaces">;
}

export async function startWorkspace(config: WorkspaceConfig, deps: WorkspaceStartDeps): Promise<WorkspaceStart> {
  if (!config.WORKSPACE) return { tools: [], off: {}, workspaces: null };
  const started = await (deps.sandbox ?? (() => startSandbox(config, deps)))();
  const limits = { maxBytes: config.WORKSPACE_MAX_BYTES, maxFiles: config.WORKSPACE_MAX_FILES };
  const workspaces = new LocalWorkspaces({
    dataDir: config.DATA_DIR,
    limits,
    owner: started.sandbox?.user ?? null,
    ...(deps.store ? { sync: new WorkspaceSync({ store: deps.store, limits, owner: started.sandbox?.user ?? null, log: deps.log.child({ part: "workspace" }) }) } : {}),
  });
  const { tools, missing } = createWorkspaceTools(
    { workspaceFor: workspaces.resolver, sandbox: started.sandbox, searcher: started.searcher, bashDefaultTimeoutMs: config.BASH_DEFAULT_TIMEOUT_MS },
    started.problem ?? undefined,
  );
  return { tools, off: Object.fromEntries(missing.map((m) => [m.name, m.why])), workspaces };
}
