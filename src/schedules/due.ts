// The grace rule: what to do with a job's due times that have come, whether the scheduler is on time or the gateway
// was down for a while. Every due time up to `now` gets exactly one outcome — run, folded into the run, or skipped as
// too late — and the job moves on to its first due time after `now`, from the schedule.
import { dueTimes, type DueJob, type DueTimes } from "./schedule.js";

/** SCHEDULE_GRACE's default: a run missed by less than an hour still runs. */
export const DEFAULT_GRACE_MS = 3_600_000;
/** Due times counted one by one in a range; past that, a range says "more" (a month of a per-minute job). */
export const MAX_COUNTED = 1000;

/** Consecutive due times of one job, first to last inclusive. */
export interface DueRange {
  first: number;
  last: number;
  /** How many due times the range holds, or MAX_COUNTED when `more`. */
  count: number;
  /** Counting stopped at MAX_COUNTED: the range holds more. */
  more: boolean;
}

export interface DuePlan {
  /** The due time to run now (the latest one less than the grace late), or null. */
  run: number | null;
  /** Due times within the grace that are older than `run`: the one run stands for them (a missed run runs once). */
  folded: DueRange | null;
  /** Due times the grace or more late: skipped, and the owner is told. */
  late: DueRange | null;
  /** The job's next due time after `now`; null when a one-shot job is over. */
  next: number | null;
}

/**
 * What to do with `job`'s due times up to `now`. A due time exactly `graceMs` late counts as too late. Nothing is
 * due (every field null but `next`) while `job.nextDue` is in the future.
 */
export function planDue(job: DueJob, now: number, graceMs: number): DuePlan {
  const { nextDue } = job;
  if (nextDue === null || nextDue > now) return { run: null, folded: null, late: null, next: nextDue };
  const times = dueTimes(job.schedule, job.timezone);
  const cutoff = now - graceMs;
  const latest = times.atOrBefore(now) ?? nextDue;
  const run = latest > cutoff ? latest : null;
  const late = nextDue <= cutoff ? range(times, nextDue, times.atOrBefore(cutoff) ?? nextDue) : null;
  let folded: DueRange | null = null;
  if (run !== null) {
    const first = nextDue > cutoff ? nextDue : times.after(cutoff);
    if (first !== null && first < run) folded = range(times, first, times.atOrBefore(run - 1) ?? first);
  }
  return { run, folded, late, next: times.after(now) };
}

/** The due times from `first` to `last`, counted up to MAX_COUNTED. */
function range(times: DueTimes, first: number, last: number): DueRange {
  let count = 1;
  for (let at = first; at < last; count++) {
    if (count === MAX_COUNTED) return { first, last, count, more: true };
    at = times.after(at) ?? last;
  }
  return { first, last, count, more: false };
}
