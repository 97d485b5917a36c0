// repeat(): setInterval on injected timers, so that the gateway's periodic chores run on a clock tests control.
import { describe, expect, it } from "vitest";
import { repeat } from "../../src/runtime/repeat.js";
import { manualTimeouts } from "../helpers/timers.js";

describe("repeat", () => {
  it("calls the function once per period, each time after the period, until stopped", () => {
    const time = manualTimeouts();
    let calls = 0;
    const stop = repeat(time.timers, 30_000, () => calls++);
    expect(calls).toBe(0);
    expect(time.delays()).toEqual([30_000]);
    time.fire(30_000);
    time.fire(30_000);
    expect(calls).toBe(2);
    expect(time.delays()).toEqual([30_000]);
    stop();
    expect(time.delays()).toEqual([]);
    time.fireAll();
    expect(calls).toBe(2);
  });

  it("stops for good when stopped from inside the function", () => {
    const time = manualTimeouts();
    let calls = 0;
    const stop: () => void = repeat(time.timers, 10, () => {
      calls++;
      stop();
    });
    time.fire(10);
    time.fireAll();
    expect(calls).toBe(1);
    expect(time.delays()).toEqual([]);
  });

  it("keeps its period when the function throws", () => {
    const time = manualTimeouts();
    const stop = repeat(time.timers, 10, () => {
      throw new Error("chore failed");
    });
    expect(() => time.fire(10)).toThrow("chore failed");
    expect(time.delays()).toEqual([10]);
    stop();
  });
});
