import type { DefinitionKind, MetadataValue } from "./definition.js";
import { listing, type FileProblems } from "./problems.js";
import { CLAUDE_CODE_AGENT_FIELDS, ENV_NAME, isOwnField, SPEC_FIELDS } from "./schema.js";

// Fields other hosts put in a definition: what Switchboard takes from them, and (for `validate`) what makes a
// definition less portable to other hosts.

/** OpenClaw's runtime metadata, under its current name and the older ones its docs list as aliases. */
const OPENCLAW_KEYS = ["openclaw", "clawdbot", "clawdis"];

/**
 * Environment variables the metadata says the skill needs: OpenClaw's `metadata.openclaw.requires.env`
 * (docs.openclaw.ai/tools/skills). They join the `env:` gate. Names that are not variable names are returned apart;
 * `field` is null when the metadata lists no env.
 */
export function metadataEnv(metadata: Record<string, MetadataValue> | undefined): { env: string[]; invalid: string[]; field: string | null } {
  for (const key of OPENCLAW_KEYS) {
    const block = metadata?.[key];
    if (!isMap(block) || !Object.hasOwn(block, "requires")) continue;
    const requires = block.requires;
    // bins, config, os and the like are OpenClaw's own gates; only env has a meaning here.
    if (!isMap(requires) || !Object.hasOwn(requires, "env")) return { env: [], invalid: [], field: null };
    const env = requires.env;
    const names = typeof env === "string" ? [env] : Array.isArray(env) ? env.filter((v): v is string => typeof v === "string") : [];
    return { env: names.filter((n) => ENV_NAME.test(n)), invalid: names.filter((n) => !ENV_NAME.test(n)), field: `metadata.${key}.requires.env` };
  }
  return { env: [], invalid: [], field: null };
}

/**
 * `validate` only: fields another host would not understand. Skills are checked against the Agent Skills
 * specification, agents against Claude Code's subagent format. One warning per kind of finding.
 */
export function portabilityWarnings(kind: DefinitionKind, input: Record<string, unknown>, line: (field: string) => number | undefined, problems: FileProblems): void {
  const keys = Object.keys(input);
  const standard: readonly string[] = kind === "skill" ? SPEC_FIELDS : CLAUDE_CODE_AGENT_FIELDS;
  const format = kind === "skill" ? "Agent Skills" : "Claude Code subagent";
  const ours = keys.filter((k) => !standard.includes(k) && isOwnField(k));
  const unknown = keys.filter((k) => !standard.includes(k) && !isOwnField(k) && !(kind === "agent" && (CLAUDE_CODE_AGENT_FIELDS as readonly string[]).includes(k)));
  if (unknown.length) {
    const first = unknown[0]!;
    const example = typeof input[first] === "string" ? `${first}: ${JSON.stringify(input[first])}` : `${first}: …`;
    problems.warning(
      `${listing(unknown)} ${unknown.length > 1 ? "are not" : "is not an"} ${format} field${unknown.length > 1 ? "s" : ""}; ` +
        `Switchboard ignores ${unknown.length > 1 ? "them" : "it"}, other hosts may refuse the ${kind} (skills-ref does). ` +
        `Put values for other hosts under metadata, e.g. metadata: { ${example} }`,
      line(first),
    );
  }
  if (ours.length) {
    problems.warning(
      `${listing(ours)} ${ours.length > 1 ? `are Switchboard fields, not ${format} fields` : `is a Switchboard field, not ${format === "Agent Skills" ? "an" : "a"} ${format} field`}; ` +
        `${ours.length > 1 ? "they work" : "it works"} here, but other hosts ignore ${ours.length > 1 ? "them" : "it"} or refuse the ${kind}. ` +
        "The spec suggests metadata for host-specific settings, but Switchboard reads its own fields at the top level only: keep them in definitions meant for Switchboard",
      line(ours[0]!),
    );
  }
  const metadata = input.metadata;
  if (isMap(metadata)) {
    const nested = Object.keys(metadata).filter((k) => metadata[k] !== null && typeof metadata[k] === "object");
    if (nested.length) {
      const env = metadataEnv(metadata as Record<string, MetadataValue>).field;
      problems.warning(
        `metadata ${listing(nested.map((k) => `"${k}"`))} ${nested.length > 1 ? "hold" : "holds"} nested values; the spec's metadata maps keys to text, ` +
          `so other hosts may refuse them or turn them into text (skills-ref does). Switchboard keeps them as written${env ? ` and reads ${env} as env` : ""}`,
        line("metadata"),
      );
    }
  }
}

function isMap(value: unknown): value is Record<string, MetadataValue> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
