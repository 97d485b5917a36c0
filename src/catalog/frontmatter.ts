import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type YAMLError } from "yaml";
import { quoteYaml, repairColonValues, type ColonRepair } from "./yaml-repair.js";

/** A problem found while reading the frontmatter; `line` (and `column`) count from the top of the file. */
export interface Located {
  line?: number;
  column?: number;
  message: string;
}

/** The file split in two: the YAML text and the Markdown body, with where each starts in the file. */
export type Split = { ok: true; yaml: string; yamlLine: number; body: string; bodyLine: number } | { ok: false; error: Located };

/**
 * Splits `---\n<yaml>\n---\n<body>`. YAML only (the `yaml` package, which never evaluates code,
 * unlike gray-matter's `---js`).
 */
export function splitFrontmatter(source: string): Split {
  const lines = source.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (!/^---[ \t]*$/.test(lines[0] ?? "")) {
    return { ok: false, error: { line: 1, message: "missing YAML frontmatter: the file must start with a line '---', the fields, and a closing '---'" } };
  }
  const close = lines.findIndex((line, i) => i > 0 && /^---[ \t]*$/.test(line));
  if (close < 0) {
    return {
      ok: false,
      error: { line: 1, message: "the frontmatter has no closing '---': add a line '---' after the last field, before the instructions" },
    };
  }
  const bodyLines = lines.slice(close + 1);
  const first = bodyLines.findIndex((line) => line.trim() !== "");
  return {
    ok: true,
    yaml: lines.slice(1, close).join("\n"),
    yamlLine: 2,
    body: bodyLines.join("\n").trim(),
    bodyLine: close + 2 + Math.max(first, 0),
  };
}

export interface Frontmatter {
  /** Values as YAML types them (numbers, booleans): for Switchboard's typed fields and output_schema. */
  typed: unknown;
  /** The same values with every scalar as the author wrote it (`1.0` stays "1.0", `123` is "123"; null stays null). */
  authored: unknown;
  /** The file line of each top-level field. */
  fieldLines: ReadonlyMap<string, number>;
  /** Values with an unquoted ": " that were read as text; the caller warns about each. */
  repairs: ColonRepair[];
}

/**
 * Parses the frontmatter YAML. Real files often have an unquoted ": " inside a value (`description: Triggers on: x`),
 * which YAML rejects; like other Agent Skills hosts we retry with such a value quoted and report it.
 */
export function parseFrontmatter(yaml: string, firstLine: number): { ok: true; value: Frontmatter } | { ok: false; errors: Located[]; repairs: ColonRepair[] } {
  if (yaml.length > MAX_FRONTMATTER_CHARS) {
    const kb = Math.ceil(yaml.length / 1024);
    return {
      ok: false,
      errors: [
        {
          line: firstLine,
          message: `the frontmatter is ${kb} KB; the limit is ${MAX_FRONTMATTER_CHARS / 1024} KB. Keep it to the fields and move long text into the body`,
        },
      ],
      repairs: [],
    };
  }
  let text = yaml;
  let parsed = parse(text);
  const repairs: ColonRepair[] = [];
  for (let pass = 0; pass < MAX_REPAIR_PASSES && parsed.doc.errors.length > 0; pass++) {
    const flagged = new Set(parsed.doc.errors.map((e) => parsed.counter.linePos(e.pos[0]).line - 1));
    const repaired = repairColonValues(text.split("\n"), flagged);
    if (repaired.repairs.length === 0) break;
    repairs.push(...repaired.repairs);
    text = repaired.lines.join("\n");
    parsed = parse(text);
  }
  const at = (repair: ColonRepair): ColonRepair => ({ ...repair, line: repair.line + firstLine });
  if (parsed.doc.errors.length > 0) {
    const lines = text.split("\n");
    const errors = parsed.doc.errors.slice(0, MAX_ERRORS_SHOWN).map((e) => describeYamlError(e, parsed.counter, lines, firstLine));
    const more = parsed.doc.errors.length - errors.length;
    if (more > 0) errors.push({ message: `frontmatter has ${more} more YAML error${more > 1 ? "s" : ""} after these; fix these first` });
    return { ok: false, errors, repairs: repairs.map(at) };
  }
  const { doc, counter } = parsed;
  const twice = duplicateKeys(doc, counter, firstLine);
  if (twice.length > 0) return { ok: false, errors: twice, repairs: repairs.map(at) };
  const fieldLines = new Map<string, number>();
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : null;
      if (key !== null && pair.key && (pair.key as Node).range) fieldLines.set(key, counter.linePos((pair.key as Node).range![0]).line + firstLine - 1);
    }
  }
  let typed: unknown;
  let written: unknown;
  try {
    typed = doc.toJS({ maxAliasCount: 100 }) ?? {};
    written = authored(doc.contents, doc, { left: MAX_NODES, open: new Set() }) ?? {};
  } catch (error) {
    // An alias bomb (a few lines of anchors and aliases that expand to millions of values) or an alias inside itself.
    const why = error instanceof AliasError ? error.message : "its YAML aliases (*name) expand to too much";
    return {
      ok: false,
      errors: [{ line: firstLine, message: `frontmatter cannot be read: ${why}; write the values out instead of using aliases` }],
      repairs: repairs.map(at),
    };
  }
  return { ok: true, value: { typed, authored: written, fieldLines, repairs: repairs.map(at) } };
}

