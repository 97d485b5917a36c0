import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Catalog, Definition, DefinitionKind, Problem } from "./definition.js";
import { display } from "./problems.js";
import { codeOf } from "./read-file.js";
import { readDefinition, type LoadOptions } from "./read-definition.js";

export { MAX_DEFINITION_BYTES, type LoadOptions } from "./read-definition.js";

/** Reads skills/<name>/SKILL.md and agents/<name>.md (or agents/<name>/AGENT.md). A broken file is skipped, never fatal. */
export function loadCatalog(skillsDir: string, agentsDir: string, options: LoadOptions = {}): Catalog {
  const problems: Problem[] = [];
  const { skills, agents } = scanCatalog(skillsDir, agentsDir, options, problems, false);
  return {
    skills,
    agents,
    problems: problems.filter((p) => p.severity === "error").map((p) => p.message),
    warnings: problems.filter((p) => p.severity === "warning").map((p) => p.message),
  };
}

/** Both trees, leniently (the gateway) or strictly (`validate`); every problem goes into `problems`. */
export function scanCatalog(skillsDir: string, agentsDir: string, options: LoadOptions, problems: Problem[], strict: boolean) {
  const skills = new Map<string, Definition>();
  const agents = new Map<string, Definition>();
  for (const file of definitionFiles("skill", skillsDir, problems, strict)) add(skills, readDefinition("skill", file, options, problems, strict), problems);
  for (const file of definitionFiles("agent", agentsDir, problems, strict)) add(agents, readDefinition("agent", file, options, problems, strict), problems);
  return { skills, agents };
}

/**
 * The SKILL.md of a folder. `skill.md` in another case is found too (`other`): hosts on case-insensitive file
 * systems and some others accept it, the spec names it SKILL.md.
 */
export function findSkillFile(dir: string): { exact: string | null; other: string | null } {
  const names = readdirSync(dir);
  const other = names.find((n) => n !== "SKILL.md" && n.toLowerCase() === "skill.md");
  return { exact: names.includes("SKILL.md") ? join(dir, "SKILL.md") : null, other: other ? join(dir, other) : null };
}

/** "no SKILL.md in <folder>", with the fix: rename a differently-cased one, or add one. */
export function missingSkillFile(dir: string, other: string | null, strict: boolean): Problem {
  if (other && !strict) {
    return {
      severity: "warning",
      message: `${display(other)}: rename this file to SKILL.md, the name the spec gives it (hosts on case-sensitive file systems look only for that); it loads as it is`,
    };
  }
  const fix = other
    ? `rename ${other.slice(dir.length + 1)} to SKILL.md (the spec's name for it)`
    : "add one (frontmatter with name and description, then the instructions) or remove the folder";
  return { severity: "error", message: `no SKILL.md in ${display(dir)}: ${fix}` };
}

/**
 * The definition files under `dir`. What cannot be looked at (a link to nothing, a folder without read permission)
 * is that entry's problem; the others load.
 */
function definitionFiles(kind: DefinitionKind, dir: string, problems: Problem[], strict: boolean): string[] {
  if (!existsSync(dir)) return [];
  const unreadable = (path: string, error: unknown) =>
    problems.push({
      severity: "error",
      message: `${display(path)}: ${codeOf(error) === "ENOENT" ? "is a symlink to something that does not exist; fix or remove it" : `cannot be read (${codeOf(error)}); fix its permissions or remove it`}`,
    });
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) return [];
    entries = readdirSync(dir).sort();
  } catch (error) {
    unreadable(dir, error);
    return [];
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.startsWith(".")) continue;
    const path = join(dir, entry);
    let found: ReturnType<typeof findSkillFile>;
    try {
      if (!statSync(path).isDirectory()) {
        if (kind === "agent" && entry.endsWith(".md") && entry.toLowerCase() !== "readme.md") files.push(path);
        continue;
      }
      if (kind === "agent") {
        if (existsSync(join(path, "AGENT.md"))) files.push(join(path, "AGENT.md"));
        continue;
      }
      found = findSkillFile(path);
    } catch (error) {
      unreadable(path, error);
      continue;
    }
    if (found.exact) files.push(found.exact);
    else {
      // A differently-cased skill.md is read either way, so `validate` reports what is inside it too.
      problems.push(missingSkillFile(path, found.other, strict));
      if (found.other) files.push(found.other);
    }
  }
  return files;
}

function add(into: Map<string, Definition>, def: Definition | null, problems: Problem[]): void {
  if (!def) return;
  const existing = into.get(def.name);
  if (existing) {
    problems.push({ severity: "error", message: `${def.source}: name "${def.name}" is already used by ${existing.source}; rename one of them` });
    return;
  }
  into.set(def.name, def);
}
