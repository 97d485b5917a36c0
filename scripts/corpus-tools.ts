// The corpus figure of docs/admin/skills.md: for real collections of skills and agents (checked out outside the repository),
// the share of definitions whose declared tools (`tools` / `allowed-tools`) are all available here, with the
// workspace tools on and a sandbox present, WebFetch and WebSearch on, and no MCP server configured (an
// `mcp__<server>__…` entry counts only when a configured server could provide it).
//
//   npx tsx scripts/corpus-tools.ts [--without-workspace] <collection folder>…
//
// --without-workspace measures the gateway as `npm start` runs today, before the workspace tools are registered.
//
// SKILL.md files are skills; other .md files whose frontmatter has a name and a description are agents.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Definition, DefinitionKind, Problem } from "../src/catalog/definition.js";
import { readDefinition } from "../src/catalog/read-definition.js";
import { MEMORY_TOOLS } from "../src/runtime/memory/tools.js";
import { ToolRegistry } from "../src/runtime/tools/registry.js";
import { WEB_FETCH } from "../src/runtime/tools/web-fetch.js";
import { WEB_SEARCH } from "../src/runtime/tools/web-search.js";
import { WORKSPACE_TOOLS } from "../src/runtime/tools/workspace/index.js";

const args = process.argv.slice(2);
const withWorkspace = !args.includes("--without-workspace");
const KNOWN = [...new ToolRegistry().names(), "http_request", ...MEMORY_TOOLS, WEB_FETCH, WEB_SEARCH, ...(withWorkspace ? WORKSPACE_TOOLS : [])];
const SKIPPED_DIRS = new Set([".git", "node_modules"]);

function* markdownFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) yield* markdownFiles(join(dir, entry.name));
    else if (entry.isFile() && entry.name.endsWith(".md")) yield join(dir, entry.name);
  }
}

function kindOf(file: string): DefinitionKind | null {
  if (basename(file) === "SKILL.md") return "skill";
  const head = readFileSync(file, "utf8").slice(0, 4096);
  const frontmatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(head)?.[1];
  return frontmatter && /^name:/m.test(frontmatter) && /^description:/m.test(frontmatter) ? "agent" : null;
}

interface Tally {
  files: number;
  loaded: number;
  complete: number;
  misses: Map<string, number>;
  lacking: string[];
}

function measure(root: string): Tally {
  const tally: Tally = { files: 0, loaded: 0, complete: 0, misses: new Map(), lacking: [] };
  for (const file of markdownFiles(root)) {
    const kind = kindOf(file);
    if (!kind) continue;
    tally.files++;
    const problems: Problem[] = [];
    const def: Definition | null = readDefinition(kind, file, { knownTools: KNOWN, env: {}, mcpServers: [] }, problems);
    if (!def) continue;
    tally.loaded++;
    if (!def.missingTools?.length) {
      tally.complete++;
      continue;
    }
    for (const { entry, why } of def.missingTools) {
      const key = `${entry.replace(/\(.*$/s, "(…)")}: ${why}`;
      tally.misses.set(key, (tally.misses.get(key) ?? 0) + 1);
    }
    tally.lacking.push(`${file.slice(root.length + 1)}: ${def.missingTools.map((m) => m.entry).join(", ")}`);
  }
  return tally;
}

const percent = (n: number, d: number) => (d === 0 ? "-" : `${((100 * n) / d).toFixed(1)} %`);
const totals = { files: 0, loaded: 0, complete: 0 };
for (const root of args.filter((a) => a !== "--without-workspace")) {
  const t = measure(root);
  totals.files += t.files;
  totals.loaded += t.loaded;
  totals.complete += t.complete;
  process.stdout.write(`\n## ${basename(root)}: ${t.complete} of ${t.loaded} loaded (${t.files} files) have every declared tool: ${percent(t.complete, t.loaded)}\n`);
  for (const [miss, n] of [...t.misses].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${n}× ${miss}\n`);
  for (const line of t.lacking) process.stdout.write(`  - ${line}\n`);
}
process.stdout.write(`\nall: ${totals.complete} of ${totals.loaded} loaded (${totals.files} files): ${percent(totals.complete, totals.loaded)}\n`);
