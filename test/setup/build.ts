// vitest globalSetup: the TypeScript sources compiled once per `vitest run`, for the tests that start Switchboard as a
// child process (test/integration/child-process.ts). `node --import tsx` spends about a second of CPU per start on
// the loader (every module resolved and transformed through it); the compiled copy starts in less than half that,
// and the suites start the gateway, the terminal chat and the command-line tools well over a hundred times.
//
// The copy is the same sources, file by file (no bundling: every module keeps its own file and `import.meta.url`),
// transpiled by esbuild as tsx does, with the files they read beside them (the web page's assets). It lives under
// node_modules/.cache so that packages resolve as they do from the sources, and is removed when the run ends.
// The terminal tests (test/integration/tty.ts) still start the sources through tsx, as `npm run chat` does.
// TEST_BUILD=off runs every child process through tsx instead.
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder holding the compiled copy of the repository's sources, or null to run them through tsx. */
    build: string | null;
  }
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The folders whose modules a child process may load: the program, its providers, the bench, the test helpers it preloads. */
const FOLDERS = ["src", "providers", "bench", "test"];

/** One copy per `vitest run`, shared by the projects that list this setup (each project runs its globalSetup itself). */
interface Shared {
  out: Promise<string>;
  users: number;
}
const SHARED = Symbol.for("switchboard.tests.build");
type WithShared = typeof globalThis & { [SHARED]?: Shared };

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  if (process.env.TEST_BUILD === "off") {
    project.provide("build", null);
    return undefined;
  }
  const g = globalThis as WithShared;
  const shared = (g[SHARED] ??= { out: compile(), users: 0 });
  shared.users++;
  const out = await shared.out;
  project.provide("build", out);
  return () => {
    if (--shared.users > 0) return;
    delete g[SHARED];
    rmSync(out, { recursive: true, force: true });
  };
}

async function compile(): Promise<string> {
  const cache = join(ROOT, "node_modules/.cache/switchboard-tests");
  removeLeftovers(cache);
  const out = join(cache, `run-${process.pid}-${Date.now()}`);
  mkdirSync(out, { recursive: true });
  const sources: string[] = [];
  for (const folder of FOLDERS) {
    for (const file of walk(join(ROOT, folder))) {
      if (file.endsWith(".test.ts")) continue;
      if (file.endsWith(".ts")) sources.push(file);
      else if (folder !== "test") copy(file, join(out, relative(ROOT, file)));
    }
  }
  await build({ entryPoints: sources, outdir: out, outbase: ROOT, platform: "node", format: "esm", target: "node20", logLevel: "warning" });
  return out;
}

/** Removes the copies of runs whose process is gone (a run that was killed never removed its own). */
function removeLeftovers(cache: string): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(cache);
  } catch {
    return;
  }
  for (const name of entries) {
    const pid = Number(/^run-(\d+)-/.exec(name)?.[1]);
    if (pid > 0 && !alive(pid)) rmSync(join(cache, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") yield* walk(path);
    } else if (entry.isFile()) yield path;
  }
}

function copy(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  cpSync(from, to);
}
