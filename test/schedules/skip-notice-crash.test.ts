// A skip notice is never lost: moving a late job on and queuing the notice that tells its owner are one commit. The
// process dies at that commit (the SQLite group commit's crash points: just before it, its writes lost; just after
// it, on disk but nobody told) and a new process on the same file looks again: the owner is told exactly once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Scheduler } from "../../src/gateway/scheduler.js";
import { silentLogger } from "../../src/log.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { manualTimeouts } from "../helpers/timers.js";

const NOW = Date.parse("2026-11-27T10:00:00Z");
const KEY = "telegram:-1001:topic:7";
let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "switchboard-skip-crash-"));
  file = join(dir, "switchboard.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function scheduler(store: SqliteStore, process: string): Scheduler {
  let n = 0;
  return new Scheduler({
    store,
    submit: () => Promise.reject(new Error("a late job's due time must not run")),
    ids: { next: (prefix) => `${prefix}_${process}_${++n}` },
    now: () => NOW,
    timers: manualTimeouts().timers,
    log: silentLogger(),
    graceMs: 3_600_000,
  });
}

it.each(["before", "after"] as const)("the process dies just %s the commit that moves a late job on: after the restart its owner is told once", async (when) => {
  let armed = false;
  const die = () => {
    if (!armed) return;
    armed = false;
    throw new Error("killed at the group commit");
  };
  const first = new SqliteStore(file, () => NOW, { groupCommit: { [when]: die } });
  await first.schedules.create(
    {
      id: "sch_late",
      ownerId: "telegram:42",
      sessionKey: KEY,
      instruction: "Water the plants",
      schedule: { kind: "once", at: NOW - 7_200_000 },
      timezone: "UTC",
      nextDue: NOW - 7_200_000,
      createdByTask: null,
    },
    20,
  );
  armed = true;
  await scheduler(first, "a").look(); // the job's error is logged; the process is gone
  expect(armed).toBe(false); // the crash point was reached
  await first.close();

  const second = new SqliteStore(file, () => NOW);
  try {
    await scheduler(second, "b").look();
    const notices = await second.outbox.pending(KEY);
    expect(notices.map((o) => [o.kind, o.agent, o.text])).toEqual([
      ["notice", "switchboard", expect.stringMatching(/^Skipped job sch_late \(“Water the plants”\): its run due today at 08:00 \(UTC\) was missed/)],
    ]);
    // Made by the process whose commit reached the disk: the first one when it died after its commit.
    expect(notices[0]!.id).toBe(when === "after" ? "out_a_1" : "out_b_1");
    expect(await second.schedules.get("sch_late")).toMatchObject({ status: "done", lastResult: "skipped: 1 late" });
    // Looking again tells nobody anything more.
    await scheduler(second, "c").look();
    expect(await second.outbox.pending(KEY)).toHaveLength(1);
  } finally {
    await second.close();
  }
});

it("a run stored by a process that died before moving its job on, then was down past the grace, runs and is not also told as skipped", async () => {
  const store = new SqliteStore(file, () => NOW);
  try {
    await store.schedules.create(
      {
        id: "sch_cut",
        ownerId: "telegram:42",
        sessionKey: KEY,
        instruction: "Water the plants",
        schedule: { kind: "cron", cron: "0 * * * *" },
        timezone: "UTC",
        nextDue: NOW,
        createdByTask: null,
      },
      20,
    );
    // The first process stores the run's request (as the gateway's submit does), then dies before the move.
    let later = NOW;
    const dying = new Scheduler({
      store,
      submit: async (m) => {
        await store.requests.insert({ id: "req_run", sessionKey: m.sessionKey, externalId: m.messageId, kind: "message", userId: m.userId, text: m.text });
        throw new Error("killed after the run's request was stored");
      },
      ids: { next: (prefix) => `${prefix}_dead` },
      now: () => later,
      timers: manualTimeouts().timers,
      log: silentLogger(),
      graceMs: 3_600_000,
    });
    await dying.look();
    expect(await store.schedules.get("sch_cut")).toMatchObject({ nextDue: NOW, lastResult: null });

    // Back 2.5 h later: the 10:00 run is stored and runs at recovery; 11:00 is too late (told), 12:00 runs now.
    later = NOW + 2.5 * 3_600_000;
    const submitted: string[] = [];
    let n = 0;
    await new Scheduler({
      store,
      submit: async (m) => {
        submitted.push(m.messageId);
        return { status: "accepted", requestId: `req_${++n}` };
      },
      ids: { next: (prefix) => `${prefix}_${++n}` },
      now: () => later,
      timers: manualTimeouts().timers,
      log: silentLogger(),
      graceMs: 3_600_000,
    }).look();
    expect(submitted).toEqual(["schedule:sch_cut:2026-11-27T12:00:00.000Z"]);
    const notices = (await store.outbox.pending(KEY)).map((o) => o.text);
    expect(notices).toEqual([expect.stringMatching(/^Skipped job sch_cut .*11:00/)]);
    expect(notices[0]).not.toMatch(/10:00/);
    expect(await store.schedules.get("sch_cut")).toMatchObject({ status: "active", nextDue: NOW + 3 * 3_600_000, lastDue: NOW + 2 * 3_600_000, lastResult: "run" });
  } finally {
    await store.close();
  }
});
