import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compareRuns, formatComparison, parseResults } from "./compare.js";
import type { Result } from "./scenarios.js";

// `npm run bench -- --compare <ref> [scenario …]`: checks <ref> out into a temporary worktree, then runs the bench
// there and here alternately (ref, tree, ref, tree, …), each run a fresh process, and prints per figure the medians,
// their ratio and the spread of the pairwise ratios. Exits 1 when a judged figure (a rate, CPU per message, bytes per
// message) is worse than the threshold, so a change on the hot path is compared with the code before it.

export interface CompareOptions {
  ref: string;
  scenarios: string[];
  runs: number;
  thresholdPercent: number;
}

const root = resolve(import.meta.dirname, "..");

function git(args: string[], cwd = root): { ok: boolean; out: string; err: string } {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

/** The commit `ref` names, or a sentence saying why it names none. */
export function resolveRef(ref: string): { sha: string } | { problem: string } {
  if (!/^[\w./@^~{}-]+$/.test(ref) || ref.startsWith("-")) return { problem: `--compare "${ref}" is not a git revision` };
  const r = git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  return r.ok && r.out ? { sha: r.out } : { problem: `--compare "${ref}" names no commit in this repository (try a branch, a tag or a sha)` };
}

/** The scenario names the bench at `dir` knows, read from its usage (an older bench may lack newer scenarios). */
function knownScenarios(dir: string): string[] | null {
  const r = spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", "--help"], { cwd: dir, encoding: "utf8" });
  const line = /^scenarios: (.*)$/m.exec(`${r.stdout}\n${r.stderr}`)?.[1];
  return line
    ? line
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : null;
}

function runBench(dir: string, scenarios: string[]): Promise<Result[]> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "bench/run.ts", ...scenarios], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code === 0) done(parseResults(stdout));
      else fail(new Error(`the bench in ${dir} exited with ${code}:\n${stderr.slice(-2000)}`));
    });
  });
}

/** A worktree of `sha` whose dependencies are this checkout's when the lock files agree, else installed with npm ci. */
function checkout(sha: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `switchboard-bench-${sha.slice(0, 8)}-`));
  rmSync(dir, { recursive: true, force: true });
  const added = git(["worktree", "add", "--detach", dir, sha]);
  if (!added.ok) throw new Error(`git worktree add failed: ${added.err}`);
  const remove = () => {
    git(["worktree", "remove", "--force", dir]);
    rmSync(dir, { recursive: true, force: true });
  };
  const oldLock = git(["show", `${sha}:package-lock.json`]).out;
  const sameDependencies = oldLock === readFileSync(join(root, "package-lock.json"), "utf8").trim();
  if (sameDependencies) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  else {
    process.stderr.write(`${sha.slice(0, 12)} has other dependencies: npm ci there (needs the npm registry)\n`);
    const installed = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
    if (installed.status !== 0) {
      remove();
      throw new Error(`npm ci failed in the worktree of ${sha.slice(0, 12)}`);
    }
  }
  if (!existsSync(join(dir, "bench", "run.ts"))) {
    remove();
    throw new Error(`${sha.slice(0, 12)} has no bench/run.ts: nothing to compare with`);
  }
  return { dir, remove };
}

export async function compare(options: CompareOptions, scenarioNames: string[]): Promise<number> {
  const ref = resolveRef(options.ref);
  if ("problem" in ref) throw new Error(ref.problem);
  const wanted = options.scenarios.length > 0 ? options.scenarios : scenarioNames;
  const tree = checkout(ref.sha);
  const stop = () => {
    tree.remove();
    process.exit(130);
  };
  process.once("SIGINT", stop);
  try {
    const there = knownScenarios(tree.dir) ?? wanted;
    const shared = wanted.filter((name) => there.includes(name));
    const missing = wanted.filter((name) => !there.includes(name));
    if (missing.length > 0) process.stderr.write(`not in ${options.ref}: ${missing.join(", ")} (run on the working tree only, not compared)\n`);
    if (shared.length === 0) throw new Error(`${options.ref} has none of the scenarios ${wanted.join(", ")}`);
    const before: Result[][] = [];
    const after: Result[][] = [];
    for (let i = 0; i < options.runs; i++) {
      process.stderr.write(`run ${i + 1}/${options.runs}: ${options.ref} … `);
      before.push(await runBench(tree.dir, shared));
      process.stderr.write("working tree …\n");
      after.push(await runBench(root, shared));
    }
    const rows = compareRuns(before, after, options.thresholdPercent);
    process.stdout.write(`${formatComparison(rows, options.ref)}\n`);
    const worse = rows.filter((r) => r.verdict === "worse");
    process.stdout.write(
      worse.length === 0
        ? `no judged figure worse than ${options.thresholdPercent} % (medians of ${options.runs} alternated runs)\n`
        : `worse than ${options.thresholdPercent} %: ${worse.map((r) => `${r.scenario} ${r.figure} ${r.ratio.toFixed(2)}×`).join(", ")}\n`,
    );
    return worse.length === 0 ? 0 : 1;
  } finally {
    process.off("SIGINT", stop);
    tree.remove();
  }
}
