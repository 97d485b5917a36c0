// The Agent Skills client guide: files written for other hosts often have `key: text: more text`, which is not
// valid YAML (the second ": " would start a nested mapping) but which those hosts' parsers accept. We quote such a
// value and parse again, and the loader warns, so the file loads and its author learns how to fix it.

export interface ColonRepair {
  /** Line of the field (0-based within the YAML text until parseFrontmatter turns it into a file line). */
  line: number;
  field: string;
  /** The value as text, ready to paste: `"Triggers on: 'x'"`. */
  quoted: string;
}

const FIELD = /^(\s*)([^\s#'"{}[\],&*!|>%@`-][^:#]*?):[ \t]+(.*)$/;
// Values that are already something other than plain text: quoted, a flow collection, a block scalar, an anchor,
// an alias or a tag. Those are left alone.
const NOT_PLAIN = /^['"[{|>&*!%@`]/;

/**
 * Quotes the plain value on each flagged line (0-based) when it holds ": " or ends with ":". A value that goes on
 * over more-indented lines is joined onto the field's line, and those lines are left empty so that every later
 * line keeps its number.
 */
export function repairColonValues(lines: readonly string[], flagged: ReadonlySet<number>): { lines: string[]; repairs: ColonRepair[] } {
  const out = [...lines];
  const repairs: ColonRepair[] = [];
  for (const index of [...flagged].sort((a, b) => a - b)) {
    const match = FIELD.exec(out[index] ?? "");
    if (!match) continue;
    const [, indent, field, rest] = match as unknown as [string, string, string, string];
    if (rest === "" || NOT_PLAIN.test(rest)) continue;
    // In a plain value, " #" starts a comment; keep it a comment.
    const comment = rest.search(/\s#/);
    const first = (comment < 0 ? rest : rest.slice(0, comment)).trim();
    const parts = [first];
    let next = index + 1;
    while (next < out.length && (out[next]!.trim() === "" || indentOf(out[next]!) > indent.length)) next++;
    while (next > index + 1 && out[next - 1]!.trim() === "") next--;
    for (let i = index + 1; i < next; i++) {
      const part = out[i]!.trim();
      if (part !== "" && !part.startsWith("#")) parts.push(part.replace(/\s#.*$/, ""));
    }
    const value = parts.join(" ");
    if (!/:(\s|$)/.test(value)) continue;
    const quoted = quoteYaml(value);
    out[index] = `${indent}${field}: ${quoted}${comment < 0 ? "" : rest.slice(comment)}`;
    for (let i = index + 1; i < next; i++) out[i] = "";
    repairs.push({ line: index, field: field.trim(), quoted });
  }
  return { lines: out, repairs };
}

/** A YAML scalar holding exactly `text`: double quotes when nothing needs escaping there, else single quotes. */
export function quoteYaml(text: string): string {
  if (!/["\\]/.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, "''")}'`;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}
