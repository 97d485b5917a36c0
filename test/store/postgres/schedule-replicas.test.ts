// Two replicas on one PostgreSQL database racing for the same due jobs: each due time becomes one request (the
// run's external id), each job moves on once, and the owner of a job whose runs were too late is told once.
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Scheduler } from "../../../src/gateway/scheduler.js";
import type { SubmitResult } from "../../../src/gateway/types.js";
import { silentLogger } from "../../../src/log.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../../helpers/postgres.js";
import { manualTimeouts } from "../../helpers/timers.js";

const NOW = Date.parse("2026-11-27T10:00:30Z");
const JOBS = 40;

describeIfPostgres("PostgreSQL: two replicas' schedulers racing for the same due jobs", () => {
  let database: FreshDatabase;
  const opened: PostgresStore[] = [];

  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    await database.drop();
  });

  it("makes one run per due time, moves each job on once and tells a skip once", async () => {
    const [a, b] = await Promise.all([PostgresStore.open(database.url, { poolMax: 4 }), PostgresStore.open(database.url, { poolMax: 4 })]);
    opened.push(a, b);
    for (let i = 0; i < JOBS; i++) {
      const due = Date.parse("2026-11-27T10:00:00Z");
      const base = { id: `sch_${i}`, ownerId: "telegram:1001", sessionKey: `telegram:${i}`, instruction: `job ${i}`, timezone: "UTC", createdByTask: null };
      await a.schedules.create(
        i % 2 ? { ...base, schedule: { kind: "cron", cron: "* * * * *" }, nextDue: due } : { ...base, schedule: { kind: "once", at: due }, nextDue: due },
        1000,
      );
    }
    await a.schedules.create(
      {
        id: "sch_late",
        ownerId: "telegram:1001",
        sessionKey: "telegram:late",
        instruction: "late",
        timezone: "UTC",
        createdByTask: null,
        schedule: { kind: "once", at: NOW - 7_200_000 },
        nextDue: NOW - 7_200_000,
      },
      1000,
    );
    const counts = { run: 0, skipped: 0, notices: 0 };
    const scheduler = (store: PostgresStore) =>
      new Scheduler({
        store,
        // As the gateway stores a message: a new request unless (session, external id) was stored before.
        submit: async (m): Promise<SubmitResult> => {
          const result = await store.requests.insert({
            id: randomUUID(),
            sessionKey: m.sessionKey,
            externalId: m.messageId,
            kind: "message",
            userId: m.userId,
            text: m.text,
          });
          return result.status === "duplicate" ? { status: "duplicate", requestId: result.request.id } : { status: "accepted", requestId: randomUUID() };
        },
        ids: { next: (prefix) => `${prefix}_${randomUUID()}` },
        now: () => NOW,
        timers: manualTimeouts().timers,
        log: silentLogger(),
        graceMs: 3_600_000,
        observer: { run: () => void counts.run++, missed: () => {}, skipped: (n) => void (counts.skipped += n) },
      });
    const [one, two, three, four] = [scheduler(a), scheduler(a), scheduler(b), scheduler(b)];
    await Promise.all([one.look(), two.look(), three.look(), four.look()]);

    for (let i = 0; i < JOBS; i++) {
      const requests = await b.requests.ofSession(`telegram:${i}`);
      expect(requests.map((r) => r.externalId)).toEqual([`schedule:sch_${i}:2026-11-27T10:00:00.000Z`]);
      const job = await b.schedules.get(`sch_${i}`);
      expect(job).toMatchObject(
        i % 2 ? { status: "active", nextDue: Date.parse("2026-11-27T10:01:00Z"), lastResult: "run" } : { status: "done", nextDue: null, lastResult: "run" },
      );
    }
    counts.notices = (await b.outbox.pending("telegram:late")).length;
    expect(counts).toEqual({ run: JOBS, skipped: 1, notices: 1 });
    expect(await b.requests.ofSession("telegram:late")).toEqual([]);
  });
});
