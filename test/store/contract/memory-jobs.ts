// Contract: the queue of memory extraction jobs. Queued with a task's end (StepCommit.memoryJob), claimed by one
// worker at a time, finished (with the memories found) only by the worker that still holds the claim.
import { describe, expect, it } from "vitest";
import { FencedError } from "../../../src/store/store.js";
import { ALICE, BOB, freshAgentSessionId, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const OTHER = "telegram:200";
const CLAIM = 60_000;
const MAX = 3;

export function memoryJobContract(ctx: ContractContext): void {
  const queue = async (taskId: string, userId = ALICE, sessionKey = K) => {
    await commitStep(ctx.store, { sessionKey, memoryJob: { taskId, userId } });
  };
  const claim = (holder: string) => ctx.store.memories.claimJob(holder, ctx.clock.t, CLAIM, MAX);
  const jobIds = async () => (await ctx.store.memories.pendingJobs()).map((j) => j.taskId);

  describe("memory jobs", () => {
    it("a step's memoryJob queues one job for the task, in the step's session; a second one is ignored", async () => {
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, memoryJob: { taskId: "t1", userId: ALICE }, task: { id: "t1", status: "completed" } });
      const queuedAt = clock.t;
      clock.advance(1_000);
      await commitStep(store, { sessionKey: OTHER, memoryJob: { taskId: "t1", userId: BOB } });
      expect(await store.memories.pendingJobs()).toEqual([{ taskId: "t1", userId: ALICE, sessionKey: K, attempts: 0, status: "pending", nextAt: queuedAt, error: null }]);
    });

    it("is part of the step: a fenced step that is refused queues nothing", async () => {
      const { store } = ctx;
      const lease = (await store.leases.acquire(K, "replica-a", 10_000))!;
      const refused = await store.steps
        .writer({ ...lease, token: lease.token + 1 })
        .commit({ memoryJob: { taskId: "t1", userId: ALICE } })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(FencedError);
      expect(await store.memories.pendingJobs()).toEqual([]);
    });

    it("hands out the oldest due job once; a finished job is gone", async () => {
      const { store, clock } = ctx;
      await queue("t1");
      clock.advance(10);
      await queue("t2", BOB, OTHER);
      expect(await claim("w1")).toEqual({ taskId: "t1", userId: ALICE, sessionKey: K, attempts: 1 });
      expect(await claim("w2")).toEqual({ taskId: "t2", userId: BOB, sessionKey: OTHER, attempts: 1 });
      expect(await claim("w3")).toBeNull();
      expect(await store.memories.pendingJobs()).toMatchObject([
        { taskId: "t1", status: "running" },
        { taskId: "t2", status: "running" },
      ]);
      expect(await store.memories.finishJob("t1", "w1", null)).toBe(true);
      expect(await store.memories.finishJob("t1", "w1", null)).toBe(false);
      expect(await jobIds()).toEqual(["t2"]);
      clock.advance(CLAIM + 1);
      expect((await claim("w4"))?.taskId).toBe("t2");
      expect(await claim("w5")).toBeNull();
    });

    it("two claims at once get different jobs", async () => {
      const { store, clock } = ctx;
      for (const id of ["t1", "t2", "t3"]) {
        await queue(id);
        clock.advance(1);
      }
      const claims = await Promise.all(["w1", "w2", "w3", "w4"].map((w) => claim(w)));
      const ids = claims.map((c) => c?.taskId ?? null);
      expect(ids.filter((id) => id !== null).sort()).toEqual(["t1", "t2", "t3"]);
      expect(ids.filter((id) => id === null)).toHaveLength(1);
      expect((await store.memories.pendingJobs()).every((j) => j.status === "running" && j.attempts === 1)).toBe(true);
    });

    it("a claim that ran out is taken over; the old holder can then neither finish nor retry it, nor write", async () => {
      const { store, clock } = ctx;
      await store.sessions.open(K, freshAgentSessionId);
      await queue("t1");
      expect((await claim("w1"))?.attempts).toBe(1);
      clock.advance(CLAIM);
      expect(await claim("w2")).toBeNull(); // still held at the very end of the claim
      clock.advance(1);
      expect(await claim("w2")).toEqual({ taskId: "t1", userId: ALICE, sessionKey: K, attempts: 2 });
      const late = {
        add: [{ id: "m-late", text: "written by a worker that lost its claim" }],
        usage: { sessionKey: K, inputTokens: 9, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0, costNanoUsd: 0 },
      };
      expect(await store.memories.finishJob("t1", "w1", late)).toBe(false);
      await store.memories.retryJob("t1", "w1", "boom", clock.t + 1);
      expect(await store.memories.list(ALICE)).toEqual([]);
      expect((await store.sessions.usage(K)).inputTokens).toBe(0);
      expect(await store.memories.pendingJobs()).toMatchObject([{ taskId: "t1", status: "running", error: null }]);
      expect(await store.memories.finishJob("t1", "w2", null)).toBe(true);
    });

    it("a holder whose claim ran out but was not taken over still finishes", async () => {
      const { store, clock } = ctx;
      await queue("t1");
      await claim("w1");
      clock.advance(CLAIM * 2);
      expect(await store.memories.finishJob("t1", "w1", null)).toBe(true);
      expect(await claim("w2")).toBeNull();
    });

    it("a retried job waits until its time, keeping the error; then it is claimed again", async () => {
      const { store, clock } = ctx;
      await queue("t1");
      await claim("w1");
      await store.memories.retryJob("t1", "w1", "the model was overloaded", clock.t + 30_000);
      expect(await store.memories.pendingJobs()).toEqual([
        { taskId: "t1", userId: ALICE, sessionKey: K, attempts: 1, status: "pending", nextAt: clock.t + 30_000, error: "the model was overloaded" },
      ]);
      expect(await claim("w2")).toBeNull();
      clock.advance(29_999);
      expect(await claim("w2")).toBeNull();
      clock.advance(1);
      expect(await claim("w2")).toMatchObject({ taskId: "t1", attempts: 2 });
      expect(await store.memories.finishJob("t1", "w1", null)).toBe(false);
    });

    it("a job claimed maxAttempts times is failed instead of claimed, and the next one is handed out", async () => {
      const { store, clock } = ctx;
      await queue("t1");
      clock.advance(1);
      await queue("t2");
      for (let attempt = 1; attempt <= MAX; attempt++) {
        expect(await claim(`w${attempt}`)).toMatchObject({ taskId: "t1", attempts: attempt });
        await store.memories.retryJob("t1", `w${attempt}`, `failure ${attempt}`, clock.t);
      }
      expect(await claim("w9")).toMatchObject({ taskId: "t2", attempts: 1 });
      expect(await jobIds()).toEqual(["t2"]);
      expect(await claim("w10")).toBeNull();
    });

    it("a crash on every attempt (claims running out) also ends in failed", async () => {
      const { store, clock } = ctx;
      await queue("t1");
      for (let attempt = 1; attempt <= MAX; attempt++) {
        expect(await claim(`w${attempt}`)).toMatchObject({ attempts: attempt });
        clock.advance(CLAIM + 1);
      }
      expect(await claim("w9")).toBeNull();
      expect(await store.memories.pendingJobs()).toEqual([]);
    });

    it("finish writes the memories for the job's user, from its task, with the usage, in one go", async () => {
      const { store, clock } = ctx;
      await store.sessions.open(K, freshAgentSessionId);
      await store.memories.save(ALICE, { add: [{ id: "old", text: "Lives in Porto" }] });
      await store.memories.save(BOB, { add: [{ id: "bob-1", text: "Bob's fact" }] });
      await queue("t1");
      await claim("w1");
      clock.advance(500);
      const done = await store.memories.finishJob("t1", "w1", {
        add: [{ id: "new", text: "Lives in Lisbon", kind: "identity" }],
        remove: ["old", "bob-1"],
        usage: { sessionKey: K, inputTokens: 40, outputTokens: 10, cacheReadTokens: 5, cacheWriteTokens: 1, costNanoUsd: 0 },
      });
      expect(done).toBe(true);
      expect(await store.memories.list(ALICE)).toEqual([
        { id: "new", userId: ALICE, text: "Lives in Lisbon", kind: "identity", taskId: "t1", createdAt: clock.t, updatedAt: clock.t },
      ]);
      expect((await store.memories.list(BOB)).map((m) => m.id)).toEqual(["bob-1"]);
      expect(await store.sessions.usage(K)).toMatchObject({ inputTokens: 40, outputTokens: 10, cacheReadTokens: 5, cacheWriteTokens: 1, sinceReset: 56 });
      expect(await store.memories.pendingJobs()).toEqual([]);
    });

    it("moves with its conversation (moveSession)", async () => {
      const { store } = ctx;
      await store.sessions.open(K, freshAgentSessionId);
      await queue("t1");
      expect(await store.sessions.move(K, "telegram:300")).toEqual({ moved: 1 });
      expect((await store.memories.pendingJobs()).map((j) => j.sessionKey)).toEqual(["telegram:300"]);
    });
  });
}
