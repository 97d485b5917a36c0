// Write, as Claude Code names it: the whole file, created (with its folders) or replaced, inside the workspace
// only, within the workspace's limits.
import { z } from "zod";
import type { SandboxUser } from "../../../sandbox/types.js";
import { fail, type Tool, type ToolOutput } from "../tool.js";
import { openForReading, writeWhole } from "./files.js";
import { parseInput } from "./input.js";
import { locate, type Located } from "./paths.js";
import { checkWrite } from "./quota.js";
import { accessFor, WORKSPACE_PATH, type Workspace, type WorkspaceResolver } from "./workspace.js";

export const WRITE = "Write";

const input = z.object({
  file_path: z.string({ message: "must be the file's path, a string" }).min(1, { message: "must not be empty" }),
  content: z.string({ message: "must be the file's whole content, a string" }),
});

export interface FileWriteOptions {
  workspaceFor: WorkspaceResolver;
  /** Who files made by the tools belong to (the sandbox's user when the gateway runs as root). */
  owner: SandboxUser | null;
}

/** Why `at` cannot be written, or null. */
export function notWritable(tool: string, at: Located): string | null {
  if (at.root.writable) return null;
  return `${tool}: ${at.path} is in ${at.root.path}, which is read-only; write to a file under ${WORKSPACE_PATH} instead`;
}

/** Replaces `at`'s content within the workspace's limits; null when written, else the tool error's text. */
export async function replaceContent(
  tool: string,
  at: Located,
  workspace: Workspace,
  oldBytes: number | null,
  content: string,
  owner: SandboxUser | null,
): Promise<string | null> {
  const refusal = await checkWrite(workspace, oldBytes, Buffer.byteLength(content, "utf8"));
  if (refusal) return `${tool}: ${refusal}`;
  const written = await writeWhole(at, content, owner);
  if (!written.ok) return `${tool}: ${written.reason}`;
  await workspace.changed?.({ paths: [at.path] });
  return null;
}

export function createWriteTool(options: FileWriteOptions): Tool {
  return {
    spec: {
      name: WRITE,
      description:
        `Writes a file in the workspace (${WORKSPACE_PATH}), replacing it if it exists; missing folders are created. Relative paths ` +
        `start at ${WORKSPACE_PATH}. Prefer Edit to change part of an existing file. Files outside ${WORKSPACE_PATH} cannot be written.`,
      input_schema: {
        type: "object",
        properties: {
          file_path: { type: "string", description: `The file to write: absolute (${WORKSPACE_PATH}/report.md) or relative to ${WORKSPACE_PATH}.` },
          content: { type: "string", description: "The content to write to the file." },
        },
        required: ["file_path", "content"],
      },
    },
    // Writing the same content again leaves the same file.
    idempotent: true,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = parseInput(WRITE, input, raw);
      if (!parsed.ok) return parsed.output;
      const { file_path, content } = parsed.value;
      const access = await accessFor(WRITE, ctx, options.workspaceFor);
      if (!access.ok) return access.output;
      const located = await locate(file_path, access.roots, { createFolders: true, owner: options.owner });
      if (!located.ok) return fail(`${WRITE}: ${located.reason}`);
      const { at } = located;
      try {
        const readOnly = notWritable(WRITE, at);
        if (readOnly) return fail(readOnly);
        const existing = await openForReading(at);
        if (!existing.ok && !existing.missing) return fail(`${WRITE}: ${existing.reason}`);
        const oldBytes = existing.ok ? existing.info.size : null;
        if (existing.ok) await existing.handle.close();
        const problem = await replaceContent(WRITE, at, access.access.workspace, oldBytes, content, options.owner);
        if (problem) return fail(problem);
        return { content: oldBytes === null ? `File created successfully at: ${at.path}` : `The file ${at.path} has been updated successfully.` };
      } finally {
        await at.folder.close();
      }
    },
  };
}
