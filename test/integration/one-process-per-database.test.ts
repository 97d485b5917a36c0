// SQLite is one process's database: a second gateway on the same DATA_DIR refuses to start, with one line that
// says why, instead of silently sharing the file (and answering every message twice).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { freePort, run, type Proc } from "./child-process.js";

const root = mkdtempSync(join(tmpdir(), "switchboard-lock-"));
const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs) p.child.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  rmSync(root, { recursive: true, force: true });
});

async function start(): Promise<Proc> {
  const proc = run("src/main.ts", [], {
    DATA_DIR: join(root, "data"),
    HTTP_PORT: String(await freePort()),
    LOG_LEVEL: "info",
    SKILLS_DIR: join(root, "skills"),
    AGENTS_DIR: join(root, "agents"),
  });
  proc.child.stdout.on("data", () => {});
  procs.push(proc);
  return proc;
}

it("a second process on the same DATA_DIR exits 1 with one line naming it; the first keeps running", async () => {
  const first = await start();
  await first.logged('"msg":"switchboard started"');
  const second = await start();
  expect(await second.exited).toBe(1);
  const lines = second.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`DATA_DIR=${join(root, "data")}`);
  expect(lines[0]).toMatch(/already running/);
  // The first one still answers.
  expect(first.child.exitCode).toBeNull();
  // Once the first is gone (even by SIGKILL: the OS drops its lock), a new one starts on the same data.
  first.child.kill("SIGKILL");
  await first.exited;
  const third = await start();
  await third.logged('"msg":"switchboard started"');
}, 30_000);
