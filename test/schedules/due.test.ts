// The grace rule on a fake clock: a run missed by less than SCHEDULE_GRACE runs once, one missed by more is skipped
// (and the owner told), and the job goes on from its schedule.
import { describe, expect, it } from "vitest";
import { DEFAULT_GRACE_MS, MAX_COUNTED, planDue } from "../../src/schedules/due.js";
import type { DueJob } from "../../src/schedules/schedule.js";
import { VirtualTime } from "../sim/virtual-time.js";

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;
const hourly = (nextDue: number): DueJob => ({ id: "sch_h", schedule: { kind: "cron", cron: "0 * * * *" }, timezone: "Europe/Berlin", nextDue });
const once = (due: number): DueJob => ({ id: "sch_o", schedule: { kind: "once", at: due }, timezone: "UTC", nextDue: due });

describe("planDue", () => {
  it("does nothing before the due time", () => {
    expect(planDue(hourly(at("2026-11-27T09:00:00Z")), at("2026-11-27T08:59:59.999Z"), DEFAULT_GRACE_MS)).toEqual({
      run: null,
      folded: null,
      late: null,
      next: at("2026-11-27T09:00:00Z"),
    });
  });

  it("runs a due time on time and moves to the next one on the schedule", () => {
    const clock = new VirtualTime();
    clock.advance(at("2026-11-27T09:00:00.040Z") - clock.now());
    expect(planDue(hourly(at("2026-11-27T09:00:00Z")), clock.now(), DEFAULT_GRACE_MS)).toEqual({
      run: at("2026-11-27T09:00:00Z"),
      folded: null,
      late: null,
      next: at("2026-11-27T10:00:00Z"),
    });
  });

  it("still runs a one-shot job missed by less than the grace, and then has no next run", () => {
    const due = at("2026-11-27T09:00:00Z");
    expect(planDue(once(due), due + HOUR - 1, DEFAULT_GRACE_MS)).toEqual({ run: due, folded: null, late: null, next: null });
  });

  it("skips a one-shot job missed by the grace or more", () => {
    const due = at("2026-11-27T09:00:00Z");
    expect(planDue(once(due), due + HOUR, DEFAULT_GRACE_MS)).toEqual({ run: null, folded: null, late: { first: due, last: due, count: 1, more: false }, next: null });
    expect(planDue(once(due), due + 30 * 86_400_000, DEFAULT_GRACE_MS).late?.count).toBe(1);
  });

  it("after three hours down, skips the runs over an hour late and runs the latest one once", () => {
    // Down from 08:30 to 11:20: 09:00 and 10:00 are over an hour late; 11:00 is 20 minutes late.
    const plan = planDue(hourly(at("2026-11-27T09:00:00Z")), at("2026-11-27T11:20:00Z"), DEFAULT_GRACE_MS);
    expect(plan).toEqual({
      run: at("2026-11-27T11:00:00Z"),
      folded: null,
      late: { first: at("2026-11-27T09:00:00Z"), last: at("2026-11-27T10:00:00Z"), count: 2, more: false },
      next: at("2026-11-27T12:00:00Z"),
    });
  });

  it("folds the due times missed within the grace into one run of the latest", () => {
    const job: DueJob = { id: "sch_m", schedule: { kind: "cron", cron: "* * * * *" }, timezone: "UTC", nextDue: at("2026-11-27T09:00:00Z") };
    expect(planDue(job, at("2026-11-27T09:04:30Z"), DEFAULT_GRACE_MS)).toEqual({
      run: at("2026-11-27T09:04:00Z"),
      folded: { first: at("2026-11-27T09:00:00Z"), last: at("2026-11-27T09:03:00Z"), count: 4, more: false },
      late: null,
      next: at("2026-11-27T09:05:00Z"),
    });
  });

  it("splits a long outage of a per-minute job into skipped, folded and run, counting up to a cap", () => {
    const job: DueJob = { id: "sch_m", schedule: { kind: "cron", cron: "* * * * *" }, timezone: "UTC", nextDue: at("2026-11-01T00:00:00Z") };
    const plan = planDue(job, at("2026-11-27T09:00:30Z"), DEFAULT_GRACE_MS);
    expect(plan.run).toBe(at("2026-11-27T09:00:00Z"));
    expect(plan.late).toEqual({ first: at("2026-11-01T00:00:00Z"), last: at("2026-11-27T08:00:00Z"), count: MAX_COUNTED, more: true });
    expect(plan.folded).toEqual({ first: at("2026-11-27T08:01:00Z"), last: at("2026-11-27T08:59:00Z"), count: 59, more: false });
    expect(plan.next).toBe(at("2026-11-27T09:01:00Z"));
  });

  it("counts a due time exactly the grace late as too late", () => {
    const plan = planDue(hourly(at("2026-11-27T09:00:00Z")), at("2026-11-27T10:00:00Z"), DEFAULT_GRACE_MS);
    expect(plan.run).toBe(at("2026-11-27T10:00:00Z"));
    expect(plan.late).toEqual({ first: at("2026-11-27T09:00:00Z"), last: at("2026-11-27T09:00:00Z"), count: 1, more: false });
  });

  it("follows the configured grace", () => {
    const plan = planDue(hourly(at("2026-11-27T09:00:00Z")), at("2026-11-27T09:10:00Z"), 5 * 60_000);
    expect(plan).toMatchObject({ run: null, late: { count: 1 }, next: at("2026-11-27T10:00:00Z") });
  });

  it("gives every due time up to now exactly one outcome across the repeated autumn hour", () => {
    // Every 30 minutes in Berlin; nothing ran from 01:30 CEST to 02:40 CET, on the night the clocks go back.
    const job: DueJob = { id: "sch_d", schedule: { kind: "cron", cron: "*/30 * * * *" }, timezone: "Europe/Berlin", nextDue: at("2026-10-24T23:30:00Z") };
    const plan = planDue(job, at("2026-10-25T01:40:00Z"), 30 * 60_000);
    // Due 01:30 (23:30Z) … 02:30 CET (01:30Z): 23:30Z–01:00Z are 40+ min late, 01:30Z runs.
    expect(plan.late).toEqual({ first: at("2026-10-24T23:30:00Z"), last: at("2026-10-25T01:00:00Z"), count: 4, more: false });
    expect(plan.run).toBe(at("2026-10-25T01:30:00Z"));
    expect(plan.folded).toBeNull();
    expect(plan.next).toBe(at("2026-10-25T02:00:00Z"));
  });
});
