// The job model: what a job is and when it is due. Due times come from the schedule alone, never from when the
// previous run happened or ended, so a late or slow run does not move the next one (no drift).
import { cronTimes } from "./cron.js";

/** When a job runs: once at an instant (from `at` or `in_seconds`), or on a five-field cron in the job's zone. */
export type Schedule = { kind: "once"; at: number } | { kind: "cron"; cron: string };

/** A job as the `schedule` tool defines it. */
export interface JobSpec {
  /** What the model is asked to do when the job is due, as the input of a new task. */
  instruction: string;
  schedule: Schedule;
  /** The IANA zone the cron is read in and times are shown in. */
  timezone: string;
}

/** What the rules need of a stored job. */
export interface DueJob {
  id: string;
  schedule: Schedule;
  timezone: string;
  /** The earliest due time not yet run or skipped; null once a one-shot job is over. */
  nextDue: number | null;
}

/** A schedule's due times in a zone; made once for several questions (reading a cron is not free). */
export interface DueTimes {
  /** The first due time strictly after `at`, or null when the schedule has none left. */
  after(at: number): number | null;
  /** The last due time at or before `at`, or null when the schedule had none. */
  atOrBefore(at: number): number | null;
}

export function dueTimes(schedule: Schedule, zone: string): DueTimes {
  switch (schedule.kind) {
    case "once":
      return { after: (at) => (schedule.at > at ? schedule.at : null), atOrBefore: (at) => (schedule.at <= at ? schedule.at : null) };
    case "cron":
      return cronTimes(schedule.cron, zone);
    default: {
      const never: never = schedule;
      throw new Error(`unknown schedule ${JSON.stringify(never)}`);
    }
  }
}

/** The first due time strictly after `after`, or null when the schedule has none left. */
export function dueAfter(schedule: Schedule, zone: string, after: number): number | null {
  return dueTimes(schedule, zone).after(after);
}

/** A job's first due time when it is created at `now`. */
export function firstDue(spec: Pick<JobSpec, "schedule" | "timezone">, now: number): number | null {
  return spec.schedule.kind === "once" ? spec.schedule.at : dueAfter(spec.schedule, spec.timezone, now);
}

/** "once" or "cron 0 9 * * 1-5": how a listing names the schedule (the zone is shown beside it). */
export function scheduleText(schedule: Schedule): string {
  return schedule.kind === "once" ? "once" : `cron ${schedule.cron}`;
}
