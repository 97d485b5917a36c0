// Workspace files on PostgreSQL: one row per file or symlink of a session's workspace; saved in one transaction
// that first locks the session's lease row and checks the fence, as a step does.
import { FencedError, type Fence, type WorkspaceEntry, type WorkspaceFile, type WorkspaceStore } from "../store.js";
import { entryOf, fileOf } from "../workspace-rows.js";
import { transaction } from "./connection.js";
import type { PostgresContext } from "./context.js";
import { S as Shared, sql } from "./statements.js";

const S = {
  manifest: sql("workspace_manifest", "SELECT path, kind, mode, size, sha256 FROM workspace_files WHERE session_key = $1 ORDER BY path"),
  files: sql("workspace_files", "SELECT path, kind, mode, size, sha256, content FROM workspace_files WHERE session_key = $1 AND path = ANY($2::text[]) ORDER BY path"),
  put: sql(
    "workspace_put",
    `INSERT INTO workspace_files (session_key, path, kind, mode, size, sha256, content, updated_at)
     SELECT $1, u.*, $8::bigint FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[], $7::text[]) AS u(path, kind, mode, size, sha256, content)
     ON CONFLICT (session_key, path) DO UPDATE SET kind = excluded.kind, mode = excluded.mode, size = excluded.size,
       sha256 = excluded.sha256, content = excluded.content, updated_at = excluded.updated_at`,
  ),
  remove: sql("workspace_remove", "DELETE FROM workspace_files WHERE session_key = $1 AND path = ANY($2::text[])"),
};

export class PostgresWorkspaces implements WorkspaceStore {
  constructor(private readonly ctx: PostgresContext) {}

  async manifest(sessionKey: string): Promise<WorkspaceEntry[]> {
    return (await this.ctx.all(S.manifest, [sessionKey])).map(entryOf);
  }

  async files(sessionKey: string, paths: readonly string[]): Promise<WorkspaceFile[]> {
    if (paths.length === 0) return [];
    return (await this.ctx.all(S.files, [sessionKey, paths])).map(fileOf);
  }

  async save(sessionKey: string, fence: Fence, put: readonly WorkspaceFile[], remove: readonly string[]): Promise<void> {
    await transaction(this.ctx.pool, async (client) => {
      const { rows } = await client.query({ ...Shared.fence, values: [sessionKey] });
      const current = rows[0] ? Number((rows[0] as { token: unknown }).token) : null;
      if (current !== fence.token) throw new FencedError(sessionKey, fence.token, current);
      if (put.length > 0) {
        await client.query({
          ...S.put,
          values: [
            sessionKey,
            put.map((f) => f.path),
            put.map((f) => f.kind),
            put.map((f) => f.mode),
            put.map((f) => f.size),
            put.map((f) => f.sha256),
            put.map((f) => f.content.toString("base64")),
            this.ctx.now(),
          ],
        });
      }
      if (remove.length > 0) await client.query({ ...S.remove, values: [sessionKey, remove] });
    });
  }
}
