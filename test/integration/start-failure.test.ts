// A start that cannot complete exits non-zero, saying why: before the gateway serves, an error that escapes every
// handler is not something to keep serving through (the process guard's job once it runs).
import { rmSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { writeDefinitions } from "../helpers/harness.js";
import { processEnv, run, type Proc } from "./child-process.js";

const PLANTED = "test/integration/fixtures/planted-start-failure.ts";
let proc: Proc | undefined;
let root: string | undefined;
afterEach(async () => {
  if (proc && proc.child.exitCode === null) proc.child.kill("SIGKILL");
  if (root) rmSync(root, { recursive: true, force: true });
});

function start(plant: "app" | "timer"): Proc {
  const defs = writeDefinitions({});
  root = defs.root;
  proc = run("src/main.ts", [], processEnv("http://127.0.0.1:1", defs, { PLANT: plant }), [PLANTED]);
  return proc;
}

const messages = (p: Proc) =>
  p.stderr
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { msg: string }).msg);

it.each([
  ["an unexpected error while the app is built", "app" as const, "planted: the store's change feed could not be watched"],
  ["a timer that throws while the gateway recovers its work", "timer" as const, "planted: a timer threw while the gateway started"],
])("exits 1 on %s, naming it, instead of serving on", async (_what, plant, planted) => {
  const p = start(plant);
  expect(await p.exited).toBe(1);
  expect(p.stderr).toContain(planted);
  expect(messages(p)).toContainEqual(expect.stringMatching(/while starting: switchboard cannot start/));
  expect(p.stderr).not.toContain("still serving");
  expect(messages(p)).not.toContain("switchboard started");
});
