import { existsSync } from "node:fs";
import { loadConfigOrExit } from "../config.js";
import { available } from "../catalog/definition.js";
import { loadCatalog, validatePath } from "../catalog/loader.js";
import { ToolRegistry } from "../runtime/tools/registry.js";

// `npm run skills -- list` and `npm run skills -- validate [path]` for admins. validate exits 1 on any
// error, so it can guard an admin's own CI; warnings do not fail it.
const [command, path] = process.argv.slice(2);
const config = loadConfigOrExit({ LOG_LEVEL: "error" });
const knownTools = new ToolRegistry().names();

if (command === "list") {
  const catalog = loadCatalog(config.SKILLS_DIR, config.AGENTS_DIR, { knownTools });
  const rows = [...catalog.skills.values(), ...catalog.agents.values()].map((d) => [
    d.name,
    d.kind,
    d.mode,
    d.unavailable ? "unavailable" : "ok",
    d.unavailable ?? "",
  ]);
  for (const problem of catalog.problems) rows.push(["-", "-", "-", "error", problem]);
  printTable(["NAME", "KIND", "MODE", "STATUS", "REASON"], rows);
  const usable = available(catalog.skills).length + available(catalog.agents).length;
  process.stdout.write(`\n${usable} usable, ${catalog.problems.length} skipped, ${catalog.warnings.length} warnings\n`);
  for (const warning of catalog.warnings) process.stdout.write(`warning: ${warning}\n`);
} else if (command === "validate") {
  const targets = path ? [path] : [config.SKILLS_DIR, config.AGENTS_DIR].filter((p) => existsSync(p));
  if (path && !existsSync(path)) {
    process.stderr.write(`no such file or folder: ${path}\n`);
    process.exit(2);
  }
  const problems = targets.flatMap((target) => validatePath(target, { knownTools }));
  for (const p of problems) process.stdout.write(`${p.severity}: ${p.message}\n`);
  const errors = problems.filter((p) => p.severity === "error").length;
  process.stdout.write(`${errors} errors, ${problems.length - errors} warnings\n`);
  process.exit(errors > 0 ? 1 : 0);
} else {
  process.stderr.write("usage: npm run skills -- list\n       npm run skills -- validate [path]\n");
  process.exit(2);
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => Math.min((r[i] ?? "").length, 60))));
  for (const row of [header, ...rows]) {
    process.stdout.write(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")}\n`);
  }
}
