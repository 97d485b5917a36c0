// Edit, as Claude Code names it: an exact string replacement. old_string must occur exactly once unless
// replace_all; an empty old_string creates a file that does not exist yet (or fills an empty one).
import { z } from "zod";
import { fail, type Tool, type ToolOutput } from "../tool.js";
import { openForReading, readWhole } from "./files.js";
import { flag, parseInput } from "./input.js";
import { locate } from "./paths.js";
import { accessFor, numbered, WORKSPACE_PATH } from "./workspace.js";
import { notWritable, replaceContent, type FileWriteOptions } from "./write.js";

export const EDIT = "Edit";
const MAX_EDIT_BYTES = 16 * 1024 * 1024;

const input = z.object({
  file_path: z.string({ message: "must be the file's path, a string" }).min(1, { message: "must not be empty" }),
  old_string: z.string({ message: "must be the text to replace, a string" }),
  new_string: z.string({ message: "must be the replacement text, a string" }),
  replace_all: flag.optional(),
});

/** old_string as an error message quotes it: whole when short, else its start. */
const quoted = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}… (${text.length} characters)` : text);

/** Lines around the first change, numbered, so the model sees the result without reading the file again. */
function snippet(content: string, at: number, length: number): string {
  const lines = content.split("\n");
  const firstLine = content.slice(0, at).split("\n").length;
  const lastLine = firstLine + content.slice(at, at + length).split("\n").length - 1;
  const from = Math.max(1, firstLine - 4);
  const to = Math.min(lines.length, lastLine + 4);
  return numbered(lines.slice(from - 1, to).map((text, i) => [from + i, text] as const));
}

export function createEditTool(options: FileWriteOptions): Tool {
  return {
    spec: {
      name: EDIT,
      description:
        `Replaces text in a file in the workspace (${WORKSPACE_PATH}). old_string must match the file exactly (whitespace and ` +
        `indentation included, without Read's line-number prefix) and occur exactly once, unless replace_all is true, which ` +
        `replaces every occurrence. An empty old_string creates a file that does not exist yet.`,
      input_schema: {
        type: "object",
        properties: {
          file_path: { type: "string", description: `The file to change: absolute or relative to ${WORKSPACE_PATH}.` },
          old_string: { type: "string", description: "The text to replace." },
          new_string: { type: "string", description: "The text to replace it with (must be different from old_string)." },
          replace_all: { type: "boolean", description: "Replace all occurrences of old_string (default false)." },
        },
        required: ["file_path", "old_string", "new_string"],
      },
    },
    // Run twice, a replace_all of "a" by "aa" doubles again: not safe to repeat after a restart.
    idempotent: false,
    interrupted: `${EDIT}: this edit was started before a restart and was not made again; Read the file to see whether it was made.`,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = parseInput(EDIT, input, raw);
      if (!parsed.ok) return parsed.output;
      const { file_path, old_string, new_string } = parsed.value;
      const replaceAll = parsed.value.replace_all ?? false;
      if (old_string === new_string) return fail(`${EDIT}: no changes to make: old_string and new_string are exactly the same.`);
      const access = await accessFor(EDIT, ctx, options.workspaceFor);
      if (!access.ok) return access.output;
      const located = await locate(file_path, access.roots, { createFolders: old_string === "", owner: options.owner });
      if (!located.ok) return fail(`${EDIT}: ${located.reason}`);
      const { at } = located;
      try {
        const readOnly = notWritable(EDIT, at);
        if (readOnly) return fail(readOnly);
        const workspace = access.access.workspace;
        const opened = await openForReading(at);
        if (!opened.ok) {
          if (!opened.missing) return fail(`${EDIT}: ${opened.reason}`);
          if (old_string !== "") return fail(`${EDIT}: file does not exist: ${at.path}. Use an empty old_string to create it, or Write.`);
          const problem = await replaceContent(EDIT, at, workspace, null, new_string, options.owner);
          return problem ? fail(problem) : { content: `File created successfully at: ${at.path}` };
        }
        let read: Awaited<ReturnType<typeof readWhole>>;
        try {
          read = await readWhole(opened.handle, opened.info, at.path, MAX_EDIT_BYTES);
        } finally {
          await opened.handle.close();
        }
        if (!read.ok) return fail(`${EDIT}: ${read.reason}`);
        const content = read.text;
        let updated: string;
        let changedAt: number;
        if (old_string === "") {
          if (content !== "") return fail(`${EDIT}: cannot create ${at.path}: the file already exists. Give the text to replace in old_string.`);
          updated = new_string;
          changedAt = 0;
        } else {
          const matches = content.split(old_string).length - 1;
          if (matches === 0) return fail(`${EDIT}: string to replace not found in ${at.path}.\nString: ${quoted(old_string)}`);
          if (matches > 1 && !replaceAll) {
            return fail(
              `${EDIT}: found ${matches} matches of the string to replace in ${at.path}, but replace_all is false. To replace all ` +
                `occurrences, set replace_all to true. To replace only one, give more surrounding context so it is unique.\nString: ${quoted(old_string)}`,
            );
          }
          changedAt = content.indexOf(old_string);
          updated = replaceAll ? content.split(old_string).join(new_string) : content.slice(0, changedAt) + new_string + content.slice(changedAt + old_string.length);
          if (replaceAll && matches > 1) {
            const problem = await replaceContent(EDIT, at, workspace, opened.info.size, updated, options.owner);
            return problem ? fail(problem) : { content: `The file ${at.path} has been updated. All ${matches} occurrences of old_string were replaced with new_string.` };
          }
        }
        const problem = await replaceContent(EDIT, at, workspace, opened.info.size, updated, options.owner);
        if (problem) return fail(problem);
        return { content: `The file ${at.path} has been updated successfully. The edited part now reads:\n${snippet(updated, changedAt, new_string.length)}` };
      } finally {
        await at.folder.close();
      }
    },
  };
}
