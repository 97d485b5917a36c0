import { parse as parseYaml } from "yaml";

/**
 * Splits `---\n<yaml>\n---\n<body>`. YAML only (the `yaml` package, which never evaluates code,
 * unlike gray-matter's `---js`). Returns an error string for the caller to prefix with the file.
 */
export function splitFrontmatter(source: string): { data: unknown; body: string } | { error: string } {
  const text = source.replace(/^\uFEFF/, "");
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) return { error: "missing YAML frontmatter: the file must start with a line '---', the fields, and a closing '---'" };
  try {
    return { data: parseYaml(match[1]!) ?? {}, body: match[2]!.trim() };
  } catch (error) {
    const detail = (error instanceof Error ? error.message.split("\n")[0]! : String(error)).replace(/:\s*$/, "");
    return { error: `frontmatter is not valid YAML: ${detail}` };
  }
}
