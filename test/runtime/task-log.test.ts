// What the log says about a task: one line when it ends (info when it completed or was cancelled, its warning when it failed), with
// the frame, the stack's depth, the outcome and how long the task took; its start only at debug. A task that spans
// several requests is timed from its first. Driven through the gateway and the strict fake Messages API.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { captureLog } from "../store/postgres/log-capture.js";

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = dir = undefined;
});

const INFO = 30;
const DEBUG = 20;

/** A harness whose runtime and store read one clock the test moves (the task's start is stored by the store). */
async function start() {
  let now = Date.UTC(2026, 10, 28, 9);
  dir = mkdtempSync(join(tmpdir(), "switchboard-task-log-"));
  const captured = captureLog();
  const clock = { now: () => now };
  h = await startHarness({
    files: skillFile("interview", "Ask, then complete."),
    log: captured.log,
    clock,
    store: new SqliteStore(join(dir, "db.sqlite"), clock.now),
  });
  const taskLines = (task: string) => captured.lines.filter((l) => l.task === task && typeof l.msg === "string" && l.msg.startsWith("task "));
  return { h, captured, taskLines, advance: (ms: number) => void (now += ms) };
}

describe("the line a task's end writes", () => {
  it("a task of one message: one info line when it completes, with frame, depth, outcome and duration; its start at debug", async () => {
    const { h, captured, taskLines, advance } = await start();
    h.fake.script(() => {
      advance(1_250); // the model takes its time
      return text("Hello!");
    });
    expect(await h.say("hi")).toEqual(["main: Hello!"]);

    const task = (await h.store.tasks.ofSession("console:t")).at(-1)!.id;
    const lines = taskLines(task);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [DEBUG, "task started: pushed main"],
      [INFO, "task completed"],
    ]);
    expect(lines[1]).toMatchObject({ outcome: "completed", durationMs: 1_250, depth: 0, session: "console:t", task });
    expect(lines[1]!.frame).toBe(lines[0]!.frame);
    // Nothing else about this task is written at info: a message costs the log one line.
    expect(captured.lines.filter((l) => l.task === task && (l.level as number) >= INFO)).toHaveLength(1);
  });

  it("a task over two messages (a skill asks, the user answers) is timed from its first message, and ends in one line", async () => {
    const { h, taskLines, advance } = await start();
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "go" })),
      text("Where to?"),
      reply(toolUse("complete", { result: "Lisbon" })),
      text("Lisbon it is."),
    );
    await h.say("plan a trip");
    const task = (await h.store.tasks.active("console:t"))!.id;
    expect(taskLines(task).filter((l) => l.level === INFO)).toEqual([]);
    advance(60_000); // the user thinks for a minute
    expect(await h.say("Lisbon")).toEqual(["main: Lisbon it is."]);

    const ends = taskLines(task).filter((l) => (l.level as number) >= INFO);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ msg: "task completed", outcome: "completed", durationMs: 60_000, depth: 0 });
  });

  it("a task that fails ends in its warning, at warn, with the same fields; no info line", async () => {
    const { h, captured, advance } = await start();
    h.fake.script(() => {
      advance(40);
      return { error: { status: 400, type: "invalid_request_error", message: "bad request", noRetry: true } };
    });
    await h.say("hi");

    const task = (await h.store.tasks.ofSession("console:t")).at(-1)!;
    expect(task.status).toBe("failed");
    const written = captured.lines.filter((l) => l.task === task.id && (l.level as number) >= INFO);
    // The model call's own warning, then the task's end: no info line.
    expect(written.map((l) => [l.level, l.msg])).toEqual([
      [40, "model call failed"],
      [40, "ERROR: popped"],
    ]);
    expect(written[1]).toMatchObject({ outcome: "failed", durationMs: 40, depth: 0, frame: expect.any(String) });
  });

  it("a task the user cancels: its line says so, timed from its first message", async () => {
    const { h, taskLines, advance } = await start();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "go" })), text("Where to?"));
    await h.say("plan a trip");
    const task = (await h.store.tasks.active("console:t"))!.id;
    advance(5_000);
    await h.say("/cancel");

    const ends = taskLines(task).filter((l) => (l.level as number) >= INFO);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ level: INFO, msg: "task cancelled: stack cleared", outcome: "cancelled", durationMs: 5_000, depth: 0 });
  });
});
