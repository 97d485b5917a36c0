// Reading the docs as GitHub renders them: which files there are, their links, their headings' anchors and their
// tables. Only what the docs tests need; the text outside fenced code blocks is what counts.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");

export function read(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** Every file under `dir` (relative to the root) whose name ends in `suffix`, sorted. */
export function filesUnder(dir: string, suffix: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(suffix)) found.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, dir));
  return found.sort();
}

/** The docs a reader gets: the README and every page under docs/. */
export function docFiles(): string[] {
  return ["README.md", ...filesUnder("docs", ".md")];
}

/** `text` with every fenced code block blanked (lines kept, so line numbers stay right). */
export function withoutCodeBlocks(text: string): string {
  let fenced = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return "";
      }
      return fenced ? "" : line;
    })
    .join("\n");
}

/** A line with its inline code spans blanked: a link written inside backticks is no link. */
function withoutCodeSpans(line: string): string {
  return line.replace(/`[^`]*`/g, (span) => " ".repeat(span.length));
}

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a page has: one per heading (repeated ones numbered as GitHub does) and explicit `<a id>`s. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCodeBlocks(text).split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  }
  return anchors;
}

export interface Link {
  target: string;
  line: number;
}

/** Every link and image of a page (inline and reference definitions), outside code. */
export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  withoutCodeBlocks(text)
    .split("\n")
    .forEach((raw, index) => {
      const line = withoutCodeSpans(raw);
      for (const m of line.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line: index + 1 });
      const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
      if (definition) links.push({ target: definition[1]!, line: index + 1 });
    });
  return links;
}

/** A table row's cells, split on `|` outside code spans and not escaped as `\|`. */
export function cells(row: string): string[] {
  const out: string[] = [];
  let cell = "";
  let code = false;
  for (let i = 0; i < row.length; i++) {
    const c = row[i]!;
    if (c === "\\" && row[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (c === "`") {
      code = !code;
      cell += c;
    } else if (c === "|" && !code) {
      out.push(cell.trim());
      cell = "";
    } else cell += c;
  }
  out.push(cell.trim());
  // A row starts and ends with a pipe: drop the empty cells outside them.
  return out.slice(row.trimStart().startsWith("|") ? 1 : 0, row.trimEnd().endsWith("|") ? -1 : undefined);
}

/** The rows (as cells) of every table of `text` whose header row is `header`, and how many such tables there are. */
export function tablesWithHeader(text: string, header: string[]): { tables: number; rows: string[][] } {
  const lines = withoutCodeBlocks(text).split("\n");
  const rows: string[][] = [];
  let tables = 0;
  lines.forEach((line, index) => {
    if (!line.trimStart().startsWith("|") || JSON.stringify(cells(line)) !== JSON.stringify(header)) return;
    tables++;
    for (let i = index + 2; i < lines.length && lines[i]!.trimStart().startsWith("|"); i++) rows.push(cells(lines[i]!));
  });
  return { tables, rows };
}

/** Every table row of `text`, as cells (header and separator rows included). */
export function tableRows(text: string): string[][] {
  return withoutCodeBlocks(text)
    .split("\n")
    .filter((line) => line.trimStart().startsWith("|"))
    .map(cells);
}
