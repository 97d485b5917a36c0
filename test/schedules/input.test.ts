// The scheduling tools' inputs as a model sends them, hostile ones included: each refusal names the field.
import { describe, expect, it } from "vitest";
import { checkCancelInput, checkScheduleInput, MAX_INSTRUCTION_CHARS, SCHEDULE_TOOL, type InputContext } from "../../src/schedules/input.js";
import { jobLimitProblem } from "../../src/schedules/limits.js";

const NOW = Date.parse("2026-11-27T12:00:00Z"); // a Friday; 13:00 in Berlin
const ctx: InputContext = { now: NOW, userZone: "Europe/Berlin" };

function accepted(raw: unknown, context = ctx) {
  const checked = checkScheduleInput(raw, context);
  if (!checked.ok) throw new Error(`refused: ${checked.error}`);
  return checked.value;
}
function refused(raw: unknown, context = ctx): string {
  const checked = checkScheduleInput(raw, context);
  if (checked.ok) throw new Error(`accepted: ${JSON.stringify(checked.value)}`);
  return checked.error;
}

describe("schedule: when", () => {
  it("reads `at` without an offset in the user's zone, and with one as the instant it names", () => {
    expect(accepted({ instruction: "Call the dentist", at: "2026-11-28T09:00" })).toEqual({
      spec: { instruction: "Call the dentist", timezone: "Europe/Berlin", schedule: { kind: "once", at: Date.parse("2026-11-28T08:00:00Z") } },
      firstDue: Date.parse("2026-11-28T08:00:00Z"),
    });
    expect(accepted({ instruction: "x", at: "2026-11-28T09:00:00-05:00" }).firstDue).toBe(Date.parse("2026-11-28T14:00:00Z"));
    expect(accepted({ instruction: "x", at: "2026-11-28 09:00:30Z" }).firstDue).toBe(Date.parse("2026-11-28T09:00:30Z"));
    expect(accepted({ instruction: "x", at: "2026-11-28T09:00", timezone: "America/New_York" }).firstDue).toBe(Date.parse("2026-11-28T14:00:00Z"));
  });

  it("counts in_seconds from now", () => {
    expect(accepted({ instruction: "x", in_seconds: 90 })).toEqual({
      spec: { instruction: "x", timezone: "Europe/Berlin", schedule: { kind: "once", at: NOW + 90_000 } },
      firstDue: NOW + 90_000,
    });
  });

  it("takes a cron in the job's zone and answers its first run", () => {
    const { spec, firstDue } = accepted({ instruction: "Daily digest", cron: "0 9 * * *", timezone: "America/New_York" });
    expect(spec).toEqual({ instruction: "Daily digest", timezone: "America/New_York", schedule: { kind: "cron", cron: "0 9 * * *" } });
    expect(firstDue).toBe(Date.parse("2026-11-27T14:00:00Z")); // 07:00 in New York now: today at 09:00
  });

  it("uses DEFAULT_TIMEZONE when the user set none, and UTC when neither is set", () => {
    expect(accepted({ instruction: "x", cron: "0 9 * * *" }, { now: NOW, defaultZone: "Asia/Tokyo" }).spec.timezone).toBe("Asia/Tokyo");
    expect(accepted({ instruction: "x", cron: "0 9 * * *" }, { now: NOW }).spec.timezone).toBe("UTC");
  });

  it("needs exactly one of at, in_seconds and cron", () => {
    expect(refused({ instruction: "x" })).toBe("schedule: input needs exactly one of at, in_seconds or cron (none was given)");
    expect(refused({ instruction: "x", at: "2026-11-28T09:00", cron: "0 9 * * *" })).toBe(
      "schedule: input needs exactly one of at, in_seconds or cron (got at and cron)",
    );
    expect(refused({ instruction: "x", in_seconds: 5, cron: "0 9 * * *", at: "2026-11-28T09:00" })).toMatch(/\(got at and in_seconds and cron\)$/);
  });

  it("treats null as absent, as models send for fields they do not use", () => {
    expect(accepted({ instruction: "x", at: null, in_seconds: 60, cron: null, timezone: null }).firstDue).toBe(NOW + 60_000);
  });
});

