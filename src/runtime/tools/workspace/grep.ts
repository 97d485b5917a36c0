// Grep, as Claude Code names it: ripgrep over the workspace (or a read-only folder), with its output modes,
// context lines, file filters and head_limit.
import { z } from "zod";
import type { Tool, ToolOutput } from "../tool.js";
import { count, flag, parseInput } from "./input.js";
import { firstEntries, searchPath, type SearchToolOptions } from "./search.js";
import { WORKSPACE_PATH } from "./workspace.js";

export const GREP = "Grep";
/** Entries shown when head_limit is not given. */
export const GREP_DEFAULT_LIMIT = 250;

const input = z.object({
  pattern: z.string({ message: "must be a regular expression, a string" }).min(1, { message: "must not be empty" }),
  path: z.string({ message: "must be a file or folder path, a string" }).optional(),
  glob: z.string({ message: "must be a glob pattern, a string" }).optional(),
  type: z.string({ message: "must be a file type such as py or js, a string" }).optional(),
  output_mode: z.enum(["content", "files_with_matches", "count"], { message: 'must be "content", "files_with_matches" or "count"' }).optional(),
  "-i": flag.optional(),
  "-n": flag.optional(),
  "-A": count(0).optional(),
  "-B": count(0).optional(),
  "-C": count(0).optional(),
  head_limit: count(1).optional(),
  multiline: flag.optional(),
});

type Input = z.output<typeof input>;

function ripgrepArgs(i: Input, folder: boolean): string[] {
  const mode = i.output_mode ?? "files_with_matches";
  const args = ["--hidden", "--no-messages", "--with-filename", "--color", "never", "--max-columns", "500", "--max-columns-preview"];
  // In lines of content or counts, a NUL after the path tells it from the rest (a path may contain ":").
  if (mode !== "files_with_matches") args.push("--null");
  for (const vcs of [".git", ".svn", ".hg", ".bzr", ".jj"]) args.push("--glob", `!${vcs}`);
  if (i["-i"]) args.push("--ignore-case");
  if (i.multiline) args.push("--multiline", "--multiline-dotall");
  if (i.type) args.push(`--type=${i.type}`);
  if (i.glob && folder) args.push(`--glob=${i.glob}`);
  if (mode === "files_with_matches") args.push("--files-with-matches", "--sortr", "modified");
  if (mode === "count") args.push("--count", "--sort", "path");
  if (mode === "content") {
    args.push("--sort", "path");
    if (i["-n"] ?? true) args.push("--line-number");
    if (i["-C"] !== undefined) args.push("--context", String(i["-C"]));
    if (i["-A"] !== undefined) args.push("--after-context", String(i["-A"]));
    if (i["-B"] !== undefined) args.push("--before-context", String(i["-B"]));
  }
  // The model's values must never be read as options (--pre=sh would run a program): type and glob are glued to
  // their option; a pattern may follow --regexp on its own, which ripgrep always takes as the pattern (glued, "="
  // would not survive).
  args.push("--regexp", i.pattern);
  return args;
}

export function createGrepTool(options: SearchToolOptions): Tool {
  const maxChars = options.maxChars ?? 30_000;
  return {
    spec: {
      name: GREP,
      description:
        `Searches file contents with a regular expression (ripgrep syntax: literal braces need escaping, e.g. interface\\{\\}). ` +
        `Searches ${WORKSPACE_PATH} unless path names another file or folder. Filter files with glob ("*.py", "**/*.{ts,tsx}") or ` +
        `type ("py", "js"). output_mode: "files_with_matches" (default: the matching files, newest first), "content" (matching ` +
        `lines; -n line numbers, -A/-B/-C context) or "count" (matches per file). Shows the first ${GREP_DEFAULT_LIMIT} entries ` +
        `unless head_limit says otherwise. multiline: true lets patterns span lines (. matches newlines).`,
      input_schema: {
        type: "object",
        properties: {
          pattern: { type: "string", description: "The regular expression pattern to search for in file contents." },
          path: { type: "string", description: `File or folder to search in; omit it for ${WORKSPACE_PATH}.` },
          glob: { type: "string", description: 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}").' },
          type: { type: "string", description: "File type to search (ripgrep --type): js, py, rust, go, java, md, …" },
          output_mode: {
            type: "string",
            enum: ["content", "files_with_matches", "count"],
            description: 'What to show: "content" (matching lines), "files_with_matches" (file paths, the default) or "count" (matches per file).',
          },
          "-i": { type: "boolean", description: "Case insensitive search." },
          "-n": { type: "boolean", description: 'Show line numbers (output_mode "content"; default true).' },
          "-A": { type: "number", description: 'Lines to show after each match (output_mode "content").' },
          "-B": { type: "number", description: 'Lines to show before each match (output_mode "content").' },
          "-C": { type: "number", description: 'Lines to show before and after each match (output_mode "content").' },
          head_limit: { type: "number", description: `Show only the first N lines or entries (default ${GREP_DEFAULT_LIMIT}).` },
          multiline: { type: "boolean", description: "Let patterns span lines; . matches newlines (default false)." },
        },
        required: ["pattern"],
      },
    },
    idempotent: true,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = parseInput(GREP, input, raw);
      if (!parsed.ok) return parsed.output;
      const i = parsed.value;
      const mode = i.output_mode ?? "files_with_matches";
      const searched = await searchPath(GREP, ctx, options, i.path, (folder) => ripgrepArgs(i, folder));
      if (!searched.ok) return searched.output;
      const { result, target, folder } = searched;
      // In a folder search paths are relative to the folder.
      const named = (path: string) => (folder ? `${target === "/" ? "" : target}/${path}` : path);
      let entries: string[];
      if (mode === "files_with_matches") {
        entries = result.stdout.split("\n").filter(Boolean).map(named);
      } else {
        entries = result.stdout
          .split("\n")
          .filter((l) => l !== "")
          .map((line) => {
            const nul = line.indexOf("\0");
            return nul === -1 ? line : `${named(line.slice(0, nul))}:${line.slice(nul + 1)}`;
          });
      }
      if (entries.length === 0) return { content: mode === "files_with_matches" ? "No files found" : "No matches found" };
      const limit = i.head_limit ?? GREP_DEFAULT_LIMIT;
      const { text, shown } = firstEntries(entries, limit, maxChars);
      const cut = shown < entries.length || result.truncated;
      const note = cut
        ? `\n[showing the first ${shown} of ${entries.length}${result.truncated ? "+" : ""} ${mode === "files_with_matches" ? "files" : "lines"}; ` +
          `narrow the pattern, path or glob${i.head_limit === undefined ? ", or set head_limit" : ""}]`
        : "";
      if (mode === "files_with_matches") return { content: `Found ${entries.length} file${entries.length === 1 ? "" : "s"}\n${text}${note}` };
      if (mode === "count") {
        const total = entries.reduce((sum, e) => sum + (Number(e.slice(e.lastIndexOf(":") + 1)) || 0), 0);
        return { content: `${text}${note}\n\nFound ${total} total occurrence${total === 1 ? "" : "s"} across ${entries.length} file${entries.length === 1 ? "" : "s"}.` };
      }
      return { content: `${text}${note}` };
    },
  };
}
