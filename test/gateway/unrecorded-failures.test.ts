// Failures the store could not record are retried on the injected timers until the store takes them, then the timer
// stops.
import { expect, it } from "vitest";
import { UnrecordedFailures } from "../../src/gateway/unrecorded-failures.js";
import type { Timers } from "../../src/runtime/deps.js";
import type { SessionWriter } from "../../src/store/store.js";
import { deferred } from "../helpers/deferred.js";
import { manualTimeouts } from "../helpers/timers.js";

it("retries every period while the store refuses, writes the failure once it can, then stops", async () => {
  const time = manualTimeouts();
  const stopped = deferred<void>();
  const timers: Timers = { setTimeout: (fn, ms) => time.timers.setTimeout(fn, ms), clearTimeout: (handle) => (time.timers.clearTimeout(handle), stopped.resolve()) };
  const written: unknown[] = [];
  let refused = deferred<void>();
  let full = true;
  const writer: SessionWriter = {
    sessionKey: "console:s1",
    fence: { holder: "replica-a", token: 1 },
    commit: async (step: unknown) => {
      if (full) {
        refused.resolve();
        throw new Error("SQLITE_FULL: database or disk is full");
      }
      written.push(step);
    },
  } as SessionWriter;
  const failures = new UnrecordedFailures(2000, timers);
  failures.add("req-1", writer, "the model is unavailable", "store_failing");
  expect(time.delays()).toEqual([2000]);

  time.fire(2000);
  await refused.promise;
  expect(written).toEqual([]);
  expect(failures.has("req-1")).toBe(true);
  expect(time.delays()).toEqual([2000]);

  full = false;
  refused = deferred<void>();
  time.fire(2000);
  await stopped.promise;
  expect(written).toEqual([{ request: { id: "req-1", status: "failed", error: "the model is unavailable", errorCode: "store_failing" } }]);
  expect(failures.has("req-1")).toBe(false);
  expect(time.delays()).toEqual([]);
});
