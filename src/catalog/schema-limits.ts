// JSON Schemas come from models (output_schema on use_skill, use_agent, call_agent) and from skill files, and the
// values checked against them come from models too. Validation cost grows with the schema's size once every $ref is
// followed, with its nesting, and with the value's size, so each is capped here before Ajv sees anything. These
// checks walk each JSON value at most once and stop at the first limit, so they cost microseconds even on hostile
// input. See docs/admin/security.md ("Skill folders and the model as attackers") for the numbers.

/** The schema as JSON text. */
export const MAX_SCHEMA_BYTES = 32 * 1024;
/** Subschemas once every $ref is followed where it is used: what a nested anyOf over shared definitions multiplies. */
export const MAX_SCHEMA_NODES = 1000;
/** Objects and arrays inside objects and arrays, in the schema and in a value checked against it. */
export const MAX_JSON_DEPTH = 32;
/** Characters in one `pattern` or `patternProperties` key. */
export const MAX_PATTERN_CHARS = 1000;
/** A report_back value as JSON text. */
export const MAX_VALUE_BYTES = 64 * 1024;

/** Keywords whose value is one subschema, a list of them, or a map of names to them (draft-07 and 2020-12). */
const ONE = new Set([
  "additionalItems",
  "additionalProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
]);
const LIST = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
const MAP = new Set(["properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies"]);
/** Dynamic scoping and anchors would make a $ref mean something only known while validating; refused. */
const REFUSED: Record<string, string> = {
  $dynamicRef: "dynamic references",
  $recursiveRef: "dynamic references",
  $dynamicAnchor: "dynamic anchors",
  $recursiveAnchor: "dynamic anchors",
  $anchor: "anchors (use a $ref to #/$defs/<name> instead)",
};

export interface SchemaInspection {
  /** Null when the schema is within the limits, else one sentence naming where it is not and what to do. */
  problem: string | null;
  /** Every `pattern` and `patternProperties` key, with the JSON pointer where it is, for the pattern engine to check. */
  patterns: Array<{ pattern: string; at: string }>;
}

export function inspectSchema(schema: unknown): SchemaInspection {
  const shape = jsonShapeProblem(schema, MAX_SCHEMA_BYTES, "output_schema");
  if (shape) return { problem: shape, patterns: [] };
  const walk = new SchemaWalk(schema);
  return { problem: walk.problem(), patterns: [...walk.patterns.entries()].map(([at, pattern]) => ({ pattern, at })) };
}

/** Null when a report_back value is within the limits, else one sentence saying which one it broke. */
export function valueLimitProblem(value: unknown): string | null {
  return jsonShapeProblem(value, MAX_VALUE_BYTES, "the result");
}

/**
 * Plain JSON (no cycles, no shared parts: a YAML alias is copied, so sharing multiplies the size), nested at most
 * MAX_JSON_DEPTH deep and at most `maxBytes` as text. The walk stops as soon as the byte budget is spent, so a value
 * that shares one big part a million times costs no more than one that is merely too big.
 */
function jsonShapeProblem(value: unknown, maxBytes: number, what: string): string | null {
  let bytes = 0;
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value, depth: 0, path: "" }];
  while (stack.length > 0) {
    const { value: v, depth, path } = stack.pop()!;
    // About the length of the value's JSON text: each value, plus a comma; each key, quoted, plus a colon.
    if (v === null || typeof v === "boolean") bytes += 6;
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) return `${what} has a number that JSON cannot hold at ${path || "/"}`;
      bytes += String(v).length + 1;
    } else if (typeof v === "string") bytes += v.length + 3;
    else if (typeof v === "object") {
      if (depth >= MAX_JSON_DEPTH) return `${what} is nested more than ${MAX_JSON_DEPTH} levels deep at ${path || "/"}; flatten it`;
      bytes += 3;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length && bytes <= maxBytes; i++) stack.push({ value: v[i], depth: depth + 1, path: `${path}/${i}` });
      } else {
        for (const key in v) {
          if (!Object.hasOwn(v, key)) continue;
          bytes += key.length + 3;
          if (bytes > maxBytes) break;
          stack.push({ value: (v as Record<string, unknown>)[key], depth: depth + 1, path: `${path}/${escapePointer(key)}` });
        }
      }
    } else return `${what} has a ${typeof v} at ${path || "/"}, which is not JSON`;
    if (bytes > maxBytes) return `${what} is larger than ${maxBytes / 1024} KiB as JSON; the limit keeps checking it cheap, so make it smaller`;
  }
  return null;
}

