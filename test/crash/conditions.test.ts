// Hostile conditions: a database another process holds, a store that cannot write, and SIGTERM mid-turn.
import { mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { run, type Proc } from "../integration/child-process.js";
import { failCommits } from "../helpers/steps.js";

let fake: FakeAnthropic | undefined;
let dir = "";
const procs: Proc[] = [];
let h: Harness | undefined;
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await h?.close();
  h = undefined;
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function env(extra: Record<string, string> = {}) {
  return {
    ANTHROPIC_API_KEY: "k",
    ANTHROPIC_BASE_URL: fake?.url ?? "http://127.0.0.1:9",
    ANTHROPIC_MAX_RETRIES: "0",
    DATA_DIR: join(dir, "data"),
    SKILLS_DIR: join(dir, "skills"),
    AGENTS_DIR: join(dir, "agents"),
    LOG_LEVEL: "info",
    HTTP_PORT: "0",
    ...extra,
  };
}

describe("startup", () => {
  it("refuses to start on a database another process holds, with a clear message", async () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-locked-"));
    mkdirSync(join(dir, "data"));
    const holder = new Database(join(dir, "data", "switchboard.db"));
    holder.exec("BEGIN EXCLUSIVE; CREATE TABLE hold (x);");
    try {
      const p = run("src/main.ts", [], env());
      procs.push(p);
      expect(await p.exited).toBe(1);
      expect(p.stderr).toContain("is locked by another process (is another Switchboard running on this DATA_DIR?)");
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
  });
});

describe("a store that cannot write (disk full)", () => {
  it("refuses the message with an error reply and leaves nothing half-written", async () => {
    h = await startHarness();
    h.fake.script(text("this reply cannot be stored"));
    const store = h.store;
    const free = failCommits(store, Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }));
    const shown = await h.send("hello");
    free();
    expect(shown.map((m) => [m.kind, m.text])).toEqual([
      ["error", "Sorry, I can't store messages right now (the server's storage is failing), so I could not process that. Please try again later."],
    ]);
    // Nothing of the turn was written: no log rows, no task, no frames.
    expect(await store.steps.log("console:t")).toEqual([]);
    expect(await store.tasks.active("console:t")).toBeNull();
    expect(await store.steps.frames("console:t")).toEqual([]);
  });
});

describe("SIGTERM", () => {
  it("checkpoints an in-flight turn and exits 0 quickly; the next start finishes it", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-term-"));
    const called = deferred<void>();
    fake.script(() => {
      called.resolve();
      return { hang: true };
    });
    const first = run("providers/console/cli.ts", ["--jsonl"], env());
    procs.push(first);
    first.send({ text: "think long" });
    await called.promise;
    const stopping = Date.now();
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(10_000);

    fake.script(text("Done thinking."));
    const second = run("providers/console/cli.ts", ["--jsonl"], env());
    procs.push(second);
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(second.json()).toEqual([{ type: "message", agent: "main", depth: 1, text: "Done thinking." }]);
  });
});
