// Keeps a session's workspace folder and its rows in the database (the `workspaces` role) in step. The database is
// the truth: a replica that gets a session's lease (a new fencing token) first makes its folder match the stored
// manifest (writes what is missing or different, removes what is gone); after a tool changed files, the changes are
// saved under the same lease, so a replica that lost the session cannot overwrite what the new holder wrote.
import { lchown, lstat, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { WorkspaceChange, WorkspaceLimits } from "../runtime/tools/workspace/index.js";
import type { SandboxUser } from "../sandbox/types.js";
import type { Fence, Store, WorkspaceFile } from "../store/store.js";
import { badPath, confinedLink, readEntry, sameEntry, scan } from "./scan.js";

export interface WorkspaceSyncOptions {
  store: Pick<Store, "workspaces">;
  limits: WorkspaceLimits;
  owner: SandboxUser | null;
  log: Logger;
}

export class WorkspaceSync {
  /** The lease token each session's folder was last made to match the database under. */
  private readonly syncedUnder = new Map<string, number>();

  constructor(private readonly options: WorkspaceSyncOptions) {}

  /** Before a tool uses the folder: unless this replica has held the lease since it last synced, materialise. */
  async prepare(sessionKey: string, dir: string, fence: Fence): Promise<void> {
    if (this.syncedUnder.get(sessionKey) === fence.token) return;
    await this.materialise(sessionKey, dir);
    this.syncedUnder.set(sessionKey, fence.token);
  }

  /** Forgets what this process synced (after erasure), so the next use materialises again. */
  forget(sessionKey: string): void {
    this.syncedUnder.delete(sessionKey);
  }

  /** The folder made to match the stored manifest. */
  async materialise(sessionKey: string, dir: string): Promise<void> {
    const stored = new Map((await this.options.store.workspaces.manifest(sessionKey)).map((e) => [e.path, e]));
    const local = await scan(dir);
    for (const path of local.entries.keys()) if (!stored.has(path)) await rm(join(dir, path), { force: true });
    const wanted = [...stored.values()].filter((e) => {
      const here = local.entries.get(e.path);
      return !here || !sameEntry(here, e);
    });
    for (const file of await this.options.store.workspaces.files(
      sessionKey,
      wanted.map((e) => e.path),
    ))
      await this.place(dir, file);
  }

  /** After a tool changed files: the changed paths (or, after a command, every difference) saved under `fence`. */
  async save(sessionKey: string, dir: string, change: WorkspaceChange, fence: Fence): Promise<void> {
    const { log } = this.options;
    const put: WorkspaceFile[] = [];
    const remove: string[] = [];
    const skipped: string[] = [];
    if ("paths" in change) {
      for (const seen of change.paths) {
        const path = seen.replace(/^\/workspace\/?/, "");
        const entry = await readEntry(dir, path);
        if (entry === null) remove.push(path);
        else if ("skipped" in entry) skipped.push(entry.skipped);
        else put.push(entry);
      }
    } else {
      const stored = new Map((await this.options.store.workspaces.manifest(sessionKey)).map((e) => [e.path, e]));
      const local = await scan(dir);
      skipped.push(...local.skipped);
      for (const path of stored.keys()) if (!local.entries.has(path)) remove.push(path);
      const changed = [...local.entries.values()].filter((f) => !stored.has(f.path) || !sameEntry(stored.get(f.path)!, f));
      const bytes = [...local.entries.values()].reduce((sum, f) => sum + (f.kind === "file" ? f.size : 0), 0);
      const { maxBytes, maxFiles } = this.options.limits;
      // Over its limits the workspace keeps what was stored (the command's result says so); removals still count.
      if (bytes <= maxBytes && local.entries.size <= maxFiles) put.push(...changed);
      else
        log.warn(
          { session: sessionKey, bytes, files: local.entries.size },
          "workspace: over its limits after a command, so its new files are not saved until some are removed",
        );
    }
    if (skipped.length > 0)
      log.warn({ session: sessionKey, skipped: skipped.slice(0, 20) }, "workspace: entries not saved (symlinks leading out, special files, bad names)");
    if (put.length > 0 || remove.length > 0) await this.options.store.workspaces.save(sessionKey, fence, put, remove);
  }

  /** Writes one stored entry into the folder without following anything already there. */
  private async place(dir: string, file: WorkspaceFile): Promise<void> {
    const problem =
      badPath(file.path) ?? (file.kind === "symlink" && !confinedLink(file.path, file.content.toString()) ? "a symlink leading out of the workspace" : null);
    if (problem) {
      this.options.log.warn({ path: JSON.stringify(file.path), problem }, "workspace: a stored entry was not placed");
      return;
    }
    const parts = file.path.split("/");
    let at = dir;
    for (const part of parts.slice(0, -1)) {
      at = join(at, part);
      const info = await lstat(at).catch(() => null);
      if (info && !info.isDirectory()) await rm(at, { force: true });
      if (!info || !info.isDirectory()) {
        await mkdir(at, { mode: 0o755 });
        await this.own(at);
      }
    }
    const target = join(dir, file.path);
    const temporary = join(at, `.sb-${process.pid}-${parts.at(-1)!.slice(0, 32)}.tmp`);
    await rm(temporary, { force: true });
    if (file.kind === "symlink") await symlink(file.content.toString(), temporary);
    else await writeFile(temporary, file.content, { mode: file.mode, flag: "wx" });
    await this.own(temporary);
    const existing = await lstat(target).catch(() => null);
    if (existing?.isDirectory()) await rm(target, { recursive: true, force: true });
    // rename replaces a file or symlink at the target without following it.
    await rename(temporary, target);
  }

  private async own(path: string): Promise<void> {
    if (this.options.owner) await lchown(path, this.options.owner.uid, this.options.owner.gid);
  }
}