/** Follows every subschema and every $ref once, counting how many subschemas validation will visit. */
class SchemaWalk {
  /** Subschemas under each $ref target, once followed; `null` while it is being counted (to see recursion). */
  private readonly refSizes = new Map<string, number | null>();
  private failure: string | null = null;
  /** Pattern by where it is; a pattern under a shared definition is listed once. */
  readonly patterns = new Map<string, string>();

  constructor(private readonly root: unknown) {}

  problem(): string | null {
    const total = this.count(this.root, "", 0);
    if (this.failure) return this.failure;
    if (total > MAX_SCHEMA_NODES) {
      return `output_schema has ${total >= LARGE ? "far more than" : total} subschemas once every $ref is followed; the limit is ${MAX_SCHEMA_NODES}. Share less through $ref, or describe fewer alternatives`;
    }
    return null;
  }

  /** Subschemas at and below `schema` (at `pointer`), $refs followed; saturates at LARGE so nothing overflows. */
  private count(schema: unknown, pointer: string, depth: number): number {
    if (this.failure || typeof schema !== "object" || schema === null || Array.isArray(schema)) return 1;
    if (depth > MAX_JSON_DEPTH) return this.fail(`output_schema is nested more than ${MAX_JSON_DEPTH} levels deep at ${pointer}`);
    const node = schema as Record<string, unknown>;
    let total = 1;
    for (const [keyword, value] of Object.entries(node)) {
      const at = `${pointer}/${escapePointer(keyword)}`;
      if (Object.hasOwn(REFUSED, keyword)) return this.fail(`output_schema uses ${keyword} at ${at}: ${REFUSED[keyword]} are not supported here`);
      if (keyword === "$id" && pointer !== "") return this.fail(`output_schema has an $id at ${at}; only the top level may have one, so that every $ref means one place`);
      if (keyword === "$ref") total += this.followRef(value, at, depth);
      else if (keyword === "pattern") this.checkPattern(value, at);
      else if (keyword === "items" && Array.isArray(value)) value.forEach((s, i) => (total += this.count(s, `${at}/${i}`, depth + 1)));
      else if (keyword === "items" || ONE.has(keyword)) total += this.count(value, at, depth + 1);
      else if (LIST.has(keyword) && Array.isArray(value)) value.forEach((s, i) => (total += this.count(s, `${at}/${i}`, depth + 1)));
      else if (MAP.has(keyword) && isRecord(value)) {
        for (const [name, sub] of Object.entries(value)) {
          if (keyword === "patternProperties") this.checkPattern(name, `${at}/${escapePointer(name)}`);
          // `dependencies` mixes subschemas with lists of property names; only the former are schemas.
          if (!Array.isArray(sub)) total += this.count(sub, `${at}/${escapePointer(name)}`, depth + 1);
        }
      }
      if (total > LARGE) total = LARGE;
      if (this.failure) return total;
    }
    return total;
  }

  private followRef(ref: unknown, at: string, depth: number): number {
    if (typeof ref !== "string" || !(ref === "#" || ref.startsWith("#/"))) {
      return this.fail(`output_schema has $ref ${JSON.stringify(ref)} at ${at}; only references inside the schema (#/$defs/<name>, #/definitions/<name>) are supported`);
    }
    const known = this.refSizes.get(ref);
    if (known === null)
      return this.fail(
        `output_schema refers to itself: $ref "${ref}" at ${at} leads back to where it is used; a result must have a fixed shape, so spell out the levels you need`,
      );
    if (known !== undefined) return known;
    const target = resolvePointer(this.root, ref.slice(1));
    if (target === undefined) return this.fail(`output_schema has $ref "${ref}" at ${at}, which points at nothing in the schema`);
    this.refSizes.set(ref, null);
    const size = this.count(target, ref.slice(1), depth + 1);
    this.refSizes.set(ref, size);
    return size;
  }

  private checkPattern(pattern: unknown, at: string): void {
    if (typeof pattern !== "string") return;
    if (pattern.length > MAX_PATTERN_CHARS) this.fail(`output_schema has a pattern of ${pattern.length} characters at ${at}; the limit is ${MAX_PATTERN_CHARS}`);
    else this.patterns.set(at, pattern);
  }

  private fail(message: string): number {
    this.failure ??= message;
    return LARGE;
  }
}

const LARGE = 1_000_000_000;

/** The value at a JSON pointer ("" is the whole document), or undefined when there is none. */
function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  let at: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    let part: string;
    try {
      part = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (typeof at !== "object" || at === null || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function escapePointer(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
