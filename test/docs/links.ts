// Which relative links of the docs lead nowhere: a file that does not exist, or an anchor its page does not have.
import { existsSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { anchorsOf, linksOf, read, ROOT } from "./markdown.js";

export interface Files {
  /** The text of a file (relative to the root), or null when there is none. */
  text(path: string): string | null;
  /** Whether a file or folder exists there. */
  exists(path: string): boolean;
}

export const onDisk: Files = {
  text: (path) => (existsSync(join(ROOT, path)) ? read(path) : null),
  exists: (path) => existsSync(join(ROOT, path)),
};

/** One line per broken link: `page:line: target — why`. Links with a scheme (https:, mailto:) are not checked. */
export function brokenLinks(pages: readonly string[], files: Files): string[] {
  const problems: string[] = [];
  for (const page of pages) {
    const text = files.text(page);
    if (text === null) {
      problems.push(`${page}: no such page`);
      continue;
    }
    for (const { target, line } of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const at = target.indexOf("#");
      const pathPart = at < 0 ? target : target.slice(0, at);
      const anchor = at < 0 ? null : decodeURIComponent(target.slice(at + 1));
      const path = pathPart === "" ? page : normalize(join(dirname(page), decodeURIComponent(pathPart))).replace(/\/$/, "");
      const where = `${page}:${line}: ${target}`;
      if (path.startsWith("..")) problems.push(`${where} — leads out of the repository`);
      else if (!files.exists(path)) problems.push(`${where} — ${path} does not exist`);
      else if (anchor !== null && path.endsWith(".md")) {
        const anchors = anchorsOf(files.text(path) ?? "");
        if (!anchors.has(anchor)) problems.push(`${where} — ${path} has no heading "#${anchor}"`);
      }
    }
  }
  return problems;
}

/** The `docs/….md` paths that code comments, messages and other files name, with where they do. */
export function namedDocPaths(files: readonly string[], text: (path: string) => string): Array<{ path: string; in: string }> {
  const named: Array<{ path: string; in: string }> = [];
  for (const file of files) {
    for (const m of text(file).matchAll(/(?<![\w./-])docs\/[\w./-]+\.md\b/g)) named.push({ path: m[0], in: file });
  }
  return named;
}
