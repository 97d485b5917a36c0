// The scheduled runs' invariant, as a pure function over what happened: each due time of each job at most once, and
// once unless skipped. "What happened" is a list of records the simulation reads back from the store (a scheduled
// run's request, a skip); "what was due" is the list of due times the schedules had up to the end of the scenario.

export type RunOutcome = "ran" | "skipped";

/** One thing that happened to one due time of one job. */
export interface RunRecord {
  jobId: string;
  due: number;
  outcome: RunOutcome;
}

/** A due time a job's schedule had, which must have an outcome by the end of the scenario. */
export interface DueTime {
  jobId: string;
  due: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The violations, as sentences: a due time that ran twice, that both ran and was skipped, that was skipped twice
 * (the owner told twice), that neither ran nor was skipped (a run silently lost), or a record for a time that was
 * never due (a run off its schedule: drift, or a wrong zone).
 */
export function checkScheduledRuns(expected: readonly DueTime[], records: readonly RunRecord[]): string[] {
  const violations: string[] = [];
  const seen = new Map<string, { ran: number; skipped: number }>();
  const key = (jobId: string, due: number) => `${jobId}@${due}`;
  for (const r of records) {
    const counts = seen.get(key(r.jobId, r.due)) ?? { ran: 0, skipped: 0 };
    counts[r.outcome]++;
    seen.set(key(r.jobId, r.due), counts);
  }
  const due = new Set(expected.map((d) => key(d.jobId, d.due)));
  for (const d of expected) {
    const counts = seen.get(key(d.jobId, d.due));
    const at = `job ${d.jobId}'s run due ${iso(d.due)}`;
    if (!counts) violations.push(`once unless skipped: ${at} neither ran nor was skipped`);
    else if (counts.ran > 1) violations.push(`at most once: ${at} ran ${counts.ran} times`);
    else if (counts.ran === 1 && counts.skipped > 0) violations.push(`at most once: ${at} both ran and was skipped`);
    else if (counts.skipped > 1) violations.push(`at most once: ${at} was skipped ${counts.skipped} times (the owner told each time)`);
  }
  const offSchedule = new Set<string>();
  for (const r of records) {
    if (due.has(key(r.jobId, r.due)) || offSchedule.has(key(r.jobId, r.due))) continue;
    offSchedule.add(key(r.jobId, r.due));
    violations.push(`on schedule: job ${r.jobId} ${r.outcome === "ran" ? "ran" : "skipped"} a run at ${iso(r.due)}, which is not one of its due times`);
  }
  return violations;
}
