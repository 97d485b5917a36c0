// The scheduling tools' inputs, as the model sees them (JSON Schema) and as they are checked (zod, then the rules).
// Every refusal names the field and says what to send instead: the model reads it and retries or asks the user.
import { z } from "zod";
import type { ToolSpec } from "../llm/types.js";
import { parseAt } from "./at.js";
import { checkCron } from "./cron.js";
import { firstDue, type JobSpec } from "./schedule.js";
import { checkZone, effectiveZone, shown } from "./zone.js";

export const MAX_INSTRUCTION_CHARS = 4000;
/** How far ahead a one-shot job may be: five years (1826 days). */
export const MAX_AHEAD_MS = 1826 * 86_400_000;
export const MAX_IN_SECONDS = MAX_AHEAD_MS / 1000;
/** A job id as /unschedule and cancel_schedule take it. */
export const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const SCHEDULE_TOOL: ToolSpec = {
  name: "schedule",
  description:
    "Run an instruction later, as a new task in this conversation: once (at, or in_seconds) or repeatedly (cron). When it is due you receive the instruction as a scheduled run and your reply is sent to the user. Answers the job's id and its next run.",
  input_schema: {
    type: "object",
    properties: {
      instruction: {
        type: "string",
        description: `What to do when it is due, in full (e.g. "Remind the user to call the dentist"); at most ${MAX_INSTRUCTION_CHARS} characters.`,
      },
      at: { type: "string", description: "Once, at this ISO 8601 date and time: 2026-11-28T09:00 (in the time zone) or with an offset, 2026-11-28T09:00:00+01:00." },
      in_seconds: { type: "integer", description: "Once, this many seconds from now (1 to 157766400)." },
      cron: {
        type: "string",
        description:
          'Repeatedly, on a five-field cron (minute hour day-of-month month day-of-week) in the time zone, e.g. "0 9 * * 1-5" for weekdays at 09:00. At most once a minute.',
      },
      timezone: { type: "string", description: "IANA time zone for at and cron, e.g. Europe/Berlin. Default: the user's (/timezone)." },
    },
    required: ["instruction"],
  },
};

export const LIST_SCHEDULES_TOOL: ToolSpec = {
  name: "list_schedules",
  description: "List the user's scheduled jobs in this conversation, with their ids and next runs.",
  input_schema: { type: "object", properties: {} },
};

export const CANCEL_SCHEDULE_TOOL: ToolSpec = {
  name: "cancel_schedule",
  description: "Cancel one of the user's scheduled jobs by its id (from schedule or list_schedules).",
  input_schema: { type: "object", properties: { id: { type: "string", description: "The job's id." } }, required: ["id"] },
};

/** Models often send null for an optional field they do not use: null counts as absent. */
const optional = <T extends z.ZodType>(type: T) => z.preprocess((v) => (v === null ? undefined : v), type.optional());

const scheduleInput = z.strictObject({
  instruction: z.string({ message: "must be a string" }),
  at: optional(z.string({ message: "must be an ISO 8601 date and time as a string" })),
  in_seconds: optional(z.number({ message: "must be a number of seconds" })),
  cron: optional(z.string({ message: "must be a five-field cron expression as a string" })),
  timezone: optional(z.string({ message: "must be an IANA time zone name as a string" })),
});

/** Where the input is checked: the time, and the zones to fall back on (the user's /timezone, DEFAULT_TIMEZONE). */
export interface InputContext {
  now: number;
  userZone?: string | null;
  defaultZone?: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

const refuse = (field: string, problem: string): Checked<never> => ({ ok: false, error: `schedule: ${field} ${problem}` });

/** The `schedule` tool's input as a job and its first due time, or the reason it cannot be one. */
export function checkScheduleInput(raw: unknown, ctx: InputContext): Checked<{ spec: JobSpec; firstDue: number }> {
  const parsed = scheduleInput.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === "unrecognized_keys") {
      return refuse(issue.keys.map((k) => `"${shown(k)}"`).join(", "), "is not a field of schedule; it takes instruction, at, in_seconds, cron and timezone");
    }
    if (issue.path.length === 0) return refuse("input", "must be an object with instruction and one of at, in_seconds or cron");
    return refuse(String(issue.path[0]), issue.message);
  }
  const input = parsed.data;
  const instruction = input.instruction.trim();
  if (instruction === "") return refuse("instruction", "is empty; say what to do when the job is due");
  if (instruction.length > MAX_INSTRUCTION_CHARS) {
    return refuse("instruction", `is ${instruction.length} characters long; at most ${MAX_INSTRUCTION_CHARS} are kept. Shorten it`);
  }
  if (instruction.includes("\u0000")) return refuse("instruction", "contains a NUL character");
  const given = (["at", "in_seconds", "cron"] as const).filter((k) => input[k] !== undefined);
  if (given.length !== 1) {
    return refuse("input", `needs exactly one of at, in_seconds or cron (${given.length === 0 ? "none was given" : `got ${given.join(" and ")}`})`);
  }
  let zone = effectiveZone(undefined, ctx.userZone, ctx.defaultZone);
  if (input.timezone !== undefined) {
    const checked = checkZone(input.timezone);
    if ("error" in checked) return refuse("timezone", checked.error);
    zone = checked.zone;
  }
  const base = { instruction, timezone: zone };
  if (input.cron !== undefined) {
    const checked = checkCron(input.cron, zone, ctx.now);
    if ("error" in checked) return refuse("cron", checked.error);
    const spec: JobSpec = { ...base, schedule: { kind: "cron", cron: checked.cron } };
    return { ok: true, value: { spec, firstDue: firstDue(spec, ctx.now)! } };
  }
  let at: number;
  let field: "at" | "in_seconds";
  if (input.in_seconds !== undefined) {
    field = "in_seconds";
    const s = input.in_seconds;
    if (!Number.isInteger(s) || s < 1 || s > MAX_IN_SECONDS) return refuse(field, `must be a whole number from 1 to ${MAX_IN_SECONDS} (five years), got ${s}`);
    at = ctx.now + s * 1000;
  } else {
    field = "at";
    const parsedAt = parseAt(input.at!, zone);
    if ("error" in parsedAt) return refuse(field, parsedAt.error);
    at = parsedAt.at;
    if (at <= ctx.now) {
      return refuse(field, `"${shown(input.at!.trim())}" is in the past (it is now ${new Date(ctx.now).toISOString()}); give a future time, or in_seconds`);
    }
    if (at - ctx.now > MAX_AHEAD_MS) return refuse(field, `"${shown(input.at!.trim())}" is more than five years ahead; schedule something nearer`);
  }
  const spec: JobSpec = { ...base, schedule: { kind: "once", at } };
  return { ok: true, value: { spec, firstDue: at } };
}

/** The id of `cancel_schedule`'s input, or the reason it has none. */
export function checkCancelInput(raw: unknown): Checked<string> {
  const id = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>).id : undefined;
  if (typeof id !== "string" || id.trim() === "") return { ok: false, error: "cancel_schedule: id must be a job id such as the one schedule or list_schedules gave" };
  if (!JOB_ID.test(id.trim())) return { ok: false, error: `cancel_schedule: id "${shown(id.trim())}" is not a job id (letters, digits, _ and -; see list_schedules)` };
  return { ok: true, value: id.trim() };
}
