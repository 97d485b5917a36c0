import { realpathSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { Definition, DefinitionKind, MetadataValue, Problem } from "./definition.js";
import { parseFrontmatter, splitFrontmatter } from "./frontmatter.js";
import { metadataEnv, portabilityWarnings } from "./host-fields.js";
import { outputSchemaProblem, type SchemaCompiler } from "./json-schema.js";
import { isKnownModel, MODEL_CHOICES } from "./models.js";
import { display, FileProblems } from "./problems.js";
import { readRegularFile } from "./read-file.js";
import { isBinary, riskyInstructions } from "./safety.js";
import { frontmatterSchema, isOwnField, NAME_RULE, schemaInput, type Frontmatter } from "./schema.js";
import { resolveTools, type MissingTool } from "./tool-names.js";
import { isMcpEntry } from "./tool-patterns.js";

export const MAX_DEFINITION_BYTES = 256 * 1024;

export interface LoadOptions {
  /** Where `env:` variables are looked up. Default process.env. */
  env?: Record<string, string | undefined>;
  /** Tool names this deployment has; whitelist entries outside it are reported. Unchecked when omitted. */
  knownTools?: readonly string[];
  /** Tools this gateway has but that are switched off here, each with how to switch it on (for messages). */
  disabledTools?: Readonly<Record<string, string>>;
  /**
   * Compiles output_schemas here, in this thread (`npm run skills -- validate`, which has no event loop to keep free).
   * Without it only the cheap checks run (limits, meta-schema); the gateway compiles on its schema worker.
   */
  compiler?: SchemaCompiler;
  /** The MCP servers configured here: whitelist entries naming their tools are kept (see tool-names.ts). */
  mcpServers?: readonly string[];
}

/**
 * Reads one definition and reports every problem it has at once. Lenient (the running gateway): what other hosts
 * accept loads with a warning. Strict (`validate`): the spec's rules are errors and portability is warned about.
 */
export function readDefinition(kind: DefinitionKind, file: string, options: LoadOptions, problems: Problem[], strict = false): Definition | null {
  const p = new FileProblems(file, problems);
  const text = readText(file, p);
  if (text === null) return null;
  const split = splitFrontmatter(text);
  if (!split.ok) {
    p.error(split.error.message, split.error.line);
    return null;
  }
  const yaml = parseFrontmatter(split.yaml, split.yamlLine);
  for (const r of yaml.ok ? yaml.value.repairs : yaml.repairs) {
    p.warning(
      `${r.field}: the value has ": " in it, which YAML reads as the start of another field; it was read as text. Put it in quotes to make this warning go away: ${r.field}: ${r.quoted}`,
      r.line,
    );
  }
  const checkBody = () => {
    if (split.body === "") p.error(`the body is empty; write the ${kind}'s instructions below the frontmatter`);
    for (const risk of riskyInstructions(split.body)) p.warning(risk.message, risk.line + split.bodyLine - 1);
  };
  if (!yaml.ok) {
    for (const e of yaml.errors) p.error(e.message, e.line, e.column);
    checkBody();
    return null;
  }
  const { typed, authored, fieldLines } = yaml.value;
  if (!isRecord(typed) || !isRecord(authored)) {
    p.error("frontmatter must be a set of fields (name: …, description: …), not a list or a single value", split.yamlLine);
    checkBody();
    return null;
  }
  const line = (field: string) => fieldLines.get(field);
  const input = schemaInput(typed, authored);
  const parsed = frontmatterSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) p.error(`${fieldName(issue.path) || "frontmatter"} ${issue.message}`, line(String(issue.path[0] ?? "")));
  }
  // These checks read the input directly, so a file with several mistakes gets them all reported at once.
  const folder = kind === "skill" || basename(file) === "AGENT.md" ? dirname(file) : null;
  if (typeof input.name === "string") checkName(input.name, kind, folder ? basename(folder) : basename(file, ".md"), folder !== null, strict, p, line("name"));
  checkLength("description", input.description, 1024, strict, p, line("description"));
  checkLength("compatibility", input.compatibility, 500, strict, p, line("compatibility"));
  if (isRecord(input.output_schema)) {
    const compiled = options.compiler?.compile(input.output_schema);
    const problem = compiled ? (compiled.ok ? null : compiled.error) : outputSchemaProblem(input.output_schema);
    if (problem) p.error(problem.replace(/^output_schema:? /, "output_schema: "), line("output_schema"));
  }
  if (strict) portabilityWarnings(kind, input, line, p);
  if (!parsed.success) {
    checkBody();
    return null;
  }
  const fm = parsed.data;
  const { tools, missing: missingTools } = whitelist(kind, fm, options, p, line);
  let model = fm.model ?? null;
  if (model !== null && !isKnownModel(model)) {
    p.warning(`model "${model}" is not a model this gateway knows (${MODEL_CHOICES}); the ${kind} uses the default (the caller's model) instead`, line("model"));
    model = null;
  }
  const fallbackModels = fallbacks(kind, fm.fallback_models, p, line("fallback_models"));
  const env = requiredEnv(fm, p, line);
  checkBody();
  if (p.failed) return null;
  const missing = env.filter((name) => !(options.env ?? process.env)[name]);
  const unavailable = missing.length ? `needs ${missing.join(", ")}, which ${missing.length > 1 ? "are" : "is"} not set` : null;
  if (unavailable) p.warning(`${unavailable}; it is listed as unavailable until ${missing.length > 1 ? "they are" : "it is"}`);
  return {
    kind,
    name: fm.name,
    description: fm.description,
    body: split.body,
    model,
    fallbackModels,
    maxIterations: fm.max_iterations ?? null,
    tools,
    ...(missingTools.length > 0 ? { missingTools } : {}),
    mode: fm.mode ?? "interactive",
    env,
    carryover: fm.carryover ?? false,
    memory: fm.memory ?? false,
    requiresApproval: fm.requires_approval === true ? ["*"] : Array.isArray(fm.requires_approval) ? fm.requires_approval : [],
    outputSchema: fm.output_schema === false ? null : (fm.output_schema ?? null),
    acceptsOutputSchema: fm.output_schema !== false,
    license: fm.license ?? null,
    compatibility: fm.compatibility ?? null,
    metadata: fm.metadata ?? {},
    extra: Object.fromEntries(Object.entries(input).filter(([key]) => !isOwnField(key))) as Record<string, MetadataValue>,
    source: display(file),
    folder: folder && kind === "skill" ? resolve(folder) : null,
    ...(folder && kind === "skill" ? realPathOf(folder) : {}),
    unavailable,
  };
}

