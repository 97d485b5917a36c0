import { parseArgs, type ParseArgsConfig } from "node:util";
import { clean } from "../admin/text.js";

// What every command-line tool does with arguments it does not know: it says what was wrong, prints its usage
// and exits 2, instead of guessing (running everything, or nothing, with exit 0).

/** Prints `problem` (when given) and the usage on stderr, and exits 2. */
export function usageError(usage: string, problem?: string): never {
  process.stderr.write(`${problem ? `${problem}\n` : ""}${usage.endsWith("\n") ? usage : `${usage}\n`}`);
  process.exit(2);
}

type Options = Record<string, { type: "string" | "boolean"; short?: string }>;
/** What parseArgs gives for `options` (none of them `multiple`). */
export type ArgumentValues<O extends Options> = { [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : string };

/**
 * The tool's arguments, strictly: an unknown option, a missing value or (unless `positionals`) a stray word is a
 * usage error; `--help` and `-h` print the usage and exit 2 as well (nothing ran).
 */
export function parseArguments<O extends Options>(
  usage: string,
  options: O,
  settings: { positionals?: boolean; args?: string[] } = {},
): { values: ArgumentValues<O>; positionals: string[] } {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: settings.args ?? process.argv.slice(2),
      allowPositionals: settings.positionals ?? false,
      strict: true,
      options: { ...options, help: { type: "boolean", short: "h" } } satisfies ParseArgsConfig["options"],
    });
  } catch (error) {
    usageError(
      usage,
      argumentProblem(
        error,
        Object.keys(options).map((name) => `--${name}`),
      ),
    );
  }
  if (parsed.values.help) usageError(usage);
  return { values: parsed.values as ArgumentValues<O>, positionals: parsed.positionals };
}

/** parseArgs's complaint in a tool's words (its own advice on quoting dashes after `--` is not for npm scripts). */
function argumentProblem(error: unknown, known: string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  switch ((error as { code?: string }).code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return unknownName("option", quoted, known);
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument "${clean(quoted)}"`;
    default:
      return clean(message);
  }
}

/** The known name closest to a misspelt one (at most two edits away), for "did you mean …?". */
export function closest(name: string, known: readonly string[]): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name ?? null;
}

/** "unknown scenario "singel-turn" (did you mean single-turn?)". */
export function unknownName(what: string, name: string, known: readonly string[]): string {
  const guess = closest(name, known);
  return `unknown ${what} "${clean(name)}"${guess ? ` (did you mean ${guess}?)` : ""}`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
