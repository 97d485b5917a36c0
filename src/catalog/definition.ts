export type DefinitionKind = "skill" | "agent";

/** A frontmatter value as the author wrote it: text (never a number), null, or nested lists and maps. */
export type MetadataValue = string | null | MetadataValue[] | { [key: string]: MetadataValue };

/** A validated skill or agent, ready to become a child frame. */
export interface Definition {
  kind: DefinitionKind;
  name: string;
  description: string;
  /** The markdown body: the child's system prompt. */
  body: string;
  model: string | null;
  /** `fallback_models`: models to try in order when `model` fails ([] for none); null: the gateway's MODEL_FALLBACKS. */
  fallbackModels: string[] | null;
  maxIterations: number | null;
  /** Whitelist of tool names (`tools` / `allowed-tools`); null means the defaults for the kind. */
  tools: string[] | null;
  /** What the whitelist declares that this gateway does not give it, and why (`skills -- list` shows it). */
  missingTools?: Array<{ entry: string; why: string }>;
  mode: "interactive" | "batch";
  /** Environment variables the definition needs; when one is unset it is unavailable. */
  env: string[];
  /** Tools that need the owner's approval in this definition's frames; ["*"] for all of them. */
  requiresApproval: string[];
  /** Give the child a summary of its own previous run in the chat. */
  carryover: boolean;
  /** `memory: true`: the child is shown the user's long-term memories (read-only), as main is. */
  memory: boolean;
  /** Default JSON Schema for report_back. */
  outputSchema: Record<string, unknown> | null;
  /** False with `output_schema: false`: a caller's schema is refused, the result is always plain text. */
  acceptsOutputSchema: boolean;
  license: string | null;
  compatibility: string | null;
  /** Agent Skills `metadata`, nested maps included (OpenClaw's `metadata.openclaw`), values as written. */
  metadata: Record<string, MetadataValue>;
  /** Fields from other hosts (a top-level `version`, Claude Code's `color`), as written; shown by tools, no effect. */
  extra: Record<string, MetadataValue>;
  /** The file it came from, relative to the working directory, for messages. */
  source: string;
  /** The skill's folder (absolute): read_skill_file is confined to it. Null for single-file agents. */
  folder: string | null;
  /**
   * `folder` with every symlink resolved, as it was when the definition loaded: read_skill_file refuses to read when
   * the folder resolves elsewhere later (it was swapped for a symlink). Absent for definitions built by hand.
   */
  folderRealPath?: string;
  /** Why it cannot be used right now (e.g. a missing variable); null when it can. */
  unavailable: string | null;
}

export interface Problem {
  severity: "error" | "warning";
  /** `<file>: <what is wrong and how to fix it>` */
  message: string;
}

export interface Catalog {
  /** Every loaded skill, including unavailable ones (see `available`). */
  skills: ReadonlyMap<string, Definition>;
  agents: ReadonlyMap<string, Definition>;
  /** Errors (the definition was skipped) and warnings (it loaded), one line each. */
  problems: readonly string[];
  warnings: readonly string[];
}

export const EMPTY_CATALOG: Catalog = { skills: new Map(), agents: new Map(), problems: [], warnings: [] };

/** Definitions the model may be offered. */
export function available(defs: ReadonlyMap<string, Definition>): Definition[] {
  return [...defs.values()].filter((d) => d.unavailable === null);
}
