export type DefinitionKind = "skill" | "agent";

/** A validated skill or agent, ready to become a child frame. */
export interface Definition {
  kind: DefinitionKind;
  name: string;
  description: string;
  /** The markdown body: the child's system prompt. */
  body: string;
  model: string | null;
  maxIterations: number | null;
  /** Whitelist of tool names; null means the defaults for the kind. */
  tools: string[] | null;
  mode: "interactive" | "batch";
  /** The file it came from, relative to the working directory, for messages. */
  source: string;
}

export interface Catalog {
  skills: ReadonlyMap<string, Definition>;
  agents: ReadonlyMap<string, Definition>;
  /** One line per skipped definition, naming the file, the field and the fix. */
  problems: readonly string[];
}

export const EMPTY_CATALOG: Catalog = { skills: new Map(), agents: new Map(), problems: [] };
