// A scheduled run's external id is a function of the job and the due time only.
import { describe, expect, it } from "vitest";
import { parseRunExternalId, runExternalId } from "../../src/schedules/run-id.js";

describe("run external ids", () => {
  const due = Date.parse("2026-11-28T08:00:00Z");

  it("are the same for the same job and due time, wherever and whenever they are made", () => {
    expect(runExternalId("sch_1a2b3c4d5e", due)).toBe("schedule:sch_1a2b3c4d5e:2026-11-28T08:00:00.000Z");
    expect(runExternalId("sch_1a2b3c4d5e", due)).toBe(runExternalId("sch_1a2b3c4d5e", Date.parse("2026-11-28T09:00:00+01:00")));
    expect(runExternalId("sch_1a2b3c4d5e", due + 60_000)).not.toBe(runExternalId("sch_1a2b3c4d5e", due));
    expect(runExternalId("sch_other", due)).not.toBe(runExternalId("sch_1a2b3c4d5e", due));
  });

  it("read back to their job and due time, and nothing else reads as one", () => {
    expect(parseRunExternalId(runExternalId("3f2a9c1e-6b7d-4e8f-9a0b-1c2d3e4f5a6b", due + 1))).toEqual({ jobId: "3f2a9c1e-6b7d-4e8f-9a0b-1c2d3e4f5a6b", due: due + 1 });
    // Platform message ids: Telegram's numbers, Slack's ts, the terminal's UUIDs, an HTTP idempotency key.
    for (const id of [
      "4242",
      "1700000000.000100",
      "6f1c8a52-2b1e-4c1a-9d3e-0a6f0c7b9e11",
      "schedule:x",
      "schedule:sch_1:2026-02-30T08:00:00.000Z",
      "schedule:a b:2026-11-28T08:00:00.000Z",
    ]) {
      expect(parseRunExternalId(id), id).toBeNull();
    }
  });

  it("refuse what is not a job id or a due time (a programming error)", () => {
    expect(() => runExternalId("a:b", due)).toThrow(/is not a job id/);
    expect(() => runExternalId("sch_1", Number.NaN)).toThrow(/is not a due time/);
  });
});
