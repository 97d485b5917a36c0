// "Each due time at most once, and once unless skipped": the checker on hand-made records, then on a model of the
// scheduler's protocol over the real rules (outages, replicas dying mid-claim, two replicas racing), clean and with
// a planted bug for each way the invariant can break.
import { describe, expect, it } from "vitest";
import { checkScheduledRuns, type DueTime, type RunRecord } from "../sim/schedule-invariant.js";
import { runSchedulerModel, type ModelOptions, type ModelPlants } from "./scheduler-model.js";

const HOUR = 3_600_000;
const t0 = Date.parse("2026-03-29T00:00:00Z");
const dues: DueTime[] = [0, 1, 2].map((h) => ({ jobId: "sch_a", due: t0 + h * HOUR }));
const record = (h: number, outcome: RunRecord["outcome"], jobId = "sch_a"): RunRecord => ({ jobId, due: t0 + h * HOUR, outcome });

describe("checkScheduledRuns", () => {
  it("passes when every due time ran or was skipped once", () => {
    expect(checkScheduledRuns(dues, [record(0, "skipped"), record(1, "ran"), record(2, "ran")])).toEqual([]);
    expect(checkScheduledRuns([], [])).toEqual([]);
  });

  it("catches a due time that ran twice (a failover that ran it again)", () => {
    expect(checkScheduledRuns(dues, [record(0, "ran"), record(1, "ran"), record(1, "ran"), record(2, "ran")])).toEqual([
      "at most once: job sch_a's run due 2026-03-29T01:00:00.000Z ran 2 times",
    ]);
  });

  it("catches a due time that both ran and was skipped, or was skipped twice", () => {
    expect(checkScheduledRuns(dues, [record(0, "ran"), record(0, "skipped"), record(1, "skipped"), record(1, "skipped"), record(2, "ran")])).toEqual([
      "at most once: job sch_a's run due 2026-03-29T00:00:00.000Z both ran and was skipped",
      "at most once: job sch_a's run due 2026-03-29T01:00:00.000Z was skipped 2 times (the owner told each time)",
    ]);
  });

  it("catches a due time that silently never ran", () => {
    expect(checkScheduledRuns(dues, [record(0, "ran"), record(2, "ran")])).toEqual([
      "once unless skipped: job sch_a's run due 2026-03-29T01:00:00.000Z neither ran nor was skipped",
    ]);
  });

  it("catches a run at a time that was never due (drift, a wrong zone), once per time", () => {
    const drifted = { jobId: "sch_a", due: t0 + HOUR + 90_000, outcome: "ran" as const };
    expect(checkScheduledRuns(dues, [record(0, "ran"), record(1, "ran"), record(2, "ran"), drifted, drifted])).toEqual([
      "on schedule: job sch_a ran a run at 2026-03-29T01:01:30.000Z, which is not one of its due times",
    ]);
    expect(checkScheduledRuns(dues, [record(0, "ran"), record(1, "ran"), record(2, "ran"), record(1, "ran", "sch_b")])).toEqual([
      "on schedule: job sch_b ran a run at 2026-03-29T01:00:00.000Z, which is not one of its due times",
    ]);
  });
});

const GRACE = HOUR;
const SEEDS = 10;

/** The first seed (from 1) whose model run breaks the invariant, with its first violation. */
function firstViolation(options: Omit<ModelOptions, "seed">, pattern: RegExp, seeds = 30): string | null {
  for (let seed = 1; seed <= seeds; seed++) {
    const found = checkScheduledRuns(...run({ ...options, seed })).find((v) => pattern.test(v));
    if (found) return `seed ${seed}: ${found}`;
  }
  return null;
}
function run(options: ModelOptions): [DueTime[], RunRecord[]] {
  const result = runSchedulerModel(options);
  return [result.expected, result.records];
}

describe("the scheduler's protocol over the real rules", () => {
  it.each([1, 2] as const)(
    `holds the invariant over ${SEEDS} seeds with outages and crashes, %i replica(s)`,
    (replicas) => {
      const totals = { runs: 0, late: 0, folded: 0, races: 0, crashes: 0 };
      for (let seed = 1; seed <= SEEDS; seed++) {
        const result = runSchedulerModel({ seed, graceMs: GRACE, replicas });
        const violations = checkScheduledRuns(result.expected, result.records);
        expect(violations, `seed ${seed} (${replicas} replicas): ${violations.slice(0, 3).join("; ")}`).toEqual([]);
        for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += result.stats[key];
      }
      // The workload exercised what the invariant is about: runs, skips and folds after outages, deaths mid-claim, races.
      expect(totals.runs).toBeGreaterThan(SEEDS * 50);
      expect(totals.late).toBeGreaterThan(0);
      expect(totals.folded).toBeGreaterThan(0);
      expect(totals.crashes).toBeGreaterThan(SEEDS);
      if (replicas === 2) expect(totals.races).toBeGreaterThan(SEEDS * 10);
    },
    60_000,
  );

  it.each([
    ["the run's id alone, without the claim's compare-and-set", { noCompareAndSet: true }, "duplicates"],
    ["the claim's compare-and-set alone, with run ids per attempt", { attemptRunIds: true }, "races"],
  ] as const)(
    "keeps racing replicas to one run per due time by %s",
    (_how, plants, stopped) => {
      let stops = 0;
      for (let seed = 1; seed <= 3; seed++) {
        const result = runSchedulerModel({ seed, graceMs: GRACE, replicas: 2, plants });
        expect(
          checkScheduledRuns(result.expected, result.records).filter((v) => / ran \d+ times| both ran/.test(v)),
          `seed ${seed}`,
        ).toEqual([]);
        stops += result.stats[stopped];
      }
      expect(stops).toBeGreaterThan(0);
    },
    60_000,
  );
});

describe("every way to break it is caught (planted bugs)", () => {
  const planted = (plants: ModelPlants, replicas: 1 | 2, pattern: RegExp) => firstViolation({ graceMs: GRACE, replicas, plants }, pattern);

  it("at most once: run ids per attempt and no compare-and-set let two replicas run the same due time", () => {
    expect(planted({ attemptRunIds: true, noCompareAndSet: true }, 2, /at most once/)).toMatch(/^seed \d+: at most once: job sch_\d's run due \S+ ran 2 times$/);
  });

  it("once unless skipped: a next due time taken from the end of the run loses due times", () => {
    expect(planted({ nextFromRunEnd: true }, 1, /once unless skipped/)).toMatch(/^seed \d+: once unless skipped: job sch_\d's run due \S+ neither ran nor was skipped$/);
  });

  it("once unless skipped: late due times dropped without a record are caught", () => {
    expect(planted({ silentLate: true }, 1, /once unless skipped/)).toMatch(/^seed \d+: once unless skipped: job sch_\d's run due \S+ neither ran nor was skipped$/);
  });
});