/** Frontmatter is a few fields; past this it is something else (and every YAML parse of it costs more). */
export const MAX_FRONTMATTER_CHARS = 16 * 1024;
/** Each pass quotes the values it can and parses again. */
const MAX_REPAIR_PASSES = 10;
/** Errors described one by one (each costs a look back through the text); the rest are counted. */
const MAX_ERRORS_SHOWN = 10;
/** Values in the frontmatter once aliases are expanded (the `yaml` package bounds its own expansion the same way). */
const MAX_NODES = 10_000;

class AliasError extends Error {}

function parse(text: string): { doc: Document; counter: LineCounter } {
  const counter = new LineCounter();
  // Each YAML error is an Error whose stack trace nobody reads, and a hostile file can have thousands: capturing
  // them was most of the cost. The limit is restored before anything else runs (this is synchronous).
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    // The package's own duplicate-key check compares every pair of keys; duplicateKeys does it in one pass.
    const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false, lineCounter: counter });
    return { doc, counter };
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** Duplicate keys are an error: which of two descriptions would the author mean? One error per repeated key. */
function duplicateKeys(doc: Document, counter: LineCounter, firstLine: number): Located[] {
  const errors: Located[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Map<string, number>();
      for (const pair of map.items) {
        if (!isScalar(pair.key) || errors.length >= MAX_ERRORS_SHOWN) continue;
        const key = String(pair.key.value);
        const line = pair.key.range ? counter.linePos(pair.key.range[0]).line + firstLine - 1 : firstLine;
        const first = seen.get(key);
        if (first === undefined) seen.set(key, line);
        else errors.push({ line, message: `frontmatter has the field "${key}" twice (first on line ${first}); keep one of them` });
      }
    },
  });
  return errors;
}

/** The document with scalars as written. `budget` bounds alias expansion; `open` holds the nodes being read, for cycles. */
function authored(node: unknown, doc: Document, budget: { left: number; open: Set<unknown> }): unknown {
  if (--budget.left < 0) throw new AliasError(`it has more than ${MAX_NODES} values once its aliases (*name) are expanded`);
  if (isMap(node) || isSeq(node)) {
    if (budget.open.has(node)) throw new AliasError("an alias (*name) refers to a value that contains it, so the value never ends");
    budget.open.add(node);
    try {
      if (isSeq(node)) return node.items.map((item) => authored(item, doc, budget));
      const out: Record<string, unknown> = {};
      for (const pair of node.items) {
        const key = authored(pair.key, doc, budget);
        Object.defineProperty(out, String(key), { value: authored(pair.value, doc, budget), enumerable: true, writable: true, configurable: true });
      }
      return out;
    } finally {
      budget.open.delete(node);
    }
  }
  if (isScalar(node)) {
    if (node.value === null || node.value === undefined) return null;
    if (typeof node.value === "string") return node.value;
    return node.source ?? String(node.value);
  }
  if (node && typeof node === "object" && "resolve" in node && typeof node.resolve === "function") {
    return authored((node as { resolve(doc: Document): unknown }).resolve(doc), doc, budget);
  }
  return node ?? null;
}

/** One line: where (file line and column), what YAML said, and how to fix it: usually quoting the value. */
function describeYamlError(error: YAMLError, counter: LineCounter, lines: string[], firstLine: number): Located {
  let { line, col } = counter.linePos(error.pos[0]);
  let what = error.message.replace(/ at line \d+, column \d+[\s\S]*$/, "");
  const unclosed = /^Flow (sequence|map) .*end with a ([\]}])/.exec(what);
  if (unclosed) {
    // YAML notices a missing bracket where the next field starts; point at the bracket that opened it.
    const open = unclosed[2] === "]" ? "[" : "{";
    const found = findBackwards(lines, line - 1, (text) => unmatched(text, open, unclosed[2]!));
    if (found) ({ line, col } = found);
    what = `the ${unclosed[1] === "sequence" ? "list" : "mapping"} opened by "${open}" is never closed with "${unclosed[2]}"`;
  } else if (/^Missing closing (['"])quote/.test(what)) {
    const quote = /^Missing closing (['"])/.exec(what)![1]!;
    const found = findBackwards(lines, line - 1, (text) => {
      const at = text.search(new RegExp(`:\\s+${quote}`));
      return at < 0 ? -1 : text.indexOf(quote, at);
    });
    if (found) ({ line, col } = found);
    what = `the text opened by ${quote} is never closed with ${quote}`;
  }
  const source = lines[line - 1] ?? "";
  const field = /^(\s*)([^\s:#][^:#]*?):[ \t]+(\S.*)$/.exec(source);
  const hint = field
    ? `; if the value is text, put it in quotes: ${field[2]}: ${quoteYaml(field[3]!.trim())}`
    : "; check the indentation and the brackets and quotes around it";
  return { line: line + firstLine - 1, column: col, message: `frontmatter is not valid YAML: ${what}${hint}` };
}

function findBackwards(lines: string[], from: number, column: (text: string) => number): { line: number; col: number } | null {
  for (let i = Math.min(from, lines.length - 1); i >= 0; i--) {
    const at = column(lines[i]!);
    if (at >= 0) return { line: i + 1, col: at + 1 };
  }
  return null;
}

/** The column of the last `open` on the line that no `close` after it matches, or -1. */
function unmatched(text: string, open: string, close: string): number {
  const stack: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === open) stack.push(i);
    else if (text[i] === close) stack.pop();
  }
  return stack.length > 0 ? stack[stack.length - 1]! : -1;
}
