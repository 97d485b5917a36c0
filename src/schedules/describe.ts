// Times and jobs in words for people and the model: "tomorrow at 09:00 (Europe/Berlin), 2026-11-28T09:00:00+01:00".
// English and the 24-hour clock, like the rest of the gateway's own messages; the ISO form is there for the model.
import type { DueRange } from "./due.js";
import { scheduleText, type DueJob } from "./schedule.js";
import { isoInZone, wallTime } from "./zone.js";

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const pad = (n: number) => String(n).padStart(2, "0");

/** The day and time of `instant` in `zone`, said from `now`: "today at 09:00", "on Friday at 18:30", "on 4 March 2027 at 07:15". */
export function dayAndTime(instant: number, zone: string, now: number): string {
  const w = wallTime(instant, zone);
  const today = wallTime(now, zone);
  const days = (Date.UTC(w.year, w.month - 1, w.day) - Date.UTC(today.year, today.month - 1, today.day)) / 86_400_000;
  const time = `${pad(w.hour)}:${pad(w.minute)}${w.second ? `:${pad(w.second)}` : ""}`;
  const day =
    days === 0
      ? "today"
      : days === 1
        ? "tomorrow"
        : days === -1
          ? "yesterday"
          : days > 1 && days < 7
            ? `on ${WEEKDAYS[new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay()]}`
            : `on ${w.day} ${MONTHS[w.month - 1]} ${w.year}`;
  return `${day} at ${time}`;
}

/** A run time as the tools answer it: "tomorrow at 09:00 (Europe/Berlin), 2026-11-28T09:00:00+01:00". */
export function runText(instant: number, zone: string, now: number): string {
  return `${dayAndTime(instant, zone, now)} (${zone}), ${isoInZone(instant, zone)}`;
}

export interface ListedJob extends DueJob {
  instruction: string;
  /** Why the job is paused (a permanent delivery failure), when it is. */
  pausedBecause?: string | null;
}

/** One job of a listing: id, schedule, next run (in the reader's zone) and the start of its instruction. */
export function jobLine(job: ListedJob, zone: string, now: number): string {
  const where = job.timezone === zone ? "" : ` in ${job.timezone}`;
  const next = job.pausedBecause ? `paused: ${job.pausedBecause}` : job.nextDue === null ? "no further runs" : `next ${runText(job.nextDue, zone, now)}`;
  return `• ${job.id} — ${scheduleText(job.schedule)}${job.schedule.kind === "cron" ? where : ""}; ${next}\n  “${preview(job.instruction)}”`;
}

/** The jobs as /schedules and list_schedules show them. */
export function jobsText(jobs: readonly ListedJob[], zone: string, now: number): string {
  if (jobs.length === 0) return "You have no scheduled jobs in this chat.";
  return [`Your scheduled jobs in this chat (times in ${zone}):`, ...jobs.map((j) => jobLine(j, zone, now))].join("\n");
}

/** What the owner is told when due times were skipped as too late (the gateway was down). */
export function skippedText(job: ListedJob, late: DueRange, graceMs: number, zone: string, now: number): string {
  const one = late.count === 1 && !late.more;
  const runs = one
    ? `its run due ${dayAndTime(late.first, zone, now)} (${zone}) was`
    : `${late.more ? `more than ${late.count}` : late.count} of its runs, due from ${bare(dayAndTime(late.first, zone, now))} to ${bare(dayAndTime(late.last, zone, now))} (${zone}), were`;
  const next = job.nextDue === null ? "" : ` Its next run is ${runText(job.nextDue, zone, now)}.`;
  return `Skipped job ${job.id} (“${preview(job.instruction)}”): ${runs} missed while I was offline, ${durationText(graceMs)} or more ago.${next}`;
}

/** 3600000 → "1 h"; 5400000 → "90 min"; 45000 → "45 s"; 172800000 → "2 d". */
export function durationText(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "min"],
    [1000, "s"],
  ];
  const [size, name] = units.find(([u]) => ms >= u && ms % u === 0) ?? [1000, "s"];
  return `${Math.round(ms / size)} ${name}`;
}

/** "on Friday at 09:00" → "Friday at 09:00", after "from" or "to". */
function bare(when: string): string {
  return when.replace(/^on /, "");
}

function preview(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
