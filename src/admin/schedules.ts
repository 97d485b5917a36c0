// The operator's view of scheduled jobs (`npm run admin -- schedules`): owner, chat, schedule, next run, last result.
import type { Store } from "../store/store.js";
import { scheduleText } from "../schedules/schedule.js";
import { ago, table } from "./text.js";

export interface ScheduleItem {
  id: string;
  ownerId: string;
  sessionKey: string;
  schedule: string;
  timezone: string;
  status: string;
  /** ISO 8601 UTC, or null when the job has no further run. */
  nextRun: string | null;
  lastRun: string | null;
  lastResult: string | null;
  createdByTask: string | null;
}

export async function schedulesView(store: Pick<Store, "schedules">, options: { limit: number }): Promise<{ schedules: ScheduleItem[] }> {
  const jobs = await store.schedules.all(options.limit);
  return {
    schedules: jobs.map((j) => ({
      id: j.id,
      ownerId: j.ownerId,
      sessionKey: j.sessionKey,
      schedule: scheduleText(j.schedule),
      timezone: j.timezone,
      status: j.status,
      nextRun: j.nextDue === null ? null : new Date(j.nextDue).toISOString(),
      lastRun: j.lastDue === null ? null : new Date(j.lastDue).toISOString(),
      lastResult: j.lastResult,
      createdByTask: j.createdByTask,
    })),
  };
}

export function formatSchedules(view: { schedules: ScheduleItem[] }, now = Date.now()): string {
  if (view.schedules.length === 0) return "No scheduled jobs.";
  const when = (iso: string | null) => (iso === null ? "—" : `${iso.slice(0, 16).replace("T", " ")} (${ago(Date.parse(iso), now)})`);
  return `Scheduled jobs (${view.schedules.length})\n${table(
    [
      { title: "job", width: 16 },
      { title: "owner", width: 22 },
      { title: "chat", width: 30 },
      { title: "schedule", width: 34 },
      { title: "status", width: 7 },
      { title: "next run (UTC)", width: 30 },
      { title: "last result", width: 40 },
    ],
    view.schedules.map((s) => [s.id, s.ownerId, s.sessionKey, `${s.schedule} ${s.timezone}`, s.status, when(s.nextRun), s.lastResult ?? "—"]),
  )}`;
}
