import { z } from "zod";
import { expiredNote, namesFile, VIEW_FILE } from "../file-blocks.js";
import { fail, type Tool, type ToolOutput } from "./tool.js";

const input = z.object({ file_id: z.string().trim().min(1) });

/**
 * Shows an earlier file again (one the history now names only by a placeholder, or one a compaction folded in):
 * the file joins the history after this call's result and is shown whole at the next model calls. A frame sees
 * only files its own history names, so a child sees what reached it and nothing else of the conversation.
 */
export const viewFileTool: Tool = {
  spec: {
    name: VIEW_FILE,
    description:
      "Look at an earlier file of this conversation again (an image, a PDF, a text file) that is no longer shown to " +
      "you. Give the file id its placeholder or the conversation summary names (it starts as the note says).",
    input_schema: {
      type: "object",
      properties: { file_id: { type: "string", description: "The file's id, as the placeholder names it." } },
      required: ["file_id"],
    },
  },
  idempotent: true,
  async run(raw, ctx): Promise<ToolOutput> {
    const parsed = input.safeParse(raw);
    if (!parsed.success) return fail(`${VIEW_FILE} needs a "file_id", as the file's placeholder names it`);
    const id = parsed.data.file_id;
    if (!namesFile(ctx.frame.history, id)) return fail(`there is no file "${id}" in your conversation; use the id a file's placeholder names`);
    const file = await ctx.sessionFile(id);
    if (!file) return fail(`the file "${id}" is not stored any more (it was deleted)`);
    const { expiredAt, ...ref } = file;
    if (expiredAt !== undefined) return fail(`the file "${id}", ${expiredNote(ref)}`);
    return { content: `Here is ${ref.name} again.`, files: [ref] };
  },
};
