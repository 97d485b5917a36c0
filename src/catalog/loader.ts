import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import type { Catalog, Definition, DefinitionKind } from "./definition.js";
import { splitFrontmatter } from "./frontmatter.js";

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const toolList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (typeof v === "string" ? v.split(/[,\s]+/) : v).map((t) => t.trim()).filter(Boolean));

const frontmatterSchema = z.object({
  name: z.string({ error: "is required (a lowercase name such as research-notes)" }),
  description: z
    .string({ error: "is required: one or two sentences saying what it does and when to use it" })
    .trim()
    .min(1, { error: "must not be empty: say what it does and when to use it" })
    .max(1024, { error: "must be at most 1024 characters" }),
  model: z.string().trim().min(1).optional(),
  max_iterations: z.number({ error: "must be a whole number such as 25" }).int().min(1).max(1000).optional(),
  tools: toolList.optional(),
  "allowed-tools": toolList.optional(),
  mode: z.enum(["interactive", "batch"], { error: 'must be "interactive" or "batch"' }).optional(),
});

/** Reads skills/<name>/SKILL.md and agents/<name>.md (or agents/<name>/AGENT.md); a broken file is skipped, not fatal. */
export function loadCatalog(skillsDir: string, agentsDir: string): Catalog {
  const problems: string[] = [];
  const skills = new Map<string, Definition>();
  const agents = new Map<string, Definition>();

  for (const entry of listDir(skillsDir)) {
    const folder = join(skillsDir, entry);
    if (!isDir(folder)) continue;
    const file = join(folder, "SKILL.md");
    if (!existsSync(file)) {
      problems.push(`${display(folder)}: no SKILL.md in the folder; add one or remove the folder`);
      continue;
    }
    add(skills, readDefinition("skill", file, entry, problems), problems);
  }
  for (const entry of listDir(agentsDir)) {
    const path = join(agentsDir, entry);
    if (isDir(path)) {
      const file = join(path, "AGENT.md");
      if (existsSync(file)) add(agents, readDefinition("agent", file, entry, problems), problems);
    } else if (entry.endsWith(".md") && entry.toLowerCase() !== "readme.md") {
      add(agents, readDefinition("agent", path, entry.slice(0, -3), problems), problems);
    }
  }
  return { skills, agents, problems };
}

function add(into: Map<string, Definition>, def: Definition | null, problems: string[]): void {
  if (!def) return;
  const existing = into.get(def.name);
  if (existing) {
    problems.push(`${def.source}: name "${def.name}" is already used by ${existing.source}; rename one of them`);
    return;
  }
  into.set(def.name, def);
}

function readDefinition(kind: DefinitionKind, file: string, expectedName: string, problems: string[]): Definition | null {
  const source = display(file);
  const split = splitFrontmatter(readFileSync(file, "utf8"));
  if ("error" in split) {
    problems.push(`${source}: ${split.error}`);
    return null;
  }
  const parsed = frontmatterSchema.safeParse(split.data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path.join(".") || "frontmatter";
      problems.push(`${source}: ${field} ${issue.message}`);
    }
    return null;
  }
  const fm = parsed.data;
  if (!NAME.test(fm.name) || fm.name.length > 64 || fm.name !== expectedName) {
    problems.push(
      `${source}: name "${fm.name}" must be lowercase letters, digits and hyphens (at most 64) and equal the ${
        kind === "skill" ? "folder" : "file"
      } name "${expectedName}"`,
    );
    return null;
  }
  if (split.body === "") {
    problems.push(`${source}: the body is empty; write the ${kind}'s instructions below the frontmatter`);
    return null;
  }
  return {
    kind,
    name: fm.name,
    description: fm.description,
    body: split.body,
    model: fm.model ?? null,
    maxIterations: fm.max_iterations ?? null,
    tools: fm.tools ?? fm["allowed-tools"] ?? null,
    mode: fm.mode ?? "interactive",
    source,
  };
}

function listDir(dir: string): string[] {
  return existsSync(dir) && isDir(dir) ? readdirSync(dir).sort() : [];
}

function isDir(path: string): boolean {
  return statSync(path).isDirectory();
}

function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}
