// Rows of workspace_files as both backends read them.
import type { Row } from "./rows.js";
import type { WorkspaceEntry, WorkspaceEntryKind, WorkspaceFile } from "./roles/workspaces.js";

export function entryOf(r: Row): WorkspaceEntry {
  return { path: String(r.path), kind: String(r.kind) as WorkspaceEntryKind, mode: Number(r.mode), size: Number(r.size), sha256: String(r.sha256) };
}

export function fileOf(r: Row): WorkspaceFile {
  return { ...entryOf(r), content: Buffer.from(String(r.content), "base64") };
}
