// Ctrl-C: the first stops gracefully, a second one while that runs forces the exit (130), and the person at the
// terminal is told which is which.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { logPlan, loggerFor } from "../src/log.js";
import { FORCED_STOP, handleStopSignals } from "../src/shutdown.js";
import { deferred } from "./helpers/deferred.js";

function setup(ttyChat: boolean, level = "info") {
  const plan = logPlan({ ttyChat, stderrTTY: false, format: "json", level, dataDir: "/nonexistent" });
  const logged: Array<{ level: number; msg: string }> = [];
  // The lines are captured here whatever the plan (a file plan would write them to a file).
  const log = loggerFor({ to: "stderr", level, format: "json", colors: false }, [], {
    write: (line: string) => void logged.push(JSON.parse(line) as { level: number; msg: string }),
  });
  const told: string[] = [];
  const exits: number[] = [];
  const signals = new EventEmitter();
  const graceful = deferred<void>();
  let stops = 0;
  const shutdown = handleStopSignals({
    log,
    plan,
    stop: () => {
      stops++;
      return graceful.promise;
    },
    tell: (line) => void told.push(line),
    exit: (code) => void exits.push(code),
    signals: signals as unknown as Pick<NodeJS.Process, "on">,
  });
  return { shutdown, signals, graceful, told, exits, logged, stops: () => stops };
}

describe("handleStopSignals", () => {
  it("stops gracefully on the first SIGINT and exits 0 when done", async () => {
    const s = setup(false);
    const stopped = s.shutdown("SIGINT"); // what the first signal runs
    expect(s.stops()).toBe(1);
    expect(s.logged.map((l) => l.msg)).toEqual(["shutting down: finishing or checkpointing in-flight turns (press Ctrl-C again to force)"]);
    expect(s.told).toEqual([]);
    expect(s.exits).toEqual([]);
    s.graceful.resolve();
    await stopped;
    expect(s.exits).toEqual([0]);
  });

  it("exits at once with 130 on a second SIGINT (143 on SIGTERM) while the graceful stop runs", () => {
    const s = setup(false);
    s.signals.emit("SIGINT");
    expect(s.exits).toEqual([]);
    s.signals.emit("SIGINT");
    expect(s.exits).toEqual([130]);
    expect(s.logged.at(-1)).toMatchObject({ level: 40, msg: FORCED_STOP });
    expect(s.stops()).toBe(1);
    const t = setup(false);
    t.signals.emit("SIGTERM");
    t.signals.emit("SIGTERM");
    expect(t.exits).toEqual([143]);
  });

  it("tells the person at the terminal chat directly (the log is in a file)", () => {
    const s = setup(true, "error");
    s.signals.emit("SIGINT");
    expect(s.told).toEqual(["Stopping… (press Ctrl-C again to force)"]);
    s.signals.emit("SIGINT");
    // LOG_LEVEL=error hides the warning from the terminal, so the forced stop is told directly too.
    expect(s.told).toEqual(["Stopping… (press Ctrl-C again to force)", FORCED_STOP]);
    expect(s.exits).toEqual([130]);
  });

  it("a failed start exits 1 without the Ctrl-C hint; a signal during it forces", () => {
    const s = setup(true);
    void s.shutdown("startup failure", 1);
    expect(s.told).toEqual([]);
    s.signals.emit("SIGTERM");
    expect(s.exits).toEqual([143]);
  });
});
