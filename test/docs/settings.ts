// What the configuration docs get wrong about the settings src/config.ts reads: a setting missing from the table
// or from .env.example, a row or line for a setting that does not exist, a setting in two rows, and a default the
// table states differently from the schema's. A documented default is compared by reading it back through the
// schema: `200MB` is right when the schema, given "200MB", gives the value it gives when the variable is unset.
import { cells, tablesWithHeader } from "./markdown.js";

export const TABLE_HEADER = ["variable", "default", "meaning"];

export interface Schema {
  settings: readonly string[];
  /** The configuration from an environment that sets only `env` (throws on an invalid value). */
  load(env: Record<string, string>): Record<string, unknown>;
  /** Defaults applied outside the schema (the SDK's, the provider's): the schema leaves them unset. */
  outside: Readonly<Record<string, string>>;
}

/** Nothing set: no value, an empty text, list, map or set, or an object of such (an empty allowlist). */
export function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (value instanceof Map || value instanceof Set) return value.size === 0;
  if (typeof value === "object") return Object.values(value).every(isEmpty);
  return false;
}

/** The default cell's part for each name: `10` / `20` for two names is one each; a cell without parts is everyone's. */
function defaultParts(cell: string, names: number): string[] {
  if (names > 1) {
    const parts = cell.split(/\s+[/,]\s+(?=(?:[^`]*`[^`]*`)*[^`]*$)/);
    if (parts.length === names) return parts;
  }
  return Array<string>(names).fill(cell);
}

const show = (value: unknown): string => (value instanceof Map ? `Map(${JSON.stringify([...value])})` : (JSON.stringify(value) ?? "undefined"));

function defaultProblem(name: string, part: string, schema: Schema, defaults: Record<string, unknown>): string | null {
  const stated = /`([^`]+)`/.exec(part)?.[1];
  const actual = defaults[name];
  if (name in schema.outside) {
    if (actual !== undefined) return `${name}: the schema has a default now (${show(actual)}); drop it from the defaults applied outside the schema`;
    return stated === schema.outside[name]
      ? null
      : `${name}: the table says the default is ${stated === undefined ? `"${part}"` : `\`${stated}\``}, but it is \`${schema.outside[name]}\``;
  }
  if (stated === undefined) return isEmpty(actual) ? null : `${name}: the table states no default ("${part}"), but the schema's is ${show(actual)}`;
  let read: unknown;
  try {
    read = schema.load({ [name]: stated })[name];
  } catch (error) {
    return `${name}: the table's default \`${stated}\` is not a valid value: ${error instanceof Error ? error.message.trim() : String(error)}`;
  }
  return show(read) === show(actual) ? null : `${name}: the table's default \`${stated}\` reads as ${show(read)}, but the schema's default is ${show(actual)}`;
}

/** Every disagreement between the settings and the configuration page's table, one line each. */
export function tableProblems(page: string, schema: Schema): string[] {
  const { tables, rows } = tablesWithHeader(page, TABLE_HEADER);
  if (tables !== 1) return [`the configuration page must have exactly one table headed | ${TABLE_HEADER.join(" | ")} |, it has ${tables}`];
  const problems: string[] = [];
  const defaults = schema.load({});
  const rowOf = new Map<string, number>();
  rows.forEach((row, index) => {
    const [variables = "", defaultCell = "", meaning = ""] = row;
    const names = [...variables.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
    if (names.length === 0) problems.push(`row ${index + 1} names no variable: | ${row.join(" | ")} |`);
    if (meaning === "") problems.push(`row ${index + 1} (${names.join(", ")}) has no meaning`);
    const parts = defaultParts(defaultCell, names.length);
    names.forEach((name, i) => {
      if (rowOf.has(name)) problems.push(`${name} is in rows ${rowOf.get(name)! + 1} and ${index + 1}: one row per setting`);
      rowOf.set(name, index);
      if (!schema.settings.includes(name)) return void problems.push(`${name} is in the table but src/config.ts has no such setting`);
      if (parts[i]!.trim() === "") return void problems.push(`${name}: the default cell is empty (write — for none)`);
      const problem = defaultProblem(name, parts[i]!, schema, defaults);
      if (problem) problems.push(problem);
    });
  });
  for (const name of schema.settings) if (!rowOf.has(name)) problems.push(`${name} is a setting (src/config.ts) but has no row in the table`);
  return problems;
}

/** Every disagreement between the settings and .env.example's `NAME=` lines. */
export function exampleProblems(example: string, settings: readonly string[]): string[] {
  const lines = [...example.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
  return [
    ...settings.filter((name) => !lines.includes(name)).map((name) => `${name} is a setting (src/config.ts) but has no ${name}= line in .env.example`),
    ...lines.filter((name) => !settings.includes(name)).map((name) => `.env.example has ${name}= but src/config.ts has no such setting`),
    ...lines.filter((name, i) => lines.indexOf(name) !== i).map((name) => `.env.example has ${name}= twice`),
  ];
}

/** Pages other than the configuration page that hold a copy of a settings row (a first cell naming a setting). */
export function copiedRows(pages: ReadonlyMap<string, string>, settings: readonly string[]): string[] {
  const copies: string[] = [];
  for (const [page, text] of pages) {
    for (const line of text.split("\n")) {
      if (!line.trimStart().startsWith("|")) continue;
      const first = cells(line)[0] ?? "";
      const names = [...first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
      if (names.some((name) => settings.includes(name))) copies.push(`${page}: ${first}`);
    }
  }
  return copies;
}
