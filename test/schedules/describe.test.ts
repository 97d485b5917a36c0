// Times and jobs in words, in the reader's time zone.
import { describe, expect, it } from "vitest";
import { dayAndTime, durationText, jobsText, runText, skippedText, type ListedJob } from "../../src/schedules/describe.js";

const at = (iso: string) => Date.parse(iso);
const NOW = at("2026-11-27T12:00:00Z"); // Friday, 13:00 in Berlin, 07:00 in New York

describe("run times in words", () => {
  it("says tomorrow at 09:00 with the zone and the ISO time with its offset", () => {
    expect(runText(at("2026-11-28T08:00:00Z"), "Europe/Berlin", NOW)).toBe("tomorrow at 09:00 (Europe/Berlin), 2026-11-28T09:00:00+01:00");
  });

  it("counts days in the reader's zone, not in UTC", () => {
    // 23:30 on Friday in New York is already Saturday in UTC.
    expect(runText(at("2026-11-28T04:30:00Z"), "America/New_York", NOW)).toBe("today at 23:30 (America/New_York), 2026-11-27T23:30:00-05:00");
    expect(dayAndTime(at("2026-11-28T04:30:00Z"), "Europe/Berlin", NOW)).toBe("tomorrow at 05:30");
  });

  it("names the weekday within a week, and the date beyond it; seconds only when there are some", () => {
    expect(dayAndTime(at("2026-12-01T17:30:00Z"), "Europe/Berlin", NOW)).toBe("on Tuesday at 18:30");
    expect(dayAndTime(at("2026-12-04T08:00:00Z"), "Europe/Berlin", NOW)).toBe("on 4 December 2026 at 09:00");
    expect(dayAndTime(NOW + 90_000, "Europe/Berlin", NOW)).toBe("today at 13:01:30");
    expect(dayAndTime(at("2026-11-26T08:00:00Z"), "Europe/Berlin", NOW)).toBe("yesterday at 09:00");
  });

  it("tells the two passes of a repeated hour apart by their offsets", () => {
    const now = at("2026-10-24T20:00:00Z");
    expect(runText(at("2026-10-25T00:30:00Z"), "Europe/Berlin", now)).toBe("tomorrow at 02:30 (Europe/Berlin), 2026-10-25T02:30:00+02:00");
    expect(runText(at("2026-10-25T01:30:00Z"), "Europe/Berlin", now)).toBe("tomorrow at 02:30 (Europe/Berlin), 2026-10-25T02:30:00+01:00");
  });

  it("writes durations in the largest whole unit", () => {
    expect([3_600_000, 5_400_000, 45_000, 172_800_000, 1500].map(durationText)).toEqual(["1 h", "90 min", "45 s", "2 d", "2 s"]);
  });
});

describe("listings and notices", () => {
  const digest: ListedJob = {
    id: "sch_1",
    schedule: { kind: "cron", cron: "0 9 * * 1-5" },
    timezone: "Europe/Berlin",
    nextDue: at("2026-11-30T08:00:00Z"),
    instruction: "Summarise my unread mail\nand the day's calendar",
  };
  const reminder: ListedJob = {
    id: "sch_2",
    schedule: { kind: "once", at: at("2026-11-28T08:00:00Z") },
    timezone: "Europe/Berlin",
    nextDue: at("2026-11-28T08:00:00Z"),
    instruction: "Call the dentist",
  };

  it("lists ids, schedules, next runs and the start of each instruction", () => {
    expect(jobsText([digest, reminder], "Europe/Berlin", NOW)).toBe(
      [
        "Your scheduled jobs in this chat (times in Europe/Berlin):",
        "• sch_1 — cron 0 9 * * 1-5; next on Monday at 09:00 (Europe/Berlin), 2026-11-30T09:00:00+01:00",
        "  “Summarise my unread mail and the day's calendar”",
        "• sch_2 — once; next tomorrow at 09:00 (Europe/Berlin), 2026-11-28T09:00:00+01:00",
        "  “Call the dentist”",
      ].join("\n"),
    );
    expect(jobsText([], "UTC", NOW)).toBe("You have no scheduled jobs in this chat.");
  });

  it("shows a cron's own zone when the reader is in another, and a paused job's reason", () => {
    const text = jobsText([{ ...digest, pausedBecause: "the bot was blocked" }], "America/New_York", NOW);
    expect(text).toContain("• sch_1 — cron 0 9 * * 1-5 in Europe/Berlin; paused: the bot was blocked");
  });

  it("cuts a long instruction in a listing", () => {
    const text = jobsText([{ ...reminder, instruction: "word ".repeat(100) }], "UTC", NOW);
    expect(text.split("\n")[2]!.length).toBeLessThan(90);
    expect(text).toContain("…”");
  });

  it("tells the owner what was skipped, once or in a range, and when the job runs next", () => {
    expect(skippedText(reminder, { first: at("2026-11-27T08:00:00Z"), last: at("2026-11-27T08:00:00Z"), count: 1, more: false }, 3_600_000, "Europe/Berlin", NOW)).toBe(
      "Skipped job sch_2 (“Call the dentist”): its run due today at 09:00 (Europe/Berlin) was missed while I was offline, 1 h or more ago. Its next run is tomorrow at 09:00 (Europe/Berlin), 2026-11-28T09:00:00+01:00.",
    );
    const range = { first: at("2026-11-25T08:00:00Z"), last: at("2026-11-27T08:00:00Z"), count: 3, more: false };
    expect(skippedText({ ...digest, nextDue: null }, range, 3_600_000, "Europe/Berlin", NOW)).toBe(
      "Skipped job sch_1 (“Summarise my unread mail and the day's calendar”): 3 of its runs, due from 25 November 2026 at 09:00 to today at 09:00 (Europe/Berlin), were missed while I was offline, 1 h or more ago.",
    );
    expect(skippedText(digest, { ...range, count: 1000, more: true }, 3_600_000, "UTC", NOW)).toContain("more than 1000 of its runs");
  });
});
