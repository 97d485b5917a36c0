import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import type { Catalog, Definition, DefinitionKind, Problem } from "./definition.js";
import { splitFrontmatter } from "./frontmatter.js";
import { compileOutputSchema } from "./json-schema.js";
import { isBinary, riskyInstructions } from "./safety.js";
import { frontmatterSchema, NAME_RULE } from "./schema.js";

export const MAX_DEFINITION_BYTES = 256 * 1024;

export interface LoadOptions {
  /** Where `env:` variables are looked up. Default process.env. */
  env?: Record<string, string | undefined>;
  /** Tool names this deployment has; whitelist entries outside it are reported. Unchecked when omitted. */
  knownTools?: readonly string[];
}

/** Reads skills/<name>/SKILL.md and agents/<name>.md (or agents/<name>/AGENT.md). A broken file is skipped, never fatal. */
export function loadCatalog(skillsDir: string, agentsDir: string, options: LoadOptions = {}): Catalog {
  const problems: Problem[] = [];
  const skills = new Map<string, Definition>();
  const agents = new Map<string, Definition>();
  for (const file of definitionFiles("skill", skillsDir, problems)) add(skills, readDefinition("skill", file, options, problems), problems);
  for (const file of definitionFiles("agent", agentsDir, problems)) add(agents, readDefinition("agent", file, options, problems), problems);
  return {
    skills,
    agents,
    problems: problems.filter((p) => p.severity === "error").map((p) => p.message),
    warnings: problems.filter((p) => p.severity === "warning").map((p) => p.message),
  };
}

/** Checks one skill folder, one agent file, or a whole skills/ or agents/ tree (for `npm run skills -- validate`). */
export function validatePath(path: string, options: LoadOptions = {}): Problem[] {
  const problems: Problem[] = [];
  const stat = statSync(path);
  if (stat.isFile()) {
    const kind: DefinitionKind = basename(path) === "SKILL.md" ? "skill" : "agent";
    readDefinition(kind, path, options, problems);
  } else if (existsSync(join(path, "SKILL.md"))) {
    readDefinition("skill", join(path, "SKILL.md"), options, problems);
  } else {
    const catalog = loadCatalog(
      existsSync(join(path, "skills")) ? join(path, "skills") : path,
      existsSync(join(path, "agents")) ? join(path, "agents") : basename(path) === "agents" ? path : join(path, "agents"),
      options,
    );
    return [
      ...catalog.problems.map((message) => ({ severity: "error" as const, message })),
      ...catalog.warnings.map((message) => ({ severity: "warning" as const, message })),
    ];
  }
  return problems;
}

function definitionFiles(kind: DefinitionKind, dir: string, problems: Problem[]): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    if (entry.startsWith(".")) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      const file = join(path, kind === "skill" ? "SKILL.md" : "AGENT.md");
      if (existsSync(file)) files.push(file);
      else if (kind === "skill") problems.push(error(path, "no SKILL.md in the folder; add one or remove the folder"));
    } else if (kind === "agent" && entry.endsWith(".md") && entry.toLowerCase() !== "readme.md") {
      files.push(path);
    }
  }
  return files;
}

function add(into: Map<string, Definition>, def: Definition | null, problems: Problem[]): void {
  if (!def) return;
  const existing = into.get(def.name);
  if (existing) {
    problems.push(error(def.source, `name "${def.name}" is already used by ${existing.source}; rename one of them`));
    return;
  }
  into.set(def.name, def);
}

