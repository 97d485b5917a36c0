import { z } from "zod";
import type { MetadataValue } from "./definition.js";
import { splitToolList } from "./tool-names.js";

// Frontmatter of a SKILL.md (Agent Skills) or an agent file (Claude Code subagents), plus Switchboard's
// optional fields. Unknown fields from other hosts are allowed, so copied folders load without edits.
// Lengths (name ≤ 64, description ≤ 1024, compatibility ≤ 500) and the name's folder are checked by the
// loader, which warns where `validate` refuses.

const toolList = z
  .union([z.string(), z.array(z.string())], { error: 'must be a list of tool names, or one string like "use_agent read_skill_file"' })
  .transform((v) => (typeof v === "string" ? [v] : v).flatMap(splitToolList));

export const NAME_RULE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** An environment variable name such as GITHUB_TOKEN. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The fields the Agent Skills specification defines. */
export const SPEC_FIELDS = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"] as const;
/** Claude Code subagent fields (code.claude.com/docs/en/sub-agents). */
export const CLAUDE_CODE_AGENT_FIELDS = [
  "name",
  "description",
  "tools",
  "disallowedTools",
  "model",
  "permissionMode",
  "maxTurns",
  "skills",
  "mcpServers",
  "hooks",
  "memory",
  "background",
  "effort",
  "isolation",
  "color",
  "initialPrompt",
] as const;
/** Switchboard's own fields. */
export const SWITCHBOARD_FIELDS = [
  "tools",
  "model",
  "fallback_models",
  "max_iterations",
  "mode",
  "env",
  "output_schema",
  "carryover",
  "requires_approval",
  "memory",
] as const;

export const frontmatterSchema = z
  .object({
    name: z.string({ error: (i) => (i.input === undefined ? "is required (lowercase letters, digits and hyphens, e.g. trip-planner)" : "must be a string") }),
    description: z
      .string({ error: (i) => (i.input === undefined ? "is required: say what it does and when to use it (at most 1024 characters)" : "must be a string") })
      .trim()
      .min(1, { error: "must not be empty: say what it does and when to use it" }),
    license: z.string({ error: "must be a string such as MIT or the name of a bundled license file" }).optional(),
    compatibility: z.string({ error: "must be a string describing what the skill needs" }).min(1, { error: "must not be empty; remove the field instead" }).optional(),
    metadata: z
      .record(z.string(), z.unknown(), { error: "must be a map of keys to text values, e.g. author: ana" })
      .transform((v) => v as Record<string, MetadataValue>)
      .optional(),
    "allowed-tools": toolList.optional(),
    tools: toolList.optional(),
    disallowedTools: toolList.optional(),
    model: z
      .string({ error: "must be a model name such as sonnet, haiku, opus, inherit or a model id" })
      .trim()
      .min(1, { error: "must not be empty; remove it to inherit the caller's model" })
      .optional(),
    // Tried in order when `model` fails (overloaded, rate limited, down); [] for none. Unset: MODEL_FALLBACKS.
    fallback_models: z
      .union([z.string(), z.array(z.string())], { error: "must be a list of model names, e.g. [haiku, claude-sonnet-4-5], or [] for none" })
      .transform((v) => (typeof v === "string" ? v.split(",") : v).map((m) => m.trim()).filter(Boolean))
      .optional(),
    max_iterations: z
      .number({ error: "must be a whole number such as 25" })
      .int({ error: "must be a whole number such as 25" })
      .min(1, { error: "must be at least 1" })
      .max(1000, { error: "must be at most 1000" })
      .optional(),
    mode: z.enum(["interactive", "batch"], { error: 'must be "interactive" (takes over the chat) or "batch" (runs on its own)' }).optional(),
    env: z
      .array(z.string().regex(ENV_NAME, { error: "must be an environment variable name such as GITHUB_TOKEN" }), {
        error: "must be a list of environment variable names, e.g. [GITHUB_TOKEN]",
      })
      .optional(),
    carryover: z.boolean({ error: "must be true or false" }).optional(),
    memory: z.boolean({ error: "must be true or false" }).optional(),
    requires_approval: z.union([z.boolean(), toolList], { error: "must be true (every tool) or a list of tool names" }).optional(),
    // false: the definition returns plain text and refuses a caller's schema (use_skill/use_agent/call_agent say so).
    output_schema: z
      .union([z.literal(false), z.record(z.string(), z.unknown())], {
        error: "must be a JSON Schema object (type: object, properties: …), or false to refuse the schema a caller passes",
      })
      .optional(),
  })
  .passthrough();

export type Frontmatter = z.output<typeof frontmatterSchema>;

/** Fields whose scalars keep the text the author wrote (`version: 1.0` is "1.0", `name: 123` is "123"). */
const TEXT_FIELDS = new Set(["name", "description", "license", "compatibility", "metadata", "model"]);

/**
 * The object the schema checks: text fields as the author wrote them, Switchboard's typed fields (numbers,
 * booleans, output_schema) as YAML types them, and empty optional fields (`license:`) left out.
 */
export function schemaInput(typed: Record<string, unknown>, authored: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(typed)) {
    const value = TEXT_FIELDS.has(key) || !isOwnField(key) ? authored[key] : typed[key];
    if (value === null && key !== "name" && key !== "description") continue;
    Object.defineProperty(input, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return input;
}

/** Fields Switchboard reads itself; everything else is kept as the definition's `extra`. */
export function isOwnField(key: string): boolean {
  return (SPEC_FIELDS as readonly string[]).includes(key) || (SWITCHBOARD_FIELDS as readonly string[]).includes(key) || key === "disallowedTools";
}
