// A model of the scheduler's protocol over the real rules (planDue, dueAfter, runExternalId), for the invariant
// checker: jobs in DST-changing zones, replicas that tick on a virtual clock, go down for hours, die mid-claim and race
// for the same due time. A claim is one transaction — compare-and-set on the job's next due time, the run's request
// (the inbox keeps one per external id), the skips, the new next due time — as the store role will make it.
import { planDue, type DueRange } from "../../src/schedules/due.js";
import { runExternalId } from "../../src/schedules/run-id.js";
import { dueTimes, firstDue, type DueTimes, type Schedule } from "../../src/schedules/schedule.js";
import { Prng } from "../sim/prng.js";
import type { DueTime, RunRecord } from "../sim/schedule-invariant.js";

/** Bugs the invariant must catch. */
export interface ModelPlants {
  /** The next due time is computed from when the run ends (7 minutes later), not from the schedule. */
  nextFromRunEnd?: boolean;
  /** The claim does not compare-and-set the job's next due time: racing replicas both commit their plans. */
  noCompareAndSet?: boolean;
  /** A run's id is per attempt, not per due time, so the inbox cannot tell a second run of a due time from a new one. */
  attemptRunIds?: boolean;
  /** Due times too late to run are dropped without a record (and without telling the owner). */
  silentLate?: boolean;
}

export interface ModelOptions {
  seed: number;
  graceMs: number;
  replicas: 1 | 2;
  plants?: ModelPlants;
}

interface ModelJob {
  id: string;
  schedule: Schedule;
  timezone: string;
  nextDue: number | null;
  times: DueTimes;
}

// Each start is a few days before a DST change in one of the zones.
const STARTS = [Date.UTC(2026, 2, 6), Date.UTC(2026, 2, 27), Date.UTC(2026, 9, 23), Date.UTC(2026, 9, 30), Date.UTC(2026, 9, 2)];
const ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC"];
const CRONS = ["30 2 * * *", "*/20 * * * *", "0 9 * * 1-5", "30 * * * *", "0,30 1-3 * * *", "15 2,14 * * *"];
const DAYS = 3;
const MINUTE = 60_000;

export function runSchedulerModel(options: ModelOptions) {
  const rng = new Prng(options.seed);
  const plants = options.plants ?? {};
  const start = rng.pick(STARTS) + rng.int(24 * 60) * MINUTE;
  const end = start + DAYS * 86_400_000;
  const jobs = new Map<string, ModelJob>();
  for (let i = 0; i < 2 + rng.int(3); i++) {
    const timezone = rng.pick(ZONES);
    const schedule: Schedule = rng.chance(0.3)
      ? { kind: "once", at: start + 1000 + rng.int(DAYS * 24 * 60) * MINUTE + rng.int(60_000) }
      : { kind: "cron", cron: rng.pick(CRONS) };
    const id = `sch_${i}`;
    jobs.set(id, { id, schedule, timezone, nextDue: firstDue({ schedule, timezone }, start), times: dueTimes(schedule, timezone) });
  }
  const inbox = new Set<string>();
  const records: RunRecord[] = [];
  const stats = { runs: 0, skipped: 0, folded: 0, late: 0, races: 0, crashes: 0, duplicates: 0 };
  const downUntil = [start, start];
  let attempts = 0;

  const expand = (job: ModelJob, range: DueRange): number[] => {
    const dues = [range.first];
    while (dues.at(-1)! < range.last) dues.push(job.times.after(dues.at(-1)!)!);
    return dues;
  };

  const tick = (now: number, up: number[], crashes = true) => {
    // Every replica that is up reads the jobs and plans before any of them commits: a race, when two find the same job.
    const claims = up.flatMap((replica) =>
      [...jobs.values()]
        .filter((job) => job.nextDue !== null && job.nextDue <= now)
        .map((job) => ({ replica, job, seen: job.nextDue, plan: planDue(job, now, options.graceMs) })),
    );
    const claimed = new Map<string, number>();
    for (const claim of claims) claimed.set(claim.job.id, (claimed.get(claim.job.id) ?? 0) + 1);
    stats.races += [...claimed.values()].filter((n) => n > 1).length;
    for (const { replica, job, seen, plan } of rng.chance(0.5) ? claims : claims.reverse()) {
      if (downUntil[replica]! > now) continue; // it died earlier in this tick
      if (crashes && rng.chance(0.03)) {
        // The replica dies before its transaction commits: none of it happened.
        stats.crashes++;
        downUntil[replica] = now + (1 + rng.int(90)) * MINUTE;
        continue;
      }
      if (!plants.noCompareAndSet && job.nextDue !== seen) continue; // another replica claimed it first
      if (plan.run !== null) {
        const id = plants.attemptRunIds ? `${runExternalId(job.id, plan.run)}#${attempts++}` : runExternalId(job.id, plan.run);
        if (inbox.has(id)) stats.duplicates++;
        else {
          inbox.add(id);
          records.push({ jobId: job.id, due: plan.run, outcome: "ran" });
          stats.runs++;
        }
      }
      for (const [range, kind] of [
        [plan.folded, "folded"],
        [plan.late, "late"],
      ] as const) {
        if (!range || (kind === "late" && plants.silentLate)) continue;
        for (const due of expand(job, range)) records.push({ jobId: job.id, due, outcome: "skipped" });
        stats[kind] += range.count;
        stats.skipped += range.count;
      }
      job.nextDue = plants.nextFromRunEnd && plan.run !== null ? job.times.after(now + 7 * MINUTE) : plan.next;
    }
  };

  for (let now = start; now < end; ) {
    for (let r = 0; r < options.replicas; r++) {
      if (downUntil[r]! <= now && rng.chance(0.01)) downUntil[r] = now + (10 + rng.int(6 * 60)) * MINUTE; // an outage
    }
    const up = [...Array(options.replicas).keys()].filter((r) => downUntil[r]! <= now);
    tick(now, up);
    // A replica wakes at the next due time (up to a minute late: a busy event loop) or when it is back from an outage.
    const stillUp = up.filter((r) => downUntil[r]! <= now);
    const due = stillUp.length > 0 ? Math.min(...[...jobs.values()].map((j) => j.nextDue ?? Infinity)) : Infinity;
    const back = Math.min(...downUntil.slice(0, options.replicas).filter((d) => d > now));
    now = Math.max(now + 1000, Math.min(due, back, end) + rng.int(60) * 1000);
  }
  downUntil.fill(end);
  tick(end, [...Array(options.replicas).keys()], false);

  const expected: DueTime[] = [];
  for (const job of jobs.values()) {
    for (let due = firstDue(job, start); due !== null && due <= end; due = job.times.after(due)) {
      expected.push({ jobId: job.id, due });
    }
  }
  return { expected, records, stats, start };
}
