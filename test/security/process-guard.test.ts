// No error that escapes every handler takes the process down: proven on a real child process, once with the
// guard (it keeps serving and stops cleanly on a signal) and once without (Node exits 1).
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { installProcessGuard } from "../../src/process-guard.js";
import { run } from "../integration/child-process.js";

const CHILD = "test/security/fixtures/unguarded-failures.ts";

describe("process guard", () => {
  it("logs a throw in a timer and an unhandled rejection, keeps serving, and exits 0 on SIGTERM", async () => {
    const proc = run(CHILD, [], { GUARD: "on" });
    const line = await Promise.race([proc.line((l) => l.startsWith("serving ")), proc.exited.then((code) => `exited ${code}`)]);
    expect(line, proc.stderr).toMatch(/^serving \d+$/);
    const port = Number(line.split(" ")[1]);
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    expect(await answer.json()).toEqual({ uncaughtException: 1, unhandledRejection: 1 });

    const logged = proc.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { level: number; origin: string; err: { message: string } });
    expect(logged.map((l) => [l.level, l.origin, l.err.message])).toEqual([
      [50, "unhandledRejection", "rejected and never awaited"],
      [50, "uncaughtException", "thrown inside a timer"],
    ]);

    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  it("without the guard, the same process dies with exit code 1 before it serves", async () => {
    const proc = run(CHILD, [], {});
    expect(await proc.exited).toBe(1);
    expect(proc.lines).toEqual([]);
    expect(proc.stderr).toContain("rejected and never awaited");
  });

  it("uninstalls its handlers", () => {
    const before = [process.listenerCount("uncaughtException"), process.listenerCount("unhandledRejection")];
    const guard = installProcessGuard(silentLogger());
    expect([process.listenerCount("uncaughtException"), process.listenerCount("unhandledRejection")]).toEqual([before[0]! + 1, before[1]! + 1]);
    guard.uninstall();
    expect([process.listenerCount("uncaughtException"), process.listenerCount("unhandledRejection")]).toEqual(before);
  });
});
