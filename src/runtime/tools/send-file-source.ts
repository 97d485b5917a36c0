// Where send_file's `path` leads: a file of this conversation the agent was shown (a received one, by its id or its
// name) or a file of the session's workspace, confined to it (no `..`, absolute path or symlink leads out: the
// workspace tools' own walk, src/runtime/tools/workspace/paths.ts).
import { formatBytes } from "../../files/limits.js";
import type { FileRefBlock } from "../../llm/types.js";
import type { Store, StoredFile } from "../../store/store.js";
import { namesFile } from "../file-blocks.js";
import type { ToolContext } from "./tool.js";
import { openForReading } from "./workspace/files.js";
import { locate } from "./workspace/paths.js";
import { rootsOf, type WorkspaceResolver } from "./workspace/workspace.js";

export type Source =
  /** A stored file of the conversation: sent as it is (its bytes are stored already). */
  | { kind: "stored"; file: FileRefBlock; bytes: () => Promise<Buffer | null> }
  /** Bytes read from the workspace, to be kept as a new file. */
  | { kind: "bytes"; bytes: Buffer; name: string }
  | { kind: "error"; reason: string };

export interface SourceDeps {
  store: () => Pick<Store, "files">;
  /** The session's workspace; null where WORKSPACE is off. */
  workspaceFor: WorkspaceResolver | null;
}

export async function findSource(path: string, maxBytes: number, ctx: ToolContext, deps: SourceDeps): Promise<Source> {
  const stored = await storedFile(path, ctx, deps);
  if (stored) return stored;
  const access = deps.workspaceFor ? await deps.workspaceFor(ctx) : null;
  if (!access)
    return {
      kind: "error",
      reason: `"${path}" is not a file of this conversation (give a file's id or name as its note shows it)${deps.workspaceFor ? "" : "; this gateway has no workspace"}`,
    };
  const located = await locate(path, rootsOf(access));
  if (!located.ok) return { kind: "error", reason: located.reason };
  const { at } = located;
  try {
    const opened = await openForReading(at);
    if (!opened.ok)
      return {
        kind: "error",
        reason: opened.missing ? `"${path}" is neither a file of this conversation nor in the workspace (${at.path} does not exist)` : opened.reason,
      };
    try {
      // Known before reading: a file past the limit is never read into memory.
      if (opened.info.size > maxBytes)
        return { kind: "error", reason: `${at.path} is ${formatBytes(opened.info.size)}; files can be at most ${formatBytes(maxBytes)} (MAX_FILE_BYTES)` };
      const bytes = await opened.handle.readFile();
      return { kind: "bytes", bytes, name: at.path.split("/").pop() ?? "file" };
    } finally {
      await opened.handle.close();
    }
  } finally {
    await at.folder.close();
  }
}

/** A file of the conversation named by `path` (its id, else its name, the newest of that name) that this frame was shown. */
async function storedFile(path: string, ctx: ToolContext, deps: SourceDeps): Promise<Source | null> {
  const files = await deps.store().files.ofSession(ctx.sessionKey);
  const shown = files.filter((f) => namesFile(ctx.frame.history, f.id));
  const found = shown.find((f) => f.id === path) ?? shown.filter((f) => f.name === path || f.name === path.replace(/^\.?\//, "")).pop();
  if (!found) return null;
  return { kind: "stored", file: toRef(found), bytes: () => deps.store().files.bytes(found.sessionKey, found.sha256) };
}

function toRef(file: StoredFile): FileRefBlock {
  return { type: "file", file_id: file.id, name: file.name, mime: file.mime, kind: file.kind, size: file.size };
}
