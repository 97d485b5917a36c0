import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { DefinitionKind, Problem } from "./definition.js";
import { findSkillFile, missingSkillFile, scanCatalog } from "./loader.js";
import { SchemaCompiler } from "./json-schema.js";
import { display } from "./problems.js";
import { MAX_DEFINITION_BYTES, readDefinition, type LoadOptions } from "./read-definition.js";
import { readRegularFile } from "./read-file.js";

/**
 * `npm run skills -- validate [path]`: strict, for an admin's CI. The spec's rules are errors (the gateway only warns
 * about some of them), and fields another host would not understand are warned about. The path is one skill folder,
 * one agent or SKILL.md file, or a tree (skills/, agents/, or a folder holding them).
 */
export function validatePath(path: string, loadOptions: LoadOptions = {}): Problem[] {
  const problems: Problem[] = [];
  const options = { compiler: new SchemaCompiler(), ...loadOptions };
  if (!existsSync(path)) return [{ severity: "error", message: `no such file or folder: ${display(path)}` }];
  if (statSync(path).isFile()) {
    const name = basename(path);
    const kind: DefinitionKind = name.toLowerCase() === "skill.md" ? "skill" : "agent";
    if (kind === "skill" && name !== "SKILL.md") {
      problems.push({
        severity: "error",
        message: `${display(path)}: rename this file to SKILL.md (the spec's name for it; hosts on case-sensitive file systems look only for that)`,
      });
    }
    readDefinition(kind, path, options, problems, true);
    return problems;
  }
  const skill = findSkillFile(path);
  if (skill.exact) {
    readDefinition("skill", skill.exact, options, problems, true);
  } else if (skill.other) {
    problems.push(missingSkillFile(path, skill.other, true));
    readDefinition("skill", skill.other, options, problems, true);
  } else if (isTree(path)) {
    const agentFilesHere = basename(path) === "agents" || hasAgentFiles(path);
    scanCatalog(
      // An agents/ folder is not also a folder of skills (its entries would be looked at, and reported, twice).
      existsSync(join(path, "skills")) || basename(path) === "agents" ? join(path, "skills") : path,
      existsSync(join(path, "agents")) ? join(path, "agents") : agentFilesHere ? path : join(path, "agents"),
      options,
      problems,
      true,
    );
  } else {
    // A skill folder without its SKILL.md (e.g. only references/): not a tree of skills whose subfolders are broken.
    problems.push({
      severity: "error",
      message: `no SKILL.md in ${display(path)}: a skill folder needs one (frontmatter with name and description, then the instructions); to check a whole tree, pass its skills/ or agents/ folder`,
    });
  }
  return problems;
}

/** A folder of definitions rather than one skill: it is named skills/ or agents/, holds them, or holds skill folders. */
function isTree(path: string): boolean {
  if (["skills", "agents"].includes(basename(path))) return true;
  if (existsSync(join(path, "skills")) || existsSync(join(path, "agents")) || hasAgentFiles(path)) return true;
  return readdirSync(path).some((entry) => {
    const child = join(path, entry);
    if (entry.startsWith(".") || !quietly(() => statSync(child).isDirectory())) return false;
    return quietly(() => readdirSync(child).some((n) => n.toLowerCase() === "skill.md" || n === "AGENT.md"));
  });
}

/** A look that fails (a link to nothing, no permission) counts as "no": the loader then reports that entry itself. */
function quietly(look: () => boolean): boolean {
  try {
    return look();
  } catch {
    return false;
  }
}

/** Markdown files that start with frontmatter: agent files (a skill's own notes, like reference.md, do not). */
function hasAgentFiles(path: string): boolean {
  return readdirSync(path).some((entry) => {
    if (!entry.endsWith(".md") || entry.toLowerCase() === "readme.md") return false;
    const file = join(path, entry);
    // Read as the loader reads: a FIFO named like an agent file must not block the command.
    const read = readRegularFile(file, MAX_DEFINITION_BYTES, "");
    return (
      read.ok &&
      read.bytes
        .toString("utf8", 0, 8)
        .replace(/^\uFEFF/, "")
        .startsWith("---")
    );
  });
}
