// Read, as Claude Code names it: a text file with numbered lines (cat -n), 2000 lines from `offset` by default,
// long lines cut, and the whole result capped, saying where to read on.
import { z } from "zod";
import { fail, type Tool, type ToolOutput } from "../tool.js";
import { openForReading, readLines } from "./files.js";
import { count, parseInput } from "./input.js";
import { locate } from "./paths.js";
import { accessFor, numbered, WORKSPACE_PATH, type WorkspaceResolver } from "./workspace.js";

export const READ = "Read";
export const DEFAULT_READ_LINES = 2000;
export const MAX_LINE_CHARS = 2000;

const input = z.object({
  file_path: z.string({ message: "must be the file's path, a string" }).min(1, { message: "must not be empty" }),
  offset: count(0).optional(),
  limit: count(1).optional(),
});

export interface ReadOptions {
  workspaceFor: WorkspaceResolver;
  /** Characters of numbered text returned at most; the rest is left for a later call with `offset`. */
  maxChars?: number;
}

export function createReadTool(options: ReadOptions): Tool {
  const maxChars = options.maxChars ?? 100_000;
  return {
    spec: {
      name: READ,
      description:
        `Reads a text file from the workspace (${WORKSPACE_PATH}) or a read-only folder such as your skill's. Relative paths start at ` +
        `${WORKSPACE_PATH}. Returns the lines numbered like cat -n (number, tab, line); the numbers are not part of the file. ` +
        `Reads up to ${DEFAULT_READ_LINES} lines from the start; for long files pass offset (the line number to start at) and limit ` +
        `(how many lines). Lines longer than ${MAX_LINE_CHARS} characters are cut.`,
      input_schema: {
        type: "object",
        properties: {
          file_path: { type: "string", description: `The file to read: absolute (${WORKSPACE_PATH}/data.csv) or relative to ${WORKSPACE_PATH}.` },
          offset: { type: "number", description: "The line number to start reading from. Only provide if the file is too large to read at once." },
          limit: { type: "number", description: "The number of lines to read. Only provide if the file is too large to read at once." },
        },
        required: ["file_path"],
      },
    },
    idempotent: true,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = parseInput(READ, input, raw);
      if (!parsed.ok) return parsed.output;
      const { file_path, offset, limit } = parsed.value;
      const access = await accessFor(READ, ctx, options.workspaceFor);
      if (!access.ok) return access.output;
      const located = await locate(file_path, access.roots);
      if (!located.ok) return fail(`${READ}: ${located.reason}`);
      const { at } = located;
      try {
        const opened = await openForReading(at);
        if (!opened.ok) return fail(`${READ}: ${opened.missing ? `file does not exist: ${at.path}` : opened.reason}`);
        const first = Math.max(offset ?? 1, 1);
        let window: Awaited<ReturnType<typeof readLines>>;
        try {
          window = await readLines(opened.handle, first, limit ?? DEFAULT_READ_LINES);
        } finally {
          await opened.handle.close();
        }
        if (window.binary) return fail(`${READ}: ${at.path} is a binary file; Read shows text files only`);
        if (window.empty) return { content: `(${at.path} exists but is empty)` };
        if (window.lines.length === 0) return { content: `(${at.path} has ${window.total} lines; offset ${first} is past its end)` };
        return { content: capped(window.lines, window.total, at.path, maxChars) };
      } finally {
        await at.folder.close();
      }
    },
  };
}

function capped(lines: Array<[number, string]>, total: number | null, path: string, maxChars: number): string {
  let used = 0;
  let shown = 0;
  for (const line of lines) {
    const size = numbered([line]).length + 1;
    if (shown > 0 && used + size > maxChars) break;
    used += size;
    shown++;
  }
  const text = numbered(lines.slice(0, shown));
  const lastShown = lines[shown - 1]![0];
  if (shown < lines.length) {
    return `${text}\n[cut after line ${lastShown}: the result reached ${maxChars} characters; read on with offset=${lastShown + 1}]`;
  }
  if (total === null || total > lastShown) return `${text}\n[${path} continues after line ${lastShown}; read on with offset=${lastShown + 1}]`;
  return text;
}
