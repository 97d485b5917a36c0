import { z } from "zod";

// Frontmatter of a SKILL.md (Agent Skills) or an agent file (Claude Code subagents), plus Switchboard's
// optional fields. Unknown fields from other hosts are allowed, so copied folders load without edits.

const toolList = z
  .union([z.string(), z.array(z.string())], { error: 'must be a list of tool names, or one string like "use_agent read_skill_file"' })
  .transform((v) => (typeof v === "string" ? v.split(/[,\s]+/) : v).map((t) => t.trim()).filter(Boolean));

export const NAME_RULE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const frontmatterSchema = z
  .object({
    name: z.string({ error: (i) => (i.input === undefined ? "is required (lowercase letters, digits and hyphens, e.g. trip-planner)" : "must be a string") }),
    description: z
      .string({ error: (i) => (i.input === undefined ? "is required: say what it does and when to use it (at most 1024 characters)" : "must be a string") })
      .trim()
      .min(1, { error: "must not be empty: say what it does and when to use it" })
      .max(1024, { error: (i) => `is ${String((i.input as string).length)} characters; the limit is 1024` }),
    license: z.string({ error: "must be a string such as MIT or the name of a bundled license file" }).optional(),
    compatibility: z
      .string({ error: "must be a string describing what the skill needs" })
      .min(1, { error: "must not be empty; remove the field instead" })
      .max(500, { error: (i) => `is ${String((i.input as string).length)} characters; the limit is 500` })
      .optional(),
    metadata: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String), {
        error: "must be a map of keys to text values, e.g. author: ana",
      })
      .optional(),
    "allowed-tools": toolList.optional(),
    tools: toolList.optional(),
    model: z.string({ error: "must be a model name such as sonnet, haiku, opus, inherit or a model id" }).trim().min(1, { error: "must not be empty; remove it to inherit the caller's model" }).optional(),
    max_iterations: z
      .number({ error: "must be a whole number such as 25" })
      .int({ error: "must be a whole number such as 25" })
      .min(1, { error: "must be at least 1" })
      .max(1000, { error: "must be at most 1000" })
      .optional(),
    mode: z.enum(["interactive", "batch"], { error: 'must be "interactive" (takes over the chat) or "batch" (runs on its own)' }).optional(),
    env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "must be an environment variable name such as GITHUB_TOKEN" }), {
        error: "must be a list of environment variable names, e.g. [GITHUB_TOKEN]",
      })
      .optional(),
    carryover: z.boolean({ error: "must be true or false" }).optional(),
    requires_approval: z
      .union([z.boolean(), toolList], { error: "must be true (every tool) or a list of tool names" })
      .optional(),
    output_schema: z.record(z.string(), z.unknown(), { error: "must be a JSON Schema object (type: object, properties: …)" }).optional(),
  })
  .passthrough();

export type Frontmatter = z.output<typeof frontmatterSchema>;
