import { existsSync } from "node:fs";
import type { Config } from "../config.js";
import { available } from "../catalog/definition.js";
import { loadCatalog } from "../catalog/loader.js";
import { checkLock, computeLock, LOCK_FILE, LockError, readLock, writeLock } from "../catalog/lock.js";
import { validatePath } from "../catalog/validate.js";
import { createMcp } from "../app/mcp.js";
import { createTools } from "../app/tools.js";
import { silentLogger } from "../log.js";
import { loadMcpConfigOrExit } from "../mcp/load.js";
import { mcpToolProblems } from "../mcp/report.js";
import { missingToolLines, probeHere, workspaceToolsHere } from "./tool-availability.js";

export type SkillsCommand = "list" | "validate" | "lock";

interface Output {
  write(text: string): unknown;
}

/**
 * `npm run skills -- list`, `validate [path]` and `lock` in the working directory (skills.lock.json is written and
 * read there): what they print, and the exit code. validate returns 1 on any error, so it can guard an admin's own
 * CI; warnings do not fail it. An mcp.json that does not parse ends the process, as at start-up.
 */
export async function runSkills(command: SkillsCommand, path: string | undefined, config: Config, out: Output, err: Output): Promise<number> {
  // Every tool this gateway offers, from where the gateway builds its registry (http_request included), and the MCP
  // servers of mcp.json, whose tools a whitelist may name.
  const mcp = createMcp(config, loadMcpConfigOrExit(config.MCP_CONFIG), { log: silentLogger() });
  const { registry, off: disabledTools } = createTools(config, undefined, undefined, mcp);
  // The workspace tools npm start would offer here (probing the sandbox as start-up does), and why any is missing.
  const workspace = await workspaceToolsHere(config, probeHere(config));
  const knownTools = [...registry.names(), ...workspace.offered];
  const mcpServers = mcp.servers();

  if (command === "list") {
    const catalog = loadCatalog(config.SKILLS_DIR, config.AGENTS_DIR, { knownTools, disabledTools: { ...disabledTools, ...workspace.off }, mcpServers });
    // The LOCK column: locked / changed / new / unreadable against skills.lock.json, "-" without one.
    const lock = readLock(LOCK_FILE);
    const lockProblems = lock.ok ? checkLock(catalog, lock.lock).problems : [];
    const lockOf = (kind: string, name: string) => lockProblems.find((p) => p.kind === kind && p.name === name);
    const rows = [...catalog.skills.values(), ...catalog.agents.values()].map((d) => [
      d.name,
      d.kind,
      d.mode,
      d.unavailable ? "unavailable" : "ok",
      lock.ok ? (lockOf(d.kind, d.name)?.status ?? "locked") : "-",
      // Whether every tool the definition declares is there (see the "tools:" lines); without a whitelist it has main's.
      d.tools === null ? "inherited" : d.missingTools?.length ? `lacks ${d.missingTools.length}` : "all",
      [d.unavailable, lockOf(d.kind, d.name)?.message].filter(Boolean).join("; "),
    ]);
    for (const p of lockProblems.filter((p) => p.status === "missing")) rows.push([p.name, p.kind, "-", "-", "missing", "-", p.message]);
    for (const problem of catalog.problems) rows.push(["-", "-", "-", "error", "-", "-", problem]);
    printTable(out, ["NAME", "KIND", "MODE", "STATUS", "LOCK", "TOOLS", "REASON"], rows);
    const usable = available(catalog.skills).length + available(catalog.agents).length;
    out.write(`\n${usable} usable, ${catalog.problems.length} skipped, ${catalog.warnings.length} warnings\n`);
    for (const line of missingToolLines([...catalog.skills.values(), ...catalog.agents.values()])) out.write(`${line}\n`);
    for (const warning of catalog.warnings) out.write(`warning: ${warning}\n`);
    // The MCP tools each definition names, against the servers as they answer now (connected as the gateway would).
    const definitions = [...catalog.skills.values(), ...catalog.agents.values()];
    if (mcpServers.length && definitions.some((d) => d.tools?.some((t) => t.startsWith("mcp__")))) {
      await mcp.start();
      const views = mcp.views();
      await mcp.close();
      for (const d of definitions) for (const problem of mcpToolProblems(d, views)) out.write(`mcp: ${d.kind} ${d.name}: ${problem}\n`);
    }
    if (!lock.ok && !(lock.missing && config.SKILLS_LOCK === "off")) out.write(`${lock.missing ? "note" : "error"}: ${lock.error}\n`);
    if (!lock.ok && !lock.missing) return 1;
  } else if (command === "lock") {
    const catalog = loadCatalog(config.SKILLS_DIR, config.AGENTS_DIR, { knownTools, disabledTools, mcpServers });
    try {
      const entries = computeLock(catalog);
      writeLock(LOCK_FILE, entries);
      const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
      out.write(`wrote ${LOCK_FILE}: ${count(catalog.skills.size, "skill")}, ${count(catalog.agents.size, "agent")}\n`);
    } catch (error) {
      if (!(error instanceof LockError)) throw error;
      err.write(`error: ${error.message}\n${LOCK_FILE} was not written.\n`);
      return 1;
    }
    for (const problem of catalog.problems) out.write(`not locked (skipped by the loader): ${problem}\n`);
  } else if (command === "validate") {
    const targets = path ? [path] : [config.SKILLS_DIR, config.AGENTS_DIR].filter((p) => existsSync(p));
    if (path && !existsSync(path)) {
      err.write(`no such file or folder: ${path}\n`);
      return 2;
    }
    const problems = targets.flatMap((target) => validatePath(target, { knownTools, disabledTools, mcpServers }));
    for (const p of problems) out.write(`${p.severity}: ${p.message}\n`);
    const errors = problems.filter((p) => p.severity === "error").length;
    out.write(`${errors} errors, ${problems.length - errors} warnings\n`);
    return errors > 0 ? 1 : 0;
  }
  return 0;
}

function printTable(out: Output, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => Math.min((r[i] ?? "").length, 60))));
  for (const row of [header, ...rows]) {
    out.write(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")}\n`);
  }
}
