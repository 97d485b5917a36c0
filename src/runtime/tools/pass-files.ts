// `files` on the handoff tools (use_skill, use_agent, call_agent): the files a parent passes to the child it starts.
// A child sees the files of the message that reached it and these, nothing else of the conversation: a parent can
// pass only files its own history names (by id, or by the name or workspace path the history shows), so it cannot
// reach past what it was shown either.
import type { FileRefBlock } from "../../llm/types.js";
import { namesFile } from "../file-blocks.js";
import type { StackFrame } from "../frame.js";
import type { ToolContext } from "./tool.js";

/** At most this many files go to one child. */
export const MAX_PASSED_FILES = 20;

/** The `files` input field, as each handoff tool declares it. */
export function filesProperty(who: string): Record<string, unknown> {
  return {
    type: "array",
    items: { type: "string" },
    description: `Files of this conversation for the ${who} to see (their ids, or names as your messages show them). It sees these and no other file of the conversation.`,
  };
}

export type PassedFiles = { ok: true; files: FileRefBlock[] } | { ok: false; error: string };

/** `raw` (the tool's `files` input) resolved against the files `frame` can see. */
export async function filesToPass(frame: StackFrame, raw: unknown, ctx: Pick<ToolContext, "sessionFile">): Promise<PassedFiles> {
  if (raw === undefined || raw === null) return { ok: true, files: [] };
  if (!Array.isArray(raw) || raw.some((f) => typeof f !== "string" || f.trim() === "")) {
    return { ok: false, error: 'files must be a list of file ids or names, e.g. ["report.pdf"]' };
  }
  const wanted = [...new Set((raw as string[]).map((f) => f.trim()))];
  if (wanted.length > MAX_PASSED_FILES) return { ok: false, error: `files names ${wanted.length} files; at most ${MAX_PASSED_FILES} can be passed` };
  const visible = visibleFiles(frame);
  const out = new Map<string, FileRefBlock>();
  for (const want of wanted) {
    const found = findFile(visible, want) ?? (namesFile(frame.history, want) ? await summarised(ctx, want) : null);
    if (!found) return { ok: false, error: `files: there is no file "${want}" among the files you can see; ${choices(visible)}` };
    out.set(found.file_id, found);
  }
  return { ok: true, files: [...out.values()] };
}

/** The file blocks of the frame's history, newest first, once each. */
function visibleFiles(frame: StackFrame): FileRefBlock[] {
  const seen = new Map<string, FileRefBlock>();
  for (let i = frame.history.length - 1; i >= 0; i--) {
    const message = frame.history[i]!;
    if (message.role !== "user") continue;
    for (const block of message.content) if (block.type === "file" && !seen.has(block.file_id)) seen.set(block.file_id, block);
  }
  return [...seen.values()];
}

/** By id first, then by name or workspace path (the newest file of that name). */
function findFile(files: FileRefBlock[], want: string): FileRefBlock | null {
  return (
    files.find((f) => f.file_id === want) ??
    files.find((f) => f.name === want || f.path === want || (f.path !== undefined && f.path === `/workspace/${want.replace(/^\.?\/+/, "")}`)) ??
    null
  );
}

/** A file only a compaction summary still names (by id): looked up in the conversation's files. */
async function summarised(ctx: Pick<ToolContext, "sessionFile">, id: string): Promise<FileRefBlock | null> {
  const file = await ctx.sessionFile(id);
  if (!file) return null;
  const { expiredAt: _expired, ...ref } = file;
  return ref;
}

function choices(files: FileRefBlock[]): string {
  if (files.length === 0) return "you have been shown no files";
  const listed = files.slice(0, 10).map((f) => `${f.name} (${f.file_id})`);
  return `pass one of: ${listed.join(", ")}${files.length > 10 ? `, … ${files.length - 10} more` : ""}`;
}