/** `fallback_models` as written, less the names this gateway does not know (each warned about). */
function fallbacks(kind: DefinitionKind, names: string[] | undefined, p: FileProblems, at: number | undefined): string[] | null {
  if (names === undefined) return null;
  return names.filter((name) => {
    if (name !== "inherit" && isKnownModel(name)) return true;
    p.warning(`fallback_models: "${name}" is not a model this gateway knows (${MODEL_CHOICES.replace("inherit, ", "")}); the ${kind} goes without it`, at);
    return false;
  });
}

function realPathOf(folder: string): { folderRealPath?: string } {
  try {
    return { folderRealPath: realpathSync(folder) };
  } catch {
    return {};
  }
}

function readText(file: string, p: FileProblems): string | null {
  // Followed through links: a SKILL.md that is a FIFO, a device or a link to one would block or never end.
  const read = readRegularFile(file, MAX_DEFINITION_BYTES, "256 KB (move long material into references/)");
  if (!read.ok) {
    p.error(read.problem);
    return null;
  }
  const { bytes } = read;
  if (isBinary(bytes)) {
    p.error("is not a text file; it must be UTF-8 Markdown with YAML frontmatter");
    return null;
  }
  return bytes.toString("utf8");
}

/** Lowercase letters and digits joined by single hyphens or dots: what the loader accepts with a warning. */
const DOTTED_NAME = /^[a-z0-9]+(?:[-.][a-z0-9]+)*$/;

