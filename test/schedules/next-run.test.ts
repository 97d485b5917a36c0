// Next-run computation: from the schedule, never from the last run; correct across both DST changes in two zones.
// The DST rules are Vixie cron's, as croner implements them (docs/engineering/decisions/schedules.md):
// - a fixed-time job (no * or step in minute and hour) in the spring gap runs once at the first minute after it;
//   at a time that happens twice in autumn it runs once, at the first;
// - an interval job skips times in the gap and runs at both passes of a repeated time.
import { describe, expect, it } from "vitest";
import { checkCron } from "../../src/schedules/cron.js";
import { dueAfter, dueTimes, firstDue, type Schedule } from "../../src/schedules/schedule.js";
import { isoInZone } from "../../src/schedules/zone.js";
import { Prng } from "../sim/prng.js";

const cron = (expression: string): Schedule => ({ kind: "cron", cron: expression });
const at = (iso: string) => Date.parse(iso);

/** The next `n` due times after `from`, as local ISO times in `zone`. */
function runs(expression: string, zone: string, from: string, n: number): string[] {
  const out: string[] = [];
  let t = at(from);
  for (let i = 0; i < n; i++) {
    t = dueAfter(cron(expression), zone, t)!;
    out.push(isoInZone(t, zone));
  }
  return out;
}

describe("next run", () => {
  it("is the next match strictly after the given time, in the job's zone", () => {
    expect(runs("0 9 * * *", "Europe/Berlin", "2026-11-27T07:59:59.999Z", 2)).toEqual(["2026-11-27T09:00:00+01:00", "2026-11-28T09:00:00+01:00"]);
    expect(runs("0 9 * * *", "Europe/Berlin", "2026-11-27T08:00:00.000Z", 1)).toEqual(["2026-11-28T09:00:00+01:00"]);
    expect(runs("0 9 * * 1-5", "America/New_York", "2026-11-27T15:00:00Z", 2)).toEqual(["2026-11-30T09:00:00-05:00", "2026-12-01T09:00:00-05:00"]);
  });

  it("does not drift: a run that starts late or ends late leaves the next due time where the schedule puts it", () => {
    const due = at("2026-11-27T08:00:00Z");
    const next = dueAfter(cron("0 9 * * *"), "Europe/Berlin", due);
    for (const late of [1, 59_000, 3_600_000, 23 * 3_600_000]) expect(dueAfter(cron("0 9 * * *"), "Europe/Berlin", due + late)).toBe(next);
    // Every five minutes stays on :00, :05, … however long each run took.
    expect(runs("*/5 * * * *", "UTC", "2026-11-27T08:03:17.250Z", 3)).toEqual(["2026-11-27T08:05:00+00:00", "2026-11-27T08:10:00+00:00", "2026-11-27T08:15:00+00:00"]);
  });

  it("ORs day-of-month and day-of-week when both are restricted, as Vixie cron does", () => {
    // The 1st of the month, or any Monday.
    expect(runs("0 12 1 * 1", "UTC", "2026-11-27T00:00:00Z", 3)).toEqual(["2026-11-30T12:00:00+00:00", "2026-12-01T12:00:00+00:00", "2026-12-07T12:00:00+00:00"]);
  });

  it("gives a one-shot job its time once, then none", () => {
    const once: Schedule = { kind: "once", at: at("2026-11-28T08:00:00Z") };
    expect(firstDue({ schedule: once, timezone: "UTC" }, at("2026-11-27T00:00:00Z"))).toBe(at("2026-11-28T08:00:00Z"));
    expect(dueAfter(once, "UTC", at("2026-11-27T00:00:00Z"))).toBe(at("2026-11-28T08:00:00Z"));
    expect(dueAfter(once, "UTC", at("2026-11-28T08:00:00Z"))).toBeNull();
  });
});

