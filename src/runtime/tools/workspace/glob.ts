// Glob, as Claude Code names it: files whose path matches a glob pattern, newest first, at most 100.
import { z } from "zod";
import { fail, type Tool, type ToolOutput } from "../tool.js";
import { parseInput } from "./input.js";
import { firstEntries, omitted, searchPath, type SearchToolOptions } from "./search.js";
import { WORKSPACE_PATH } from "./workspace.js";

export const GLOB = "Glob";
export const GLOB_LIMIT = 100;

const input = z.object({
  pattern: z.string({ message: "must be a glob pattern, a string" }).min(1, { message: "must not be empty" }),
  path: z.string({ message: "must be a folder's path, a string" }).optional(),
});

const GLOB_CHARS = /[*?[{]/;

/**
 * Splits an absolute pattern (/workspace/src/**\/*.ts) into the folder to search and the pattern inside it, and
 * anchors a pattern without "/" to that folder: as in a shell, *.py matches the folder's own files, not every
 * .py below it (ripgrep's globs follow .gitignore, where a bare *.py matches at any depth).
 */
export function splitPattern(pattern: string, path: string | undefined): { folder: string | undefined; pattern: string } {
  let folder = path;
  let rest = pattern.replace(/^\.\//, "");
  if (rest.startsWith("/")) {
    const parts = rest.split("/");
    const at = parts.findIndex((p) => GLOB_CHARS.test(p));
    const cut = at === -1 ? parts.length - 1 : at;
    folder = parts.slice(0, cut).join("/") || "/";
    rest = parts.slice(cut).join("/");
  }
  return { folder, pattern: rest.includes("/") ? rest : `/${rest}` };
}

export function createGlobTool(options: SearchToolOptions): Tool {
  const maxChars = options.maxChars ?? 30_000;
  return {
    spec: {
      name: GLOB,
      description:
        `Finds files by name with a glob pattern such as "**/*.py" or "src/*.ts" (* stays inside one folder, ** crosses folders, ` +
        `{a,b} alternatives). Searches ${WORKSPACE_PATH} unless path names another folder. Returns matching paths, newest first, ` +
        `at most ${GLOB_LIMIT}.`,
      input_schema: {
        type: "object",
        properties: {
          pattern: { type: "string", description: "The glob pattern to match files against." },
          path: {
            type: "string",
            description: `The folder to search in; omit it for ${WORKSPACE_PATH} (do not write "undefined" or "null").`,
          },
        },
        required: ["pattern"],
      },
    },
    idempotent: true,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = parseInput(GLOB, input, raw);
      if (!parsed.ok) return parsed.output;
      const split = splitPattern(parsed.value.pattern, omitted(parsed.value.path) ? undefined : parsed.value.path);
      if (split.pattern === "/") return fail(`${GLOB}: the pattern names no files; add one such as *.md`);
      const searched = await searchPath(
        GLOB,
        ctx,
        options,
        split.folder,
        () => [
          "--files",
          "--hidden",
          "--no-ignore",
          "--no-messages",
          // Glued to its option, so a pattern that starts with "-" is never read as one.
          `--glob=${split.pattern}`,
          "--glob",
          "!.git",
          "--sortr",
          "modified",
        ],
        true,
      );
      if (!searched.ok) return searched.output;
      const base = searched.target === "/" ? "" : searched.target;
      const files = searched.result.stdout
        .split("\n")
        .filter(Boolean)
        .map((f) => `${base}/${f}`);
      if (files.length === 0) return { content: "No files found" };
      const { text, shown } = firstEntries(files, GLOB_LIMIT, maxChars);
      if (shown === files.length && !searched.result.truncated) return { content: text };
      return {
        content: `${text}\n(Results are truncated: ${shown} of ${files.length}${searched.result.truncated ? "+" : ""} shown. Use a more specific path or pattern.)`,
      };
    },
  };
}
