import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import { isBinary } from "../../catalog/safety.js";
import { fail, type Tool, type ToolOutput } from "./tool.js";

export const READ_SKILL_FILE = "read_skill_file";
const MAX_BYTES = 256 * 1024;

/**
 * Progressive disclosure: a skill reads the other files of its own folder (references/, assets/,
 * scripts/) when it needs them. Confined to the folder: no absolute paths, no `..`, no symlinks out.
 * Scripts are only read, never run.
 */
export const readSkillFileTool: Tool = {
  spec: {
    name: READ_SKILL_FILE,
    description:
      "Read a file from your skill's own folder, e.g. references/guide.md. Pass a folder path such as \".\" or \"references\" to list its files.",
    input_schema: {
      type: "object",
      properties: { path: { type: "string", description: "Path relative to your skill folder." } },
      required: ["path"],
    },
  },
  idempotent: true,
  async run(input, ctx): Promise<ToolOutput> {
    const def = ctx.frame.definitionName ? ctx.catalog.skills.get(ctx.frame.definitionName) : undefined;
    if (!def?.folder) return fail(`${ctx.frame.agentName} has no skill folder to read from`);
    const requested = typeof input.path === "string" ? input.path.trim() : "";
    if (requested === "") return fail('read_skill_file needs a "path" such as references/guide.md');
    if (isAbsolute(requested) || normalize(requested).split(/[\\/]/).includes("..")) {
      return fail(`"${requested}" is outside the skill folder; use a path relative to it without ".."`);
    }
    let root: string;
    let target: string;
    try {
      root = realpathSync(def.folder);
      target = realpathSync(join(root, requested));
    } catch {
      return fail(`no file "${requested}" in the skill folder; list it with path "."`);
    }
    if (target !== root && !target.startsWith(root + sep)) {
      return fail(`"${requested}" leads outside the skill folder (a symlink); it cannot be read`);
    }
    if (statSync(target).isDirectory()) {
      const entries = readdirSync(target)
        .filter((e) => !e.startsWith("."))
        .map((e) => (lstatSync(join(target, e)).isDirectory() ? `${e}/` : e));
      return { content: entries.length ? entries.join("\n") : "(empty folder)" };
    }
    const size = statSync(target).size;
    if (size > MAX_BYTES) return fail(`"${requested}" is ${Math.ceil(size / 1024)} KB; files over 256 KB are not read`);
    const bytes = readFileSync(target);
    if (isBinary(bytes)) return fail(`"${relative(root, target)}" is not a text file`);
    return { content: bytes.toString("utf8") };
  },
};
