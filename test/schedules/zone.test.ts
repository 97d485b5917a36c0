// Time zones: names checked against the zone data Node ships, wall times converted across both DST changes.
import { describe, expect, it } from "vitest";
import { checkZone, effectiveZone, instantOf, isoInZone, offsetAt } from "../../src/schedules/zone.js";

const utc = (iso: string) => Date.parse(iso);

describe("checkZone", () => {
  it("accepts IANA names and answers their canonical spelling", () => {
    expect(checkZone("Europe/Berlin")).toEqual({ zone: "Europe/Berlin" });
    expect(checkZone(" europe/berlin ")).toEqual({ zone: "Europe/Berlin" });
    // Three parts; ICU answers the name it keeps for it (America/Buenos_Aires).
    expect(checkZone("America/Argentina/Buenos_Aires")).toEqual({ zone: expect.stringMatching(/^America\/(Argentina\/)?Buenos_Aires$/) });
    expect(checkZone("UTC")).toEqual({ zone: "UTC" });
    expect(checkZone("Etc/GMT+1")).toEqual({ zone: "Etc/GMT+1" });
  });

  it("refuses unknown zones, offsets, paths and empty or huge names, saying what to give", () => {
    expect(checkZone("Mars/Olympus")).toEqual({ error: expect.stringContaining('"Mars/Olympus" is not a time zone this server knows') });
    expect(checkZone("+01:00")).toEqual({ error: expect.stringContaining("offsets like +01:00 are not accepted") });
    expect(checkZone("../../etc/passwd")).toEqual({ error: expect.stringContaining("is not an IANA time zone name") });
    expect(checkZone("")).toEqual({ error: expect.stringContaining("is empty") });
    const huge = checkZone(`Europe/${"x".repeat(10_000)}`);
    expect("error" in huge && huge.error.length).toBeLessThan(200);
  });

  it("falls back from the job's zone to the user's, then DEFAULT_TIMEZONE, then UTC", () => {
    expect(effectiveZone("Asia/Tokyo", "Europe/Berlin", "America/New_York")).toBe("Asia/Tokyo");
    expect(effectiveZone(undefined, "Europe/Berlin", "America/New_York")).toBe("Europe/Berlin");
    expect(effectiveZone(undefined, null, "America/New_York")).toBe("America/New_York");
    expect(effectiveZone(undefined, null, undefined)).toBe("UTC");
  });
});

describe("wall time to instant", () => {
  const wall = (year: number, month: number, day: number, hour: number, minute: number) => ({ year, month, day, hour, minute, second: 0 });

  it("reads an ordinary wall time with the offset in force that day, in two zones", () => {
    expect(instantOf(wall(2026, 11, 28, 9, 0), "Europe/Berlin")).toBe(utc("2026-11-28T08:00:00Z"));
    expect(instantOf(wall(2026, 7, 1, 9, 0), "Europe/Berlin")).toBe(utc("2026-07-01T07:00:00Z"));
    expect(instantOf(wall(2026, 11, 28, 9, 0), "America/New_York")).toBe(utc("2026-11-28T14:00:00Z"));
  });

  it("moves a time in the spring-forward gap forward by the gap (02:30 → 03:30), in Berlin and New York", () => {
    expect(isoInZone(instantOf(wall(2026, 3, 29, 2, 30), "Europe/Berlin"), "Europe/Berlin")).toBe("2026-03-29T03:30:00+02:00");
    expect(isoInZone(instantOf(wall(2026, 3, 8, 2, 30), "America/New_York"), "America/New_York")).toBe("2026-03-08T03:30:00-04:00");
  });

  it("takes the first of a time that happens twice at fall-back, in Berlin and New York", () => {
    expect(instantOf(wall(2026, 10, 25, 2, 30), "Europe/Berlin")).toBe(utc("2026-10-25T00:30:00Z")); // 02:30 CEST, not CET
    expect(instantOf(wall(2026, 11, 1, 1, 30), "America/New_York")).toBe(utc("2026-11-01T05:30:00Z")); // 01:30 EDT, not EST
  });

  it("writes ISO 8601 with the offset in force, half hours included", () => {
    expect(isoInZone(utc("2026-11-28T08:00:00Z"), "Europe/Berlin")).toBe("2026-11-28T09:00:00+01:00");
    expect(isoInZone(utc("2026-11-28T08:00:00Z"), "UTC")).toBe("2026-11-28T08:00:00+00:00");
    expect(isoInZone(utc("2026-11-28T08:00:00Z"), "Asia/Kolkata")).toBe("2026-11-28T13:30:00+05:30");
    expect(isoInZone(utc("2026-11-28T08:00:00Z"), "America/St_Johns")).toBe("2026-11-28T04:30:00-03:30");
    expect(offsetAt(utc("2026-10-25T00:59:59Z"), "Europe/Berlin")).toBe(2 * 3_600_000);
    expect(offsetAt(utc("2026-10-25T01:00:00Z"), "Europe/Berlin")).toBe(3_600_000);
  });
});
