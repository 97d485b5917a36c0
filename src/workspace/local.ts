// Each session's workspace on this machine: a folder under DATA_DIR/workspaces named by a hash of the session key
// (never a path made from user text), created on first use, handed to the sandbox's user when the gateway runs as
// root. The tools get it through the WorkspaceResolver; the skill frame's own folder comes along read-only.
import { createHash } from "node:crypto";
import { chmod, chown, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ToolContext } from "../runtime/tools/tool.js";
import { skillFolderMount, type Workspace, type WorkspaceChange, type WorkspaceLimits, type WorkspaceResolver } from "../runtime/tools/workspace/index.js";
import type { SandboxUser } from "../sandbox/types.js";

export interface LocalWorkspacesOptions {
  dataDir: string;
  limits: WorkspaceLimits;
  /** The sandbox's user (gateway running as root), who must own the folders; null: the gateway's own user. */
  owner: SandboxUser | null;
  /** Told after a tool changed a session's files (persistence); none: the folder alone keeps them. */
  changed?: (sessionKey: string, dir: string, change: WorkspaceChange) => Promise<void>;
  /** Called once per session and process before its first use (persistence fills the folder). */
  prepare?: (sessionKey: string, dir: string) => Promise<void>;
}

/** The folder's name for a session: opaque, fixed length, the same on every replica. */
export function workspaceId(sessionKey: string): string {
  return createHash("sha256").update(`workspace\0${sessionKey}`).digest("hex").slice(0, 32);
}

/** Where the workspaces of this gateway live. */
export function workspacesRoot(dataDir: string): string {
  return join(resolve(dataDir), "workspaces");
}

export class LocalWorkspaces {
  private readonly ready = new Map<string, Promise<Workspace>>();

  constructor(private readonly options: LocalWorkspacesOptions) {}

  /** The folder of a session's workspace (it may not exist yet). */
  dirOf(sessionKey: string): string {
    return join(workspacesRoot(this.options.dataDir), workspaceId(sessionKey));
  }

  /** The session's workspace, its folder made (and filled by `prepare`) on first use in this process. */
  workspace(sessionKey: string): Promise<Workspace> {
    let ready = this.ready.get(sessionKey);
    if (!ready) {
      ready = this.open(sessionKey);
      this.ready.set(sessionKey, ready);
      ready.catch(() => this.ready.delete(sessionKey));
    }
    return ready;
  }

  /** Forgets what this process knows of a session's folder (after /reset or erasure), so the next use prepares it again. */
  forget(sessionKey: string): void {
    this.ready.delete(sessionKey);
  }

  readonly resolver: WorkspaceResolver = async (ctx: ToolContext) => ({ workspace: await this.workspace(ctx.sessionKey), readOnly: skillFolderMount(ctx) });

  private async open(sessionKey: string): Promise<Workspace> {
    const root = workspacesRoot(this.options.dataDir);
    await mkdir(root, { recursive: true, mode: 0o711 });
    // The sandbox's user only passes through the root; each workspace is its own.
    if (this.options.owner) await chmod(root, 0o711);
    const id = workspaceId(sessionKey);
    const dir = join(root, id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (this.options.owner) await chown(dir, this.options.owner.uid, this.options.owner.gid);
    await this.options.prepare?.(sessionKey, dir);
    const changed = this.options.changed;
    return {
      id,
      dir,
      limits: this.options.limits,
      ...(changed ? { changed: (change: WorkspaceChange) => changed(sessionKey, dir, change) } : {}),
    };
  }
}
