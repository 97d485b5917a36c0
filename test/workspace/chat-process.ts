// `npm run chat` processes for the workspace tests: the strict fake Messages API, definitions in a throwaway folder
// whose DATA_DIR the sandbox's user can pass through (the gateway runs as root here), and every process killed
// after each test.
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { processEnv, run, type Proc } from "../integration/child-process.js";

export interface ChatWorld {
  fake: FakeAnthropic;
  defs: ReturnType<typeof writeDefinitions>;
  /** A `npm run chat --jsonl` process on this world. */
  chat(): Proc;
}

/** Sets up a fresh world before each test (with `files` as definitions, `extraEnv` set) and tears it down after. */
export function chatWorld(files: Record<string, string> = {}, extraEnv: Record<string, string> = {}): ChatWorld {
  const procs: Proc[] = [];
  let env: Record<string, string> = {};
  const world = {
    chat() {
      const p = run("providers/console/cli.ts", ["--jsonl"], env);
      procs.push(p);
      return p;
    },
  } as ChatWorld;
  beforeEach(async () => {
    world.fake = await startFakeAnthropic();
    world.defs = writeDefinitions(files);
    chmodSync(world.defs.root, 0o711);
    mkdirSync(join(world.defs.root, "data"), { mode: 0o711 });
    env = processEnv(world.fake.url, world.defs, { LOG_LEVEL: "warn", ...extraEnv });
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await world.fake.close();
    rmSync(world.defs.root, { recursive: true, force: true });
  });
  return world;
}
