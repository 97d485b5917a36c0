// Scheduled jobs in the simulation: the scenario makes a few jobs (one-shot and cron) in its sessions, the world runs
// the real scheduler on the virtual clock, time passes while the process is up (the scheduler wakes on its timers)
// and while it is down (a restart after a gap: runs missed by less than the grace run once, older ones are skipped),
// and at the end "each due time at most once, and once unless skipped" is checked against what the store holds.
import { parseRunExternalId } from "../../src/schedules/run-id.js";
import { dueTimes, firstDue, type Schedule } from "../../src/schedules/schedule.js";
import type { NewScheduleJob, Store } from "../../src/store/store.js";
import type { Prng } from "./prng.js";
import type { SimMove } from "./sim-store.js";
import { checkScheduledRuns, type DueTime, type RunRecord } from "./schedule-invariant.js";

/** SCHEDULE_GRACE in the simulation. */
export const SIM_GRACE_MS = 3_600_000;
const MINUTE = 60_000;
const CRONS = ["*/20 * * * *", "30 * * * *", "0,30 1-3 * * *", "15 2,14 * * *"];
const ZONES = ["UTC", "Europe/Berlin", "America/New_York"];

/** The jobs a scenario starts with: in its sessions, owned by each session's user, due within the next few hours. */
export function simJobs(prng: Prng, sessions: string[], now: number): NewScheduleJob[] {
  const jobs: NewScheduleJob[] = [];
  for (let i = 0; i < 1 + prng.int(3); i++) {
    const session = prng.pick(sessions);
    const timezone = prng.pick(ZONES);
    const schedule: Schedule = prng.chance(0.4)
      ? { kind: "once", at: now + (1 + prng.int(4 * 60)) * MINUTE + prng.int(60_000) }
      : { kind: "cron", cron: prng.pick(CRONS) };
    jobs.push({
      id: `sch_sim${i + 1}`,
      ownerId: `user-${session}`,
      sessionKey: session,
      instruction: `scheduled ${i + 1}: please help with the digest`,
      schedule,
      timezone,
      nextDue: firstDue({ schedule, timezone }, now),
      createdByTask: null,
    });
  }
  return jobs;
}

/**
 * What happened to each due time, read back: a scheduled run's request (however many the store holds for one due
 * time) is "ran"; a due time a committed move settled without running it is "skipped" when it was folded into that
 * move's run (less than the grace late), or when it was too late and the move told the owner. Checked against every
 * due time of every job up to `end`.
 */
export async function checkSimSchedules(store: Store, jobs: NewScheduleJob[], moves: SimMove[], sessions: string[], created: number, end: number): Promise<string[]> {
  const expected: DueTime[] = [];
  const times = new Map(jobs.map((j) => [j.id, dueTimes(j.schedule, j.timezone)]));
  for (const job of jobs) {
    const t = times.get(job.id)!;
    for (let due = firstDue(job, created); due !== null && due <= end; due = t.after(due)) expected.push({ jobId: job.id, due });
  }
  const records: RunRecord[] = [];
  for (const key of sessions) {
    for (const r of await store.requests.ofSession(key)) {
      const run = parseRunExternalId(r.externalId.replace(/#.*$/, ""));
      if (run) records.push({ jobId: run.jobId, due: run.due, outcome: "ran" });
    }
  }
  for (const move of moves) {
    const t = times.get(move.jobId)!;
    for (let due: number | null = move.from; due !== null && (move.next === null ? due <= move.lastDue : due < move.next); due = t.after(due)) {
      if (move.result === "run" && due === move.lastDue) continue;
      const late = due <= move.at - SIM_GRACE_MS;
      if (!late || move.told) records.push({ jobId: move.jobId, due, outcome: "skipped" });
    }
  }
  return checkScheduledRuns(expected, records);
}