describe("spring forward (the hour from 02:00 is skipped)", () => {
  it("runs a fixed-time 02:30 job once, at 03:00, that day, and at 02:30 again the next, in Berlin", () => {
    expect(runs("30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", 3)).toEqual([
      "2026-03-28T02:30:00+01:00",
      "2026-03-29T03:00:00+02:00",
      "2026-03-30T02:30:00+02:00",
    ]);
  });

  it("does the same in New York, three weeks earlier", () => {
    expect(runs("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2)).toEqual(["2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"]);
  });

  it("runs a fixed-time job with two times in the gap once (lists count as fixed times, as in Vixie cron)", () => {
    expect(runs("0,30 2 * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", 3)).toEqual([
      "2026-03-29T03:00:00+02:00",
      "2026-03-30T02:00:00+02:00",
      "2026-03-30T02:30:00+02:00",
    ]);
  });

  it("skips the missing times of an interval job: every 30 minutes goes 01:30 → 03:00", () => {
    expect(runs("*/30 * * * *", "Europe/Berlin", "2026-03-29T00:15:00Z", 3)).toEqual([
      "2026-03-29T01:30:00+01:00",
      "2026-03-29T03:00:00+02:00",
      "2026-03-29T03:30:00+02:00",
    ]);
    expect(runs("30 * * * *", "America/New_York", "2026-03-08T06:00:00Z", 2)).toEqual(["2026-03-08T01:30:00-05:00", "2026-03-08T03:30:00-04:00"]);
  });

  it("does not treat a 30-minute DST change differently (Lord Howe Island)", () => {
    expect(runs("15 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", 2)).toEqual(["2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"]);
  });
});

describe("fall back (the hour before 03:00 happens twice)", () => {
  it("runs a fixed-time 02:30 job once, at the first 02:30, in Berlin", () => {
    expect(runs("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 3)).toEqual([
      "2026-10-25T02:30:00+02:00",
      "2026-10-26T02:30:00+01:00",
      "2026-10-27T02:30:00+01:00",
    ]);
  });

  it("runs a fixed-time 01:30 job once, at the first 01:30, in New York", () => {
    expect(runs("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2)).toEqual(["2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"]);
    // Asked after the first 01:30 has passed, it does not run at the second.
    expect(runs("30 1 * * *", "America/New_York", "2026-11-01T05:31:00Z", 1)).toEqual(["2026-11-02T01:30:00-05:00"]);
  });

  it("runs an interval job at both passes of the repeated hour, keeping real intervals", () => {
    expect(runs("30 * * * *", "Europe/Berlin", "2026-10-24T23:40:00Z", 3)).toEqual([
      "2026-10-25T02:30:00+02:00",
      "2026-10-25T02:30:00+01:00",
      "2026-10-25T03:30:00+01:00",
    ]);
    expect(runs("*/30 1 * * *", "America/New_York", "2026-11-01T04:59:00Z", 5)).toEqual([
      "2026-11-01T01:00:00-04:00",
      "2026-11-01T01:30:00-04:00",
      "2026-11-01T01:00:00-05:00",
      "2026-11-01T01:30:00-05:00",
      "2026-11-02T01:00:00-05:00",
    ]);
  });
});

describe("the last due time at or before a time", () => {
  it("agrees with counting forward, over random times around the DST changes (seeded)", () => {
    const rng = new Prng(20261025);
    const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe"];
    const expressions = ["30 2 * * *", "*/20 * * * *", "0,30 1-3 * * *", "30 * * * *", "0 9 * * 1-5"];
    const starts = [at("2026-03-06T00:00:00Z"), at("2026-03-27T00:00:00Z"), at("2026-10-02T00:00:00Z"), at("2026-10-23T00:00:00Z"), at("2026-10-30T00:00:00Z")];
    for (let i = 0; i < 25; i++) {
      const zone = rng.pick(zones);
      const expression = rng.pick(expressions);
      const times = dueTimes(cron(expression), zone);
      const from = rng.pick(starts);
      const probe = from + rng.int(4 * 86_400_000);
      let last: number | null = null;
      for (let t = times.after(from); t !== null && t <= probe; t = times.after(t)) last = t;
      if (last === null) continue;
      const context = `seed 20261025, case ${i}: ${expression} in ${zone} at ${new Date(probe).toISOString()}`;
      expect(times.atOrBefore(probe), context).toBe(last);
      expect(times.atOrBefore(last), context).toBe(last);
    }
  });
});

describe("checkCron", () => {
  const now = at("2026-11-27T12:00:00Z");
  const error = (expression: string) => {
    const checked = checkCron(expression, "UTC", now);
    return "error" in checked ? checked.error : `accepted as ${checked.cron}`;
  };

  it("accepts five fields, every minute included, and stores them with single spaces", () => {
    expect(checkCron("* * * * *", "UTC", now)).toEqual({ cron: "* * * * *" });
    expect(checkCron("  0   9\t* * MON-FRI ", "Europe/Berlin", now)).toEqual({ cron: "0 9 * * MON-FRI" });
  });

  it("stores a nickname as its five fields, and refuses @reboot", () => {
    expect(checkCron("@daily", "UTC", now)).toEqual({ cron: "0 0 * * *" });
    expect(checkCron("@HOURLY", "UTC", now)).toEqual({ cron: "0 * * * *" });
    expect(error("@reboot")).toMatch(/^"@reboot" is not a nickname this scheduler knows; use five fields, or one of @yearly/);
  });

  it("refuses seconds and years: a job runs at most once a minute", () => {
    expect(error("*/5 * * * * *")).toBe(
      'must have five fields (minute hour day-of-month month day-of-week), "*/5 * * * * *" has 6 (seconds and years are not supported: a job runs at most once a minute)',
    );
    expect(error("0 0 9 * * * 2027")).toMatch(/has 7 \(seconds and years are not supported/);
    expect(error("0 9 * *")).toMatch(/has 4$/);
  });

  it("names the field that is wrong", () => {
    expect(error("*/0 * * * *")).toBe('the minute field "*/0" has a step of 0, which never advances; use */1 or *');
    expect(error("0 */00 * * *")).toMatch(/^the hour field "\*\/00" has a step of 0/);
    expect(error("60 * * * *")).toMatch(/^the minute field "60" is not valid: it takes 0-59/);
    expect(error("0 24 * * *")).toMatch(/^the hour field "24" is not valid: it takes 0-23/);
    expect(error("0 0 0 * *")).toMatch(/^the day-of-month field "0" is not valid/);
    expect(error("0 0 1 13 *")).toMatch(/^the month field "13" is not valid: it takes 1-12 or JAN-DEC/);
    expect(error("0 0 * * 8")).toMatch(/^the day-of-week field "8" is not valid/);
    expect(error("0 0 * * FOO")).toMatch(/^the day-of-week field "FOO" is not valid/);
    expect(error("5-1 * * * *")).toMatch(/^the minute field "5-1" is not valid/);
  });

  it("refuses an expression that never matches a date", () => {
    expect(error("0 0 30 2 *")).toBe('"0 0 30 2 *" never matches a date (such as the 30th of February)');
  });

  it("refuses huge input without echoing it whole", () => {
    const huge = `${"1,".repeat(5000)}1 * * * *`;
    expect(error(huge)).toBe(`is ${huge.length} characters long; a cron expression has at most 200`);
    expect(error(`${"x".repeat(150)} * * * *`).length).toBeLessThan(200);
  });
});
