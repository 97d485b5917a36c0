import { describe, expect, it } from "vitest";
import { compareRuns, direction, formatComparison, median, parseResults } from "../../bench/compare.js";
import { resolveRef } from "../../bench/compare-run.js";

// The regression guard's arithmetic: medians of alternated runs, the ratio, the spread, and the verdict that makes
// `npm run bench -- --compare <ref>` exit 1.

const run = (rate: number, cpu: number, p99: number) => [{ scenario: "single-turn", messages: 10000, messages_per_s: rate, p99_ms: p99, cpu_us_per_message: cpu }];

describe("bench --compare", () => {
  it("takes the median of each side and the spread of the pairwise ratios", () => {
    const rows = compareRuns([run(1000, 800, 3), run(1200, 820, 2), run(1100, 790, 9)], [run(2100, 400, 1), run(2400, 410, 1), run(2200, 390, 1)], 10);
    const rate = rows.find((r) => r.figure === "messages_per_s")!;
    expect(rate).toMatchObject({ before: 1100, after: 2200, verdict: "better" });
    expect(rate.ratio).toBeCloseTo(2, 5);
    expect(rate.spread[0]).toBeCloseTo(2, 5);
    expect(rate.spread[1]).toBeCloseTo(2.1, 5);
    expect(rows.find((r) => r.figure === "cpu_us_per_message")).toMatchObject({ before: 800, after: 400, verdict: "better" });
    // a tail latency is shown but does not decide; a count is neither better nor worse
    expect(rows.find((r) => r.figure === "p99_ms")?.verdict).toBe("reported");
    expect(rows.find((r) => r.figure === "messages")?.verdict).toBe("reported");
  });

  it("calls a planted slowdown worse, and noise within the threshold the same", () => {
    const slower = compareRuns([run(1000, 800, 1), run(1000, 800, 1), run(1000, 800, 1)], [run(850, 800, 1), run(860, 800, 1), run(840, 800, 1)], 10);
    expect(slower.find((r) => r.figure === "messages_per_s")?.verdict).toBe("worse");
    const costlier = compareRuns([run(1000, 800, 1)], [run(1000, 960, 1)], 10);
    expect(costlier.find((r) => r.figure === "cpu_us_per_message")?.verdict).toBe("worse");
    const noise = compareRuns([run(1000, 800, 1)], [run(950, 840, 1)], 10);
    expect(noise.filter((r) => r.verdict === "worse")).toEqual([]);
    // a median 20 % down, but one pair of runs went up: the machine's noise, not the change
    const straddling = compareRuns([run(1000, 800, 1), run(1000, 800, 1), run(900, 800, 1)], [run(700, 800, 1), run(800, 800, 1), run(950, 800, 1)], 10);
    expect(straddling.find((r) => r.figure === "messages_per_s")).toMatchObject({ verdict: "same" });
  });

  it("compares only what both sides measured", () => {
    const rows = compareRuns([run(1000, 800, 1)], [[...run(1000, 800, 1), { scenario: "new-one", messages_per_s: 5 }]], 10);
    expect(rows.map((r) => r.scenario)).not.toContain("new-one");
  });

  it("knows which way is better from a figure's name", () => {
    expect(direction("user_messages_per_s")).toBe("higher");
    expect(direction("rounds_per_s")).toBe("higher");
    expect(direction("cpu_us_per_message")).toBe("lower");
    expect(direction("db_bytes_per_message")).toBe("lower");
    expect(direction("overhead_p99_ms")).toBe("lower");
    expect(direction("statements_per_user_message")).toBe("lower");
    expect(direction("wall_us_per_user_message")).toBe("lower");
    expect(direction("sessions")).toBeNull();
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it("judges statements per user message: more PostgreSQL round trips is worse", () => {
    const before = [[{ scenario: "handoff-roundtrip-postgres", statements_per_user_message: 18 }]];
    const after = [[{ scenario: "handoff-roundtrip-postgres", statements_per_user_message: 24 }]];
    expect(compareRuns(before, after, 10)[0]).toMatchObject({ figure: "statements_per_user_message", verdict: "worse" });
  });

  it("judges the CPU of the gateway and of its PostgreSQL server per user message", () => {
    const before = [[{ scenario: "handoff-roundtrip-postgres", cpu_us_per_user_message: 6000, server_cpu_us_per_user_message: 5000, wall_us_per_user_message: 9000 }]];
    const after = [[{ scenario: "handoff-roundtrip-postgres", cpu_us_per_user_message: 4000, server_cpu_us_per_user_message: 6000, wall_us_per_user_message: 8000 }]];
    const verdicts = Object.fromEntries(compareRuns(before, after, 10).map((r) => [r.figure, r.verdict]));
    expect(verdicts).toEqual({ cpu_us_per_user_message: "better", server_cpu_us_per_user_message: "worse", wall_us_per_user_message: "reported" });
  });

  it("reads result lines and skips anything else a run prints", () => {
    expect(parseResults('{"scenario":"a","x":1}\nwarning: something\n{broken\n{"not":"a result"}\n')).toEqual([{ scenario: "a", x: 1 }]);
  });

  it("prints one line per figure with the ref's name", () => {
    const table = formatComparison(compareRuns([run(1000, 800, 1)], [run(2000, 800, 1)], 10), "main");
    expect(table.split("\n")[0]).toContain("main");
    expect(table).toMatch(/single-turn\s+messages_per_s\s+1000\s+2000\s+2\.00×/);
  });

  it("refuses a ref that names no commit, or that is an option in disguise", () => {
    expect(resolveRef("HEAD")).toHaveProperty("sha");
    expect(resolveRef("no-such-branch-anywhere")).toEqual({ problem: expect.stringContaining("names no commit") });
    expect(resolveRef("--output=/tmp/x")).toEqual({ problem: expect.stringContaining("is not a git revision") });
    expect(resolveRef("a;rm -rf /")).toEqual({ problem: expect.stringContaining("is not a git revision") });
  });
});
