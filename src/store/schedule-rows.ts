// Scheduled jobs' rows read back (both backends): the schedule is JSON in TEXT, checked here.
import { z } from "zod";
import type { Row } from "./rows.js";
import { CorruptStateError, type NewScheduleJob, type ScheduleJobRecord, type ScheduleJobStatus } from "./store.js";

const scheduleSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("once"), at: z.number().int() }),
  z.object({ kind: z.literal("cron"), cron: z.string().min(1) }),
]);
const STATUSES: readonly ScheduleJobStatus[] = ["active", "paused", "done"];

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function toScheduleJob(r: Row): ScheduleJobRecord {
  let schedule: ScheduleJobRecord["schedule"];
  try {
    schedule = scheduleSchema.parse(JSON.parse(String(r.schedule)));
  } catch (error) {
    throw new CorruptStateError(`scheduled job ${String(r.id)} has an unreadable schedule`, { cause: error });
  }
  const status = String(r.status) as ScheduleJobStatus;
  if (!STATUSES.includes(status)) throw new CorruptStateError(`scheduled job ${String(r.id)} has an unknown status "${status}"`);
  return {
    id: String(r.id),
    ownerId: String(r.owner_id),
    sessionKey: String(r.session_key),
    instruction: String(r.instruction),
    schedule,
    timezone: String(r.timezone),
    nextDue: num(r.next_due),
    status,
    lastDue: num(r.last_due),
    lastResult: str(r.last_result),
    createdByTask: str(r.created_by_task),
    traceparent: str(r.traceparent),
    createdAt: Number(r.created_at),
  };
}

/** The values of an insert, in the column order both backends' INSERT statements use. */
export function jobValues(job: NewScheduleJob, now: number): unknown[] {
  return [job.id, job.ownerId, job.sessionKey, job.instruction, JSON.stringify(job.schedule), job.timezone, job.nextDue, job.createdByTask, now, job.traceparent ?? null];
}

/** Reads rows, leaving out (and naming) the ones that cannot be read: one damaged job must not stop the others. */
export function readJobs(rows: Row[], onCorrupt: (error: CorruptStateError) => void): ScheduleJobRecord[] {
  return rows.flatMap((r) => {
    try {
      return [toScheduleJob(r)];
    } catch (error) {
      if (error instanceof CorruptStateError) onCorrupt(error);
      else throw error;
      return [];
    }
  });
}
