// /schedules, /unschedule <id> and /timezone <IANA name> as people type them.
import { describe, expect, it } from "vitest";
import { parseScheduleCommand } from "../../src/gateway/schedule-commands.js";

describe("parseScheduleCommand", () => {
  it("reads the three commands, Telegram's /command@Bot form and any case", () => {
    expect(parseScheduleCommand("/schedules")).toEqual({ command: "schedules" });
    expect(parseScheduleCommand("/Schedules@SwitchboardBot")).toEqual({ command: "schedules" });
    expect(parseScheduleCommand(" /unschedule  sch_1a2b3c4d5e ")).toEqual({ command: "unschedule", id: "sch_1a2b3c4d5e" });
    expect(parseScheduleCommand("/unschedule@SwitchboardBot sch_1")).toEqual({ command: "unschedule", id: "sch_1" });
    expect(parseScheduleCommand("/timezone europe/berlin")).toEqual({ command: "timezone", zone: "Europe/Berlin" });
    expect(parseScheduleCommand("/timezone")).toEqual({ command: "timezone", zone: null });
  });

  it("leaves other text and other commands alone", () => {
    for (const text of ["schedules", "/schedule", "/cancel", "/timezones", "please /schedules", "/constructor", "/__proto__"]) {
      expect(parseScheduleCommand(text), text).toBeNull();
    }
  });

  it("answers a wrong argument with how to write it", () => {
    expect(parseScheduleCommand("/unschedule")).toEqual({
      command: "unschedule",
      error: "Write /unschedule and one job id, e.g. /unschedule sch_1a2b3c4d5e (/schedules lists yours).",
    });
    expect(parseScheduleCommand("/unschedule a b")).toMatchObject({ command: "unschedule", error: expect.stringMatching(/^Write \/unschedule and one job id/) });
    expect(parseScheduleCommand("/unschedule ../../x")).toEqual({ command: "unschedule", error: '"../../x" is not a job id; /schedules lists yours.' });
    expect(parseScheduleCommand("/timezone Mars/Olympus")).toEqual({
      command: "timezone",
      error: 'Time zone "Mars/Olympus" is not a time zone this server knows; use an IANA name such as Europe/Berlin or Asia/Tokyo.',
    });
    expect(parseScheduleCommand("/timezone +01:00")).toMatchObject({ command: "timezone", error: expect.stringContaining("offsets like +01:00 are not accepted") });
    expect(parseScheduleCommand("/timezone Europe/Berlin now")).toMatchObject({
      command: "timezone",
      error: expect.stringMatching(/^Write \/timezone and one IANA time zone name/),
    });
  });

  it("keeps its answer short for a huge argument", () => {
    const parsed = parseScheduleCommand(`/unschedule ${"x".repeat(100_000)}`);
    expect(parsed).toMatchObject({ command: "unschedule" });
    expect(JSON.stringify(parsed).length).toBeLessThan(200);
  });
});
