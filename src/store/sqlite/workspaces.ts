// Workspace files on SQLite: one row per file or symlink of a session's workspace; saved under the session's lease.
import type { Statement } from "better-sqlite3";
import type { Row } from "../rows.js";
import { FencedError, type Fence, type WorkspaceEntry, type WorkspaceFile, type WorkspaceStore } from "../store.js";
import { entryOf, fileOf } from "../workspace-rows.js";
import type { SqliteContext } from "./context.js";

export class SqliteWorkspaces implements WorkspaceStore {
  private readonly manifestOf: Statement;
  private readonly fileAt: Statement;
  private readonly put: Statement;
  private readonly remove: Statement;

  constructor(private readonly ctx: SqliteContext) {
    this.manifestOf = ctx.db.prepare("SELECT path, kind, mode, size, sha256 FROM workspace_files WHERE session_key = ? ORDER BY path");
    this.fileAt = ctx.db.prepare("SELECT path, kind, mode, size, sha256, content FROM workspace_files WHERE session_key = ? AND path = ?");
    this.put = ctx.db.prepare(
      `INSERT INTO workspace_files (session_key, path, kind, mode, size, sha256, content, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_key, path) DO UPDATE SET kind = excluded.kind, mode = excluded.mode, size = excluded.size,
         sha256 = excluded.sha256, content = excluded.content, updated_at = excluded.updated_at`,
    );
    this.remove = ctx.db.prepare("DELETE FROM workspace_files WHERE session_key = ? AND path = ?");
  }

  async manifest(sessionKey: string): Promise<WorkspaceEntry[]> {
    return (this.manifestOf.all(sessionKey) as Row[]).map(entryOf);
  }

  async files(sessionKey: string, paths: readonly string[]): Promise<WorkspaceFile[]> {
    return paths.flatMap((path) => {
      const row = this.fileAt.get(sessionKey, path) as Row | undefined;
      return row ? [fileOf(row)] : [];
    });
  }

  save(sessionKey: string, fence: Fence, put: readonly WorkspaceFile[], remove: readonly string[]): Promise<void> {
    return this.ctx.writes.run(() => {
      const current = this.ctx.leases.current(sessionKey)?.token ?? null;
      if (current !== fence.token) throw new FencedError(sessionKey, fence.token, current);
      const now = this.ctx.now();
      for (const f of put) this.put.run(sessionKey, f.path, f.kind, f.mode, f.size, f.sha256, f.content.toString("base64"), now);
      for (const path of remove) this.remove.run(sessionKey, path);
    });
  }
}