describe("schedule: hostile input", () => {
  it("refuses times in the past, years ago or a second ago", () => {
    expect(refused({ instruction: "x", at: "1999-12-31T23:59:59Z" })).toBe(
      'schedule: at "1999-12-31T23:59:59Z" is in the past (it is now 2026-11-27T12:00:00.000Z); give a future time, or in_seconds',
    );
    expect(refused({ instruction: "x", at: "2026-11-27T12:59:59" })).toMatch(/^schedule: at "2026-11-27T12:59:59" is in the past/);
    expect(refused({ instruction: "x", at: "0001-01-01T00:00Z" })).toMatch(/is in the past/);
  });

  it("refuses far-future dates", () => {
    expect(refused({ instruction: "x", at: "2099-01-01T00:00Z" })).toBe('schedule: at "2099-01-01T00:00Z" is more than five years ahead; schedule something nearer');
    expect(refused({ instruction: "x", at: "+275760-09-13T00:00:00Z" })).toMatch(/^schedule: at "\+275760-09-13T00:00:00Z" is not an ISO 8601 date and time/);
    expect(refused({ instruction: "x", in_seconds: 10 ** 12 })).toBe("schedule: in_seconds must be a whole number from 1 to 157766400 (five years), got 1000000000000");
  });

  it("refuses in_seconds that is not a positive whole number", () => {
    for (const s of [0, -5, 1.5, Number.NaN]) expect(refused({ instruction: "x", in_seconds: s })).toMatch(/^schedule: in_seconds must be/);
    expect(refused({ instruction: "x", in_seconds: "60" })).toBe("schedule: in_seconds must be a number of seconds");
  });

  it("refuses malformed `at` values, naming what is wrong", () => {
    expect(refused({ instruction: "x", at: "tomorrow at 9" })).toMatch(/^schedule: at "tomorrow at 9" is not an ISO 8601 date and time; write it like 2026-11-28T09:00/);
    expect(refused({ instruction: "x", at: "2026-11-28" })).toMatch(/is not an ISO 8601 date and time with a time of day/);
    expect(refused({ instruction: "x", at: "2027-02-29T09:00" })).toBe('schedule: at "2027-02-29T09:00" has no day 29 of 2027-02');
    expect(refused({ instruction: "x", at: "2027-13-01T09:00" })).toBe('schedule: at "2027-13-01T09:00" has no month 13');
    expect(refused({ instruction: "x", at: "2027-01-01T24:00" })).toBe('schedule: at "2027-01-01T24:00" has no hour 24');
    expect(refused({ instruction: "x", at: "2027-01-01T09:00+25:00" })).toMatch(/has an offset out of range/);
    expect(refused({ instruction: "x", at: 1764000000000 })).toBe("schedule: at must be an ISO 8601 date and time as a string");
  });

  it("refuses unknown zones and offsets as zones", () => {
    expect(refused({ instruction: "x", cron: "0 9 * * *", timezone: "Mars/Olympus" })).toMatch(
      /^schedule: timezone "Mars\/Olympus" is not a time zone this server knows/,
    );
    expect(refused({ instruction: "x", in_seconds: 5, timezone: "+01:00" })).toMatch(/^schedule: timezone "\+01:00" is not an IANA time zone name/);
  });

  it("refuses bad crons naming the cron field and the part of it", () => {
    expect(refused({ instruction: "x", cron: "*/0 * * * *" })).toBe('schedule: cron the minute field "*/0" has a step of 0, which never advances; use */1 or *');
    expect(refused({ instruction: "x", cron: "0 0 9 * * *" })).toMatch(/^schedule: cron must have five fields .* has 6 \(seconds and years are not supported/);
  });

  it("accepts every minute, the most often a job may run", () => {
    expect(accepted({ instruction: "x", cron: "* * * * *" }).firstDue).toBe(NOW + 60_000);
  });

  it("refuses empty, huge and NUL-bearing instructions", () => {
    expect(refused({ instruction: "   ", in_seconds: 5 })).toBe("schedule: instruction is empty; say what to do when the job is due");
    expect(refused({ instruction: "x".repeat(MAX_INSTRUCTION_CHARS + 1), in_seconds: 5 })).toBe(
      `schedule: instruction is ${MAX_INSTRUCTION_CHARS + 1} characters long; at most ${MAX_INSTRUCTION_CHARS} are kept. Shorten it`,
    );
    expect(refused({ instruction: "a\u0000b", in_seconds: 5 })).toBe("schedule: instruction contains a NUL character");
    expect(refused({ in_seconds: 5 })).toBe("schedule: instruction must be a string");
  });

  it("refuses fields it does not know (a silently ignored `repeat` would be a wrong job) and non-objects", () => {
    expect(refused({ instruction: "x", in_seconds: 5, repeat: "daily" })).toBe(
      'schedule: "repeat" is not a field of schedule; it takes instruction, at, in_seconds, cron and timezone',
    );
    // A tool input is parsed JSON: "__proto__" there is a field like any other, and not one of schedule's.
    expect(refused(JSON.parse('{"instruction":"x","in_seconds":5,"__proto__":{"cron":"* * * * *"}}'))).toMatch(/^schedule: "__proto__" is not a field of schedule/);
    expect(refused("remind me")).toBe("schedule: input must be an object with instruction and one of at, in_seconds or cron");
    expect(refused(null)).toBe("schedule: input must be an object with instruction and one of at, in_seconds or cron");
  });

  it("describes every field it checks in the tool's schema", () => {
    expect(Object.keys(SCHEDULE_TOOL.input_schema.properties as object).sort()).toEqual(["at", "cron", "in_seconds", "instruction", "timezone"]);
  });
});

describe("cancel_schedule", () => {
  it("takes a job id and refuses anything else", () => {
    expect(checkCancelInput({ id: " sch_1a2b3c " })).toEqual({ ok: true, value: "sch_1a2b3c" });
    expect(checkCancelInput({})).toEqual({ ok: false, error: "cancel_schedule: id must be a job id such as the one schedule or list_schedules gave" });
    expect(checkCancelInput({ id: 7 })).toMatchObject({ ok: false });
    expect(checkCancelInput({ id: "'; DROP TABLE jobs; --" })).toEqual({
      ok: false,
      error: `cancel_schedule: id "'; DROP TABLE jobs; --" is not a job id (letters, digits, _ and -; see list_schedules)`,
    });
  });
});

describe("the per-user limit", () => {
  it("lets a user hold up to the maximum and refuses one more, saying how to make room", () => {
    expect(jobLimitProblem(19, 20)).toBeNull();
    expect(jobLimitProblem(20, 20)).toBe(
      "schedule: you already have 20 scheduled jobs, the most one person may have (20); cancel one first (cancel_schedule, or /unschedule <id> in the chat)",
    );
    expect(jobLimitProblem(0, 0)).toMatch(/already have 0 scheduled jobs/);
  });
});
