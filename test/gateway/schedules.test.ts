// Scheduled jobs through the real path (the runtime, the gateway, the real SDK against the fake Messages API, a
// SQLite store): the model schedules with the tool, the scheduler submits the due run through the inbox, the run
// is a task of the job's owner in the conversation where it was scheduled, and its reply goes out once.
import { afterEach, describe, expect, it } from "vitest";
import { lastUserText, reply, text, toolUse } from "../fakes/anthropic/server.js";
import { effectiveToolsFor } from "../../src/runtime/tools/registry.js";
import { deferred } from "../helpers/deferred.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { manualTimeouts } from "../helpers/timers.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const START = Date.parse("2026-11-27T10:00:00Z");

async function harness(graceMs = 3_600_000) {
  const clock = { t: START };
  const timeouts = manualTimeouts();
  // One clock for the scheduler and the gateway, as a server has: the commands word "today" and "tomorrow" by it.
  const now = () => clock.t;
  h = await startHarness({ clock: { now }, schedules: { now, timers: timeouts.timers, graceMs, defaultZone: "Europe/Berlin" } });
  return { clock, timeouts };
}

/** Lets the scheduler look (as its timer would), then waits for what it submitted to be handled and delivered. */
async function tick(timeouts: ReturnType<typeof manualTimeouts>) {
  timeouts.fireAll();
  await h.scheduler!.idle();
  await h.gateway.idle();
}

describe("a one-shot job", () => {
  it("fires once in the terminal chat where it was scheduled, as a scheduled run of its owner, and is then over", async () => {
    const { clock, timeouts } = await harness();
    h.fake.script(reply(toolUse("schedule", { instruction: "Remind Alice to stretch", in_seconds: 60 })), text("I'll remind you in a minute."));
    expect(await h.say("remind me to stretch in a minute", { session: "term" })).toEqual(["main: I'll remind you in a minute."]);
    const answer = JSON.stringify(h.fake.accepted()[1]!.messages.at(-1));
    expect(answer).toMatch(/Scheduled job sch_\w+, once\. Next run: today at 11:01 \(Europe\/Berlin\), 2026-11-27T11:01:00\+01:00/);
    const [job] = await h.store.schedules.list("alice");
    expect(job).toMatchObject({ sessionKey: "console:term", ownerId: "alice", nextDue: START + 60_000, createdByTask: expect.any(String) });

    h.scheduler!.start();
    await tick(timeouts);
    expect(h.fake.accepted()).toHaveLength(2); // not due yet

    clock.t = START + 60_000;
    h.fake.script(text("Time to stretch, Alice!"));
    const before = h.seen.length;
    await tick(timeouts);
    expect(h.seen.slice(before).map((m) => `${m.sessionKey} ${m.agent}: ${m.text}`)).toEqual(["console:term main: Time to stretch, Alice!"]);
    const run = h.fake.accepted()[2]!;
    expect(lastUserText(run)).toContain(`[Scheduled run of job ${job!.id}, due 2026-11-27T11:01:00+01:00 (Europe/Berlin). This is not a live message`);
    expect(lastUserText(run)).toContain("Remind Alice to stretch");
    const runs = (await h.store.requests.ofSession("console:term")).filter((r) => r.externalId.startsWith("schedule:"));
    expect(runs.map((r) => [r.externalId, r.userId, r.status])).toEqual([[`schedule:${job!.id}:2026-11-27T10:01:00.000Z`, "alice", "done"]]);
    expect(await h.store.schedules.get(job!.id)).toMatchObject({ status: "done", nextDue: null, lastDue: START + 60_000, lastResult: "run" });

    // Later looks run nothing more.
    clock.t += 3_600_000;
    await tick(timeouts);
    expect(h.fake.accepted()).toHaveLength(3);
  });

  it("a second scheduler on the same store (another replica) racing for the same due time makes one run", async () => {
    const { clock, timeouts } = await harness();
    await h.store.schedules.create(
      {
        id: "sch_race",
        ownerId: "alice",
        sessionKey: "console:race",
        instruction: "Say hi",
        schedule: { kind: "once", at: START + 1000 },
        timezone: "UTC",
        nextDue: START + 1000,
        createdByTask: null,
      },
      20,
    );
    clock.t = START + 1000;
    h.fake.script(text("Hi!"));
    // Both look at the same moment: both submit the run's request, the inbox keeps one.
    const { Scheduler } = await import("../../src/gateway/scheduler.js");
    const other = new Scheduler({
      store: h.store,
      submit: (m) => h.gateway.submit(m),
      ids: h.runtime.ids,
      now: () => clock.t,
      timers: timeouts.timers,
      log: h.runtime.log,
      graceMs: 3_600_000,
    });
    await Promise.all([h.scheduler!.look(), other.look()]);
    await h.gateway.idle();
    expect(h.seen.filter((m) => m.sessionKey === "console:race").map((m) => m.text)).toEqual(["Hi!"]);
    expect(h.fake.accepted()).toHaveLength(1);
  });
});