function checkName(name: string, kind: DefinitionKind, expected: string, inFolder: boolean, strict: boolean, p: FileProblems, line?: number): void {
  if (/[^\x00-\x7f]/.test(name)) {
    p.error(
      `name "${name}" must use only the letters a-z, digits and single hyphens: the model types the name to call the ${kind}, and letters of other scripts can look the same (Cyrillic "а", Latin "a")`,
      line,
    );
  } else if (!NAME_RULE.test(name) && !strict && DOTTED_NAME.test(name)) {
    // Real collections name agents after versions ("powershell-5.1-expert"); a dot is harmless here, so it loads.
    p.warning(
      `name "${name}" has a "." (the spec allows only letters, digits and hyphens); it loads as "${name}". Use "${name.replaceAll(".", "-")}" for other hosts`,
      line,
    );
  } else if (!NAME_RULE.test(name)) {
    const suggestion = name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "");
    p.error(`name "${name}" must use only lowercase letters, digits and single hyphens, not at the start or end${suggestion ? ` (e.g. "${suggestion}")` : ""}`, line);
  }
  if (name.length > 64)
    p.rule(strict, `name is ${name.length} characters; the limit is 64${strict ? "" : " (it loads; shorten it for hosts that enforce the limit)"}`, line);
  if (name === expected) return;
  const where = inFolder ? "folder" : "file";
  if (kind === "agent") {
    // Claude Code identifies a subagent by this field; its file name carries no meaning there.
    p.warning(`name "${name}" differs from the ${where} name "${expected}"; the agent is called "${name}". Rename the ${where} to match if you want them to agree`, line);
  } else if (strict) {
    p.error(`name "${name}" must equal the folder name "${expected}"; rename one to match the other`, line);
  } else {
    p.warning(`name "${name}" differs from the folder name "${expected}"; it loads as "${name}". Rename the folder or the name to match (the spec requires it)`, line);
  }
}

function checkLength(field: string, value: unknown, limit: number, strict: boolean, p: FileProblems, line?: number): void {
  if (typeof value !== "string" || value.trim().length <= limit) return;
  const length = value.trim().length;
  p.rule(strict, `${field} is ${length} characters; the limit is ${limit}${strict ? "" : " (it loads as it is; shorten it for hosts that enforce the limit)"}`, line);
}

/** `tools` / `allowed-tools` in this gateway's names, narrowed by Claude Code's `disallowedTools`. */
function whitelist(
  kind: DefinitionKind,
  fm: Frontmatter,
  options: LoadOptions,
  p: FileProblems,
  line: (f: string) => number | undefined,
): { tools: string[] | null; missing: MissingTool[] } {
  const ctx = { kind, known: options.knownTools, disabled: options.disabledTools, mcpServers: options.mcpServers };
  const field = fm.tools !== undefined ? "tools" : fm["allowed-tools"] !== undefined ? "allowed-tools" : null;
  let tools: string[] | null = null;
  let missing: MissingTool[] = [];
  if (field) {
    const resolved = resolveTools(field, field === "tools" ? fm.tools! : fm["allowed-tools"]!, ctx);
    if (resolved.warning) p.warning(resolved.warning, line(field));
    tools = resolved.tools;
    missing = resolved.missing;
  }
  if (fm.disallowedTools?.length) {
    const denied = resolveTools("disallowedTools", fm.disallowedTools, { kind }).tools;
    const base = tools ?? options.knownTools;
    // MCP tools are patterns here (mcp__*): a denied one is taken out of them by an exclusion, `!mcp__…`.
    const exclusions = base?.some(isMcpEntry) ? denied.filter((d) => isMcpEntry(d) && !d.startsWith("!")).map((d) => `!${d}`) : [];
    if (base) tools = [...base.filter((t) => !denied.includes(t)), ...exclusions];
    else p.warning("disallowedTools cannot be applied without the gateway's tool list; list the allowed tools in tools instead", line("disallowedTools"));
  }
  return { tools, missing };
}

/** `env:` plus what the metadata says the definition needs (OpenClaw's requires.env). */
function requiredEnv(fm: Frontmatter, p: FileProblems, line: (f: string) => number | undefined): string[] {
  const fromMetadata = metadataEnv(fm.metadata);
  if (fromMetadata.invalid.length) {
    p.warning(
      `${fromMetadata.field} names ${fromMetadata.invalid.map((n) => JSON.stringify(n)).join(", ")}, which ${fromMetadata.invalid.length > 1 ? "are not environment variable names; they are" : "is not an environment variable name; it is"} ignored`,
      line("metadata"),
    );
  }
  return [...new Set([...(fm.env ?? []), ...fromMetadata.env])];
}

/** `env[0]`, `metadata.author`: how an admin would point at the field. */
function fieldName(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i > 0 ? "." : ""}${String(p)}`)).join("");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
