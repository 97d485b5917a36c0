// The workspaces role: the files of each session's workspace, so that it survives a restart and follows the session
// to whichever replica holds its lease. Rows are keyed by (session, path); a file's bytes go base64 in `content`,
// a symlink's target there as text. Saving is fenced by the session's lease, like a step.
import type { Fence } from "./leases.js";

export type WorkspaceEntryKind = "file" | "symlink";

/** What a workspace holds at a path, without its content (compared with a folder to know what to write). */
export interface WorkspaceEntry {
  /** Relative to the workspace, `/`-separated, no `.`/`..` segments. */
  path: string;
  kind: WorkspaceEntryKind;
  /** Permission bits (0o755 for an executable file, 0o644 otherwise; 0o777 for a symlink). */
  mode: number;
  /** Bytes of the file (of the target's text for a symlink). */
  size: number;
  /** Hex SHA-256 of the bytes (of the target's text for a symlink). */
  sha256: string;
}

export interface WorkspaceFile extends WorkspaceEntry {
  content: Buffer;
}

export interface WorkspaceStore {
  /** Every entry of a session's workspace, by path. */
  manifest(sessionKey: string): Promise<WorkspaceEntry[]>;
  /** The entries at `paths` with their contents (paths without an entry are left out). */
  files(sessionKey: string, paths: readonly string[]): Promise<WorkspaceFile[]>;
  /**
   * Writes `put` (replacing entries at the same paths) and removes `remove`, in one transaction, if `fence` still
   * holds the session's lease; otherwise throws FencedError and writes nothing.
   */
  save(sessionKey: string, fence: Fence, put: readonly WorkspaceFile[], remove: readonly string[]): Promise<void>;
}
