// send_file: the agent hands the user a file — text it wrote (`content`: a CSV, a script, a report) or a file it has
// (`path`: one the user sent, or one made in the workspace). The file is judged like a received one (type from its
// bytes, name sanitised, MAX_FILE_BYTES and the conversation's total), stored with this call's result, and sent
// through the outbox once that step committed: each platform's upload (src/gateway/file-delivery.ts).
import { z } from "zod";
import { describeFile } from "../../files/intake.js";
import { DEFAULT_FILE_LIMITS } from "../../files/limits.js";
import { sanitizeFilename } from "../../files/names.js";
import type { FileRefBlock } from "../../llm/types.js";
import { findSource, type SourceDeps } from "./send-file-source.js";
import { fail, type Tool, type ToolOutput } from "./tool.js";

export const SEND_FILE = "send_file";
const CAPTION_MAX = 4000;

const input = z
  .object({
    filename: z
      .string({ error: "must be the file's name, a string" })
      .trim()
      .min(1, { error: "must not be empty" })
      .max(1024, { error: "must be at most 1024 characters" }),
    content: z.string({ error: "must be the file's text, a string" }).optional(),
    path: z.string({ error: "must be a path or a file id, a string" }).trim().min(1, { error: "must not be empty" }).optional(),
    caption: z
      .string({ error: "must be a string" })
      .max(CAPTION_MAX, { error: `must be at most ${CAPTION_MAX} characters` })
      .optional(),
  })
  .refine((v) => (v.content === undefined) !== (v.path === undefined), {
    error: 'give exactly one of "content" (the text of a file you wrote) and "path" (a file you have)',
  });

export function sendFileTool(deps: SourceDeps): Tool {
  return {
    spec: {
      name: SEND_FILE,
      description:
        "Sends a file to the user in this chat, as an attachment they can open or download.\n\n" +
        "Usage:\n" +
        '- Give "content" for a file you write now (a CSV, a script, a Markdown report): the file is that text, UTF-8.\n' +
        '- Give "path" for a file you already have: a file of this conversation by its id or name (as its note shows ' +
        "it), or a file in the workspace (absolute like /workspace/out/chart.png, or relative to /workspace).\n" +
        '- Give exactly one of "content" and "path". "filename" is the name the user sees (with its extension); the ' +
        "type is read from the file's bytes, not from the name.\n" +
        '- "caption" is shown with the file. The file reaches the user after this step; do not repeat its contents in ' +
        "your reply.",
      input_schema: {
        type: "object",
        properties: {
          filename: { type: "string", description: "The name the user sees, with its extension (report.csv)." },
          content: { type: "string", description: "The file's text, when you write the file now. Not with path." },
          path: { type: "string", description: "A file you have: a conversation file's id or name, or a workspace path. Not with content." },
          caption: { type: "string", description: "A short text shown with the file." },
        },
        required: ["filename"],
        additionalProperties: false,
      },
    },
    // What the call does (store the file, queue it) is committed with its result, in one step: run again after a
    // restart, it does it once.
    idempotent: true,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = input.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return fail(`${SEND_FILE}: ${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`);
      }
      const { filename, content, path } = parsed.data;
      const caption = parsed.data.caption?.trim() || undefined;
      const limits = ctx.settings.files ?? DEFAULT_FILE_LIMITS;
      let file: FileRefBlock;
      if (content !== undefined) {
        const kept = await ctx.keepFile({ name: filename, bytes: Buffer.from(content, "utf8") });
        if (!kept.ok) return fail(`${SEND_FILE}: ${kept.reason}`);
        file = kept.file;
      } else {
        const source = await findSource(path!, limits.maxFileBytes, ctx, deps);
        if (source.kind === "error") return fail(`${SEND_FILE}: ${source.reason}`);
        if (source.kind === "stored" && sanitizeFilename(filename) === source.file.name) file = source.file;
        else {
          const bytes = source.kind === "stored" ? await source.bytes() : source.bytes;
          if (!bytes) return fail(`${SEND_FILE}: "${path}" is not stored any more (it was deleted)`);
          const kept = await ctx.keepFile({ name: filename, bytes });
          if (!kept.ok) return fail(`${SEND_FILE}: ${kept.reason}`);
          file = kept.file;
        }
      }
      ctx.sendFile(file, caption);
      return { content: `Sent ${describeFile(file)} to the chat (file id ${file.file_id}).` };
    },
  };
}
