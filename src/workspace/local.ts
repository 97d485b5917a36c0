// Each session's workspace on this machine: a folder under DATA_DIR/workspaces named by a hash of the session key
// (never a path made from user text), created on first use, handed to the sandbox's user when the gateway runs as
// root. The tools get it through the WorkspaceResolver; the skill frame's own folder comes along read-only.
import { createHash } from "node:crypto";
import { chmod, chown, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ToolContext } from "../runtime/tools/tool.js";
import { skillFolderMount, type Workspace, type WorkspaceChange, type WorkspaceLimits, type WorkspaceResolver } from "../runtime/tools/workspace/index.js";
import type { SandboxUser } from "../sandbox/types.js";
import type { SessionWriter } from "../store/store.js";
import { placeInto, type Placed } from "./place.js";
import type { WorkspaceSync } from "./sync.js";

export interface LocalWorkspacesOptions {
  dataDir: string;
  limits: WorkspaceLimits;
  /** The sandbox's user (gateway running as root), who must own the folders; null: the gateway's own user. */
  owner: SandboxUser | null;
  /** Keeps the folders and the database in step; none: the folders alone keep the files. */
  sync?: Pick<WorkspaceSync, "prepare" | "save">;
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
  private readonly made = new Map<string, Promise<string>>();

  constructor(private readonly options: LocalWorkspacesOptions) {}

  /** The folder of a session's workspace (it may not exist yet). */
  dirOf(sessionKey: string): string {
    return join(workspacesRoot(this.options.dataDir), workspaceId(sessionKey));
  }

  /**
   * The session's workspace for a call: its folder made on first use in this process and, with persistence, made
   * to match the database when this replica has not held the lease since it last did; changes saved under the
   * call's lease.
   */
  readonly resolver: WorkspaceResolver = async (ctx: ToolContext) => {
    const { sessionKey, fence } = ctx;
    const dir = await this.folder(sessionKey);
    const sync = this.options.sync;
    await sync?.prepare(sessionKey, dir, fence);
    const workspace: Workspace = {
      id: workspaceId(sessionKey),
      dir,
      limits: this.options.limits,
      ...(sync ? { changed: (change: WorkspaceChange) => sync.save(sessionKey, dir, change, fence) } : {}),
    };
    return { workspace, readOnly: skillFolderMount(ctx) };
  };

  /**
   * Puts a received file in the top folder of the session's workspace (a free name made from `name`), within its
   * limits, saved under `writer`'s lease; the path the tools see it at, or why it could not be placed.
   */
  async placeFile(writer: Pick<SessionWriter, "sessionKey" | "fence">, name: string, bytes: Buffer): Promise<Placed> {
    const { sessionKey, fence } = writer;
    const dir = await this.folder(sessionKey);
    await this.options.sync?.prepare(sessionKey, dir, fence);
    const placed = await placeInto(dir, name, bytes, this.options.limits, this.options.owner);
    if (placed.ok) await this.options.sync?.save(sessionKey, dir, { paths: [placed.path] }, fence);
    return placed;
  }

  private folder(sessionKey: string): Promise<string> {
    let made = this.made.get(sessionKey);
    if (!made) {
      made = this.make(sessionKey);
      this.made.set(sessionKey, made);
      made.catch(() => this.made.delete(sessionKey));
    }
    return made;
  }

  private async make(sessionKey: string): Promise<string> {
    const root = workspacesRoot(this.options.dataDir);
    await mkdir(root, { recursive: true, mode: 0o711 });
    // The sandbox's user only passes through the root; each workspace is its own.
    if (this.options.owner) await chmod(root, 0o711);
    const dir = this.dirOf(sessionKey);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (this.options.owner) await chown(dir, this.options.owner.uid, this.options.owner.gid);
    return dir;
  }
}
