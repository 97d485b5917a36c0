// Contract: scheduled jobs and users' time zones (the schedules role).
import { describe, expect, it } from "vitest";
import type { NewScheduleJob } from "../../../src/store/store.js";
import { ChangeRecorder, isOutbound } from "./changes-recorder.js";
import type { ContractContext } from "./fixtures.js";

const ALICE = "telegram:alice";
const BOB = "telegram:bob";
const TOPIC = "telegram:-100:topic:7";

function job(id: string, over: Partial<NewScheduleJob> = {}): NewScheduleJob {
  return {
    id,
    ownerId: ALICE,
    sessionKey: TOPIC,
    instruction: "Remind me to call the dentist",
    schedule: { kind: "once", at: 2_000_000 },
    timezone: "Europe/Berlin",
    nextDue: 2_000_000,
    createdByTask: "task-1",
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    ...over,
  };
}

export function scheduleContract(ctx: ContractContext): void {
  describe("schedules", () => {
    it("stores a job and reads it back whole", async () => {
      expect(await ctx.store.schedules.create(job("sch_1"), 20)).toBe(true);
      expect(await ctx.store.schedules.get("sch_1")).toEqual({
        ...job("sch_1"),
        status: "active",
        lastDue: null,
        lastResult: null,
        createdAt: ctx.clock.now(),
      });
      expect(await ctx.store.schedules.get("sch_none")).toBeNull();
      // A job made where nothing traces keeps no traceparent.
      const { traceparent: _none, ...untraced } = job("sch_2");
      await ctx.store.schedules.create(untraced, 20);
      expect((await ctx.store.schedules.get("sch_2"))?.traceparent).toBeNull();
    });

    it("refuses a job past the owner's limit, counting paused ones but not finished ones", async () => {
      const { schedules } = ctx.store;
      expect(await schedules.create(job("a"), 2)).toBe(true);
      expect(await schedules.create(job("b", { schedule: { kind: "cron", cron: "0 9 * * *" } }), 2)).toBe(true);
      expect(await schedules.create(job("c"), 2)).toBe(false);
      expect(await schedules.get("c")).toBeNull();
      expect(await schedules.create(job("other", { ownerId: BOB }), 2)).toBe(true);
      await schedules.pause("b", "bot blocked");
      expect(await schedules.create(job("c"), 2)).toBe(false);
      expect(await schedules.advance("a", 2_000_000, null, 2_000_000, "run")).toBe(true);
      expect(await schedules.create(job("c"), 2)).toBe(true);
    });

    it("lists only the owner's jobs, in one conversation when asked, oldest first", async () => {
      const { schedules } = ctx.store;
      await schedules.create(job("j1"), 20);
      ctx.clock.advance(1);
      await schedules.create(job("j2", { sessionKey: "telegram:100" }), 20);
      ctx.clock.advance(1);
      await schedules.create(job("j3", { ownerId: BOB }), 20);
      expect((await schedules.list(ALICE)).map((j) => j.id)).toEqual(["j1", "j2"]);
      expect((await schedules.list(ALICE, TOPIC)).map((j) => j.id)).toEqual(["j1"]);
      expect((await schedules.list(BOB, "telegram:100")).map((j) => j.id)).toEqual([]);
      expect((await schedules.all(10)).map((j) => j.id)).toEqual(["j1", "j2", "j3"]);
      expect((await schedules.all(2)).map((j) => j.id)).toEqual(["j1", "j2"]);
    });

    it("answers the active jobs that are due, earliest first, and the next due time", async () => {
      const { schedules } = ctx.store;
      expect(await schedules.nextDue()).toBeNull();
      await schedules.create(job("late", { nextDue: 3_000 }), 20);
      await schedules.create(job("early", { nextDue: 1_000 }), 20);
      await schedules.create(job("future", { nextDue: 9_000 }), 20);
      await schedules.create(job("paused", { nextDue: 500 }), 20);
      await schedules.pause("paused", "chat gone");
      expect((await schedules.due(3_000, 10)).map((j) => j.id)).toEqual(["early", "late"]);
      expect((await schedules.due(3_000, 1)).map((j) => j.id)).toEqual(["early"]);
      expect(await schedules.nextDue()).toBe(1_000);
    });

    it("moves a job on once from the due time it was read at: a second replica's move changes nothing", async () => {
      const { schedules } = ctx.store;
      await schedules.create(job("daily", { schedule: { kind: "cron", cron: "0 9 * * *" }, nextDue: 1_000 }), 20);
      expect(await schedules.advance("daily", 1_000, 87_400_000, 1_000, "run")).toBe(true);
      expect(await schedules.advance("daily", 1_000, 87_400_000, 1_000, "run")).toBe(false);
      const moved = await schedules.get("daily");
      expect(moved).toMatchObject({ nextDue: 87_400_000, status: "active", lastDue: 1_000, lastResult: "run" });
    });

    it("queues a move's notice in the same commit, announced once; a lost compare-and-set queues none", async () => {
      const { schedules, outbox } = ctx.store;
      await schedules.create(job("late", { nextDue: 1_000 }), 20);
      const notice = (id: string) => ({
        sessionKey: TOPIC,
        message: { id, requestId: null, taskId: null, agent: "switchboard", depth: 0, text: `Skipped job late (${id})`, kind: "notice" as const },
      });
      const changes = new ChangeRecorder(ctx.store);
      try {
        expect(await schedules.advance("late", 1_000, null, 1_000, "skipped: 1 late", notice("out_1"))).toBe(true);
        // A second replica that read the same due time loses the compare-and-set: its notice is not queued.
        expect(await schedules.advance("late", 1_000, null, 1_000, "skipped: 1 late", notice("out_2"))).toBe(false);
        expect((await outbox.pending(TOPIC)).map((o) => [o.id, o.kind, o.text])).toEqual([["out_1", "notice", "Skipped job late (out_1)"]]);
        expect(await schedules.get("late")).toMatchObject({ status: "done", lastResult: "skipped: 1 late" });
        expect((await changes.settle()).filter(isOutbound(TOPIC))).toEqual([{ kind: "outbound", sessionKey: TOPIC, requestIds: [null] }]);
      } finally {
        changes.close();
      }
    });

    it("a one-shot job with no next due time is done, and no longer due", async () => {
      const { schedules } = ctx.store;
      await schedules.create(job("once", { nextDue: 1_000 }), 20);
      expect(await schedules.advance("once", 1_000, null, 1_000, "skipped: 2 hours late")).toBe(true);
      expect(await schedules.get("once")).toMatchObject({ status: "done", nextDue: null, lastResult: "skipped: 2 hours late" });
      expect(await schedules.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    });

    it("pauses an active job once, and a paused job is not moved on", async () => {
      const { schedules } = ctx.store;
      await schedules.create(job("p", { nextDue: 1_000 }), 20);
      expect(await schedules.pause("p", "bot blocked by the user")).toBe(true);
      expect(await schedules.pause("p", "bot blocked by the user")).toBe(false);
      expect(await schedules.get("p")).toMatchObject({ status: "paused", lastResult: "paused: bot blocked by the user" });
      expect(await schedules.advance("p", 1_000, null, 1_000, "run")).toBe(false);
    });

    it("only the owner cancels a job", async () => {
      const { schedules } = ctx.store;
      await schedules.create(job("mine"), 20);
      expect(await schedules.cancel("mine", BOB)).toBe(false);
      expect(await schedules.get("mine")).not.toBeNull();
      expect(await schedules.cancel("mine", ALICE)).toBe(true);
      expect(await schedules.get("mine")).toBeNull();
      expect(await schedules.cancel("mine", ALICE)).toBe(false);
    });

    it("keeps each user's time zone, replacing it when set again", async () => {
      const { schedules } = ctx.store;
      expect(await schedules.timezone(ALICE)).toBeNull();
      await schedules.setTimezone(ALICE, "Europe/Berlin");
      await schedules.setTimezone(BOB, "America/New_York");
      await schedules.setTimezone(ALICE, "Asia/Tokyo");
      expect(await schedules.timezone(ALICE)).toBe("Asia/Tokyo");
      expect(await schedules.timezone(BOB)).toBe("America/New_York");
    });

    it("keeps jobs across a restart", async () => {
      await ctx.store.schedules.create(job("kept"), 20);
      await ctx.store.schedules.setTimezone(ALICE, "Europe/Berlin");
      ctx.store = await ctx.backend.reopen(ctx.store, ctx.clock.now);
      expect((await ctx.store.schedules.get("kept"))?.instruction).toBe("Remind me to call the dentist");
      expect(await ctx.store.schedules.timezone(ALICE)).toBe("Europe/Berlin");
    });

    it("erasing a user (npm run user -- delete) deletes their jobs in any conversation and their time zone, and no one else's", async () => {
      const { schedules } = ctx.store;
      await schedules.create(job("in-group"), 20);
      await schedules.create(job("in-dm", { sessionKey: "telegram:100" }), 20);
      await schedules.create(job("bobs", { ownerId: BOB }), 20);
      await schedules.setTimezone(ALICE, "Europe/Berlin");
      await schedules.setTimezone(BOB, "Asia/Tokyo");
      const counts = await ctx.store.userData.erase(ALICE);
      expect(counts.schedule_jobs).toBe(2);
      expect(counts.user_timezones).toBe(1);
      expect((await schedules.all(10)).map((j) => j.id)).toEqual(["bobs"]);
      expect(await schedules.timezone(ALICE)).toBeNull();
      expect(await schedules.timezone(BOB)).toBe("Asia/Tokyo");
    });
  });
}
