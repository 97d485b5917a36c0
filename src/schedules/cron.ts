// Five-field cron expressions, read by croner the way Vixie cron reads them: minute resolution (so a job runs at most
// once a minute), day-of-month OR day-of-week when both are restricted, and Vixie's rules for DST (docs/engineering/decisions/schedules.md).
import { Cron, type CronOptions } from "croner";
import { shown } from "./zone.js";

const FIELDS = [
  { name: "minute", range: "0-59" },
  { name: "hour", range: "0-23" },
  { name: "day-of-month", range: "1-31, L, W" },
  { name: "month", range: "1-12 or JAN-DEC" },
  { name: "day-of-week", range: "0-7 or SUN-SAT, L, #" },
] as const;

/** The nicknames with a five-field meaning; stored as their five fields. */
const NICKNAMES: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

export const MAX_CRON_LENGTH = 200;

function options(zone: string): CronOptions {
  // no-wildcard: "30 2,14 * * *" is a fixed-time job, as in Vixie cron (croner's default would make it an interval job).
  return { timezone: zone, paused: true, mode: "5-part", fixedTimeRule: "no-wildcard", domAndDow: false };
}

/**
 * A checked cron expression in its stored form (nicknames become their five fields, blanks collapse), or an error
 * naming the field that is wrong. `zone` must already be a valid zone name.
 */
export function checkCron(text: string, zone: string, now: number): { cron: string } | { error: string } {
  const trimmed = text.trim();
  if (trimmed.length > MAX_CRON_LENGTH) return { error: `is ${trimmed.length} characters long; a cron expression has at most ${MAX_CRON_LENGTH}` };
  const lower = trimmed.toLowerCase();
  if (lower.startsWith("@")) {
    const fields = Object.hasOwn(NICKNAMES, lower) ? NICKNAMES[lower] : undefined;
    if (!fields) return { error: `"${shown(trimmed)}" is not a nickname this scheduler knows; use five fields, or one of ${Object.keys(NICKNAMES).join(", ")}` };
    return checkCron(fields, zone, now);
  }
  const parts = trimmed.split(/\s+/).filter(Boolean);
  if (parts.length !== 5) {
    const seconds = parts.length === 6 || parts.length === 7 ? " (seconds and years are not supported: a job runs at most once a minute)" : "";
    return { error: `must have five fields (minute hour day-of-month month day-of-week), "${shown(trimmed)}" has ${parts.length}${seconds}` };
  }
  for (const index of parts.keys()) {
    const problem = fieldProblem(parts, index);
    if (problem) return { error: problem };
  }
  const cron = parts.join(" ");
  let first: Date | null;
  try {
    first = new Cron(cron, options(zone)).nextRun(new Date(now));
  } catch (error) {
    return { error: `"${shown(cron)}" is not a valid cron expression: ${(error as Error).message.replace(/^CronPattern: /, "")}` };
  }
  if (!first) return { error: `"${shown(cron)}" never matches a date (such as the 30th of February)` };
  return { cron };
}

/** Whether one field is wrong, checked alone (the others wildcards) so the error can name it. */
function fieldProblem(parts: readonly string[], index: number): string | null {
  const field = FIELDS[index]!;
  const part = parts[index]!;
  if (/\/0+(?:$|[^0-9])/.test(part)) return `the ${field.name} field "${shown(part)}" has a step of 0, which never advances; use */1 or *`;
  const alone = FIELDS.map((_, i) => (i === index ? part : "*")).join(" ");
  try {
    new Cron(alone, options("UTC"));
    return null;
  } catch {
    return `the ${field.name} field "${shown(part)}" is not valid: it takes ${field.range}, *, lists (1,15), ranges (1-5) and steps (*/15, 0-30/5)`;
  }
}

/** A checked expression's due times in `zone`, in milliseconds; null when there are none (any more). */
export function cronTimes(cron: string, zone: string): { after(at: number): number | null; atOrBefore(at: number): number | null } {
  const job = new Cron(cron, options(zone));
  return {
    after: (at) => job.nextRun(new Date(at))?.getTime() ?? null,
    // previousRuns looks strictly before its date, to the millisecond.
    atOrBefore: (at) => job.previousRuns(1, new Date(at + 1))[0]?.getTime() ?? null,
  };
}