function readDefinition(kind: DefinitionKind, file: string, options: LoadOptions, problems: Problem[]): Definition | null {
  const source = display(file);
  // Followed through links: a SKILL.md that is a FIFO, a device or a link to one would block or never end.
  const stat = statSync(file);
  if (!stat.isFile()) {
    problems.push(error(file, "is not a regular file (a FIFO, device or socket); a definition must be a plain Markdown file"));
    return null;
  }
  const size = stat.size;
  if (size > MAX_DEFINITION_BYTES) {
    problems.push(error(file, `the file is ${Math.ceil(size / 1024)} KB; the limit is 256 KB (move long material into references/)`));
    return null;
  }
  const bytes = readFileSync(file);
  if (isBinary(bytes)) {
    problems.push(error(file, "is not a text file; it must be UTF-8 Markdown with YAML frontmatter"));
    return null;
  }
  const split = splitFrontmatter(bytes.toString("utf8"));
  if ("error" in split) {
    problems.push(error(file, split.error));
    return null;
  }
  if (typeof split.data !== "object" || split.data === null || Array.isArray(split.data)) {
    problems.push(error(file, "frontmatter must be a set of fields (name: …, description: …), not a list or a single value"));
    return null;
  }
  const parsed = frontmatterSchema.safeParse(split.data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(error(file, `${fieldName(issue.path) || "frontmatter"} ${issue.message}`));
    return null;
  }
  const fm = parsed.data;
  const folder = kind === "skill" || basename(file) === "AGENT.md" ? dirname(file) : null;
  const expected = folder ? basename(folder) : basename(file, ".md");
  const nameProblem = checkName(fm.name, expected, folder ? "folder" : "file");
  if (nameProblem) {
    problems.push(error(file, nameProblem));
    return null;
  }
  if (fm.output_schema) {
    const compiled = compileOutputSchema(fm.output_schema);
    if (!compiled.ok) {
      problems.push(error(file, compiled.error.replace(/^output_schema /, "output_schema: ")));
      return null;
    }
  }
  if (split.body === "") {
    problems.push(error(file, `the body is empty; write the ${kind}'s instructions below the frontmatter`));
    return null;
  }
  const tools = fm.tools ?? fm["allowed-tools"] ?? null;
  if (tools && options.knownTools) {
    const unknown = tools.filter((t) => !options.knownTools!.includes(t));
    if (unknown.length > 0) {
      const field = fm.tools ? "tools" : "allowed-tools";
      problems.push(
        warning(file, `${field} names tools this bot does not have (${unknown.join(", ")}); they are ignored. Known: ${options.knownTools.join(", ")}`),
      );
    }
  }
  for (const risk of riskyInstructions(split.body)) problems.push(warning(file, risk));
  const env = fm.env ?? [];
  const vars = options.env ?? process.env;
  const missing = env.filter((name) => !vars[name]);
  const unavailable = missing.length ? `needs ${missing.join(", ")}, which ${missing.length > 1 ? "are" : "is"} not set` : null;
  if (unavailable) problems.push(warning(file, `${unavailable}; it is listed as unavailable until ${missing.length > 1 ? "they are" : "it is"}`));
  return {
    kind,
    name: fm.name,
    description: fm.description,
    body: split.body,
    model: fm.model ?? null,
    maxIterations: fm.max_iterations ?? null,
    tools,
    mode: fm.mode ?? "interactive",
    env,
    carryover: fm.carryover ?? false,
    requiresApproval: fm.requires_approval === true ? ["*"] : Array.isArray(fm.requires_approval) ? fm.requires_approval : [],
    outputSchema: fm.output_schema ?? null,
    license: fm.license ?? null,
    compatibility: fm.compatibility ?? null,
    metadata: fm.metadata ?? {},
    source,
    folder: folder && kind === "skill" ? resolve(folder) : null,
    unavailable,
  };
}

function checkName(name: string, expected: string, where: "folder" | "file"): string | null {
  if (name.length > 64) return `name is ${name.length} characters; the limit is 64`;
  if (!NAME_RULE.test(name)) {
    const suggestion = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
    return `name "${name}" must use only lowercase letters, digits and single hyphens, not at the start or end${
      suggestion ? ` (e.g. "${suggestion}")` : ""
    }, and equal the ${where} name`;
  }
  if (name !== expected) return `name "${name}" must equal the ${where} name "${expected}"; rename one to match the other`;
  return null;
}

/** `env[0]`, `metadata.author`: how an admin would point at the field. */
function fieldName(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i > 0 ? "." : ""}${String(p)}`)).join("");
}

function error(file: string, message: string): Problem {
  return { severity: "error", message: `${display(file)}: ${message}` };
}

function warning(file: string, message: string): Problem {
  return { severity: "warning", message: `${display(file)}: ${message}` };
}

function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}