describe("runs missed while the gateway was down", () => {
  it("a run less than SCHEDULE_GRACE late runs once at start; one later than that is skipped and the owner told", async () => {
    const { clock, timeouts } = await harness();
    const base = { ownerId: "alice", instruction: "Water the plants", timezone: "Europe/Berlin", createdByTask: null };
    await h.store.schedules.create(
      { ...base, id: "sch_soon", sessionKey: "console:a", schedule: { kind: "once", at: START - 1_800_000 }, nextDue: START - 1_800_000 },
      20,
    );
    await h.store.schedules.create(
      { ...base, id: "sch_old", sessionKey: "console:b", schedule: { kind: "once", at: START - 7_200_000 }, nextDue: START - 7_200_000 },
      20,
    );
    clock.t = START;
    h.fake.script(text("Time to water the plants."));
    h.scheduler!.start();
    await h.scheduler!.idle();
    await h.gateway.idle();
    expect(h.seen.map((m) => `${m.sessionKey} ${m.agent}: ${m.text}`).sort()).toEqual([
      "console:a main: Time to water the plants.",
      "console:b switchboard: Skipped job sch_old (“Water the plants”): its run due today at 09:00 (Europe/Berlin) was missed while I was offline, 1 h or more ago.",
    ]);
    expect(await h.store.schedules.get("sch_old")).toMatchObject({ status: "done", lastResult: "skipped: 1 late" });
    await tick(timeouts);
    expect(h.fake.accepted()).toHaveLength(1);
  });
});

describe("the chat commands", () => {
  it("/schedules lists the sender's jobs in this chat only; another member can neither see nor cancel them", async () => {
    const { clock } = await harness();
    const job = (id: string, sessionKey: string, ownerId = "alice") => ({
      id,
      ownerId,
      sessionKey,
      instruction: `Digest ${id}`,
      schedule: { kind: "cron" as const, cron: "0 9 * * *" },
      timezone: "Europe/Berlin",
      nextDue: Date.parse("2026-11-28T08:00:00Z"),
      createdByTask: null,
    });
    await h.store.schedules.create(job("sch_a", "console:group"), 20);
    await h.store.schedules.create(job("sch_b", "console:dm"), 20);
    await h.store.schedules.create(job("sch_c", "console:group", "bob"), 20);
    clock.t = START;
    expect(await h.say("/schedules", { session: "group", user: "alice" })).toEqual([
      "switchboard: Your scheduled jobs in this chat (times in Europe/Berlin):\n• sch_a — cron 0 9 * * *; next tomorrow at 09:00 (Europe/Berlin), 2026-11-28T09:00:00+01:00\n  “Digest sch_a”",
    ]);
    expect(await h.say("/unschedule sch_a", { session: "group", user: "bob" })).toEqual(["switchboard: You have no job sch_a; /schedules lists yours."]);
    expect(await h.say("/unschedule sch_a", { session: "group", user: "alice" })).toEqual(["switchboard: Cancelled job sch_a; it will not run again."]);
    expect((await h.store.schedules.all(10)).map((j) => j.id)).toEqual(["sch_b", "sch_c"]);
    expect(h.fake.accepted()).toHaveLength(0);
  });

  it("/timezone sets the sender's zone, which the listing then uses; a bad name says what to send", async () => {
    await harness();
    expect(await h.say("/timezone")).toEqual([
      "switchboard: Your time zone is Europe/Berlin (the server's default). Set yours with /timezone <IANA name>, e.g. /timezone Europe/Berlin.",
    ]);
    expect(await h.say("/timezone Mars/Olympus")).toEqual([expect.stringMatching(/^switchboard: Time zone "Mars\/Olympus" is not a time zone this server knows/)]);
    expect(await h.say("/timezone Asia/Tokyo")).toEqual([expect.stringMatching(/^switchboard: Your time zone is now Asia\/Tokyo\./)]);
    expect(await h.store.schedules.timezone("alice")).toBe("Asia/Tokyo");
    expect(await h.store.schedules.timezone("bob")).toBeNull();
  });
});

describe("/cancel during a scheduled run", () => {
  it("stops the running task, not the schedule: the next due time runs", async () => {
    const { clock, timeouts } = await harness();
    await h.store.schedules.create(
      {
        id: "sch_daily",
        ownerId: "alice",
        sessionKey: "console:t",
        instruction: "Digest",
        schedule: { kind: "cron", cron: "0 * * * *" },
        timezone: "UTC",
        nextDue: START,
        createdByTask: null,
      },
      20,
    );
    const called = deferred<void>();
    h.fake.script(() => {
      called.resolve();
      return { hang: true };
    });
    clock.t = START;
    h.scheduler!.start();
    await h.scheduler!.idle();
    await called.promise;
    expect(await h.say("/cancel")).toContain("switchboard: Cancelled.");
    expect(await h.store.schedules.get("sch_daily")).toMatchObject({ status: "active", nextDue: START + 3_600_000 });

    clock.t = START + 3_600_000;
    h.fake.script(text("The next digest."));
    await tick(timeouts);
    expect(h.seen.at(-1)?.text).toBe("The next digest.");
  });
});

describe("who gets the scheduling tools", () => {
  it("main always; a skill or agent only when its definition names them", () => {
    const all = ["schedule", "list_schedules", "cancel_schedule", "use_skill", "complete"];
    expect(effectiveToolsFor("main", all, null)).toEqual(expect.arrayContaining(["schedule", "list_schedules", "cancel_schedule"]));
    expect(effectiveToolsFor("skill", all, null)).not.toContain("schedule");
    expect(effectiveToolsFor("agent", all, null)).not.toContain("list_schedules");
    expect(effectiveToolsFor("agent", all, ["schedule"])).toContain("schedule");
  });
});
