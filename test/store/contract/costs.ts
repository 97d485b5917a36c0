// Contract: what model calls cost, kept beside their tokens in whole nano-USD (so sums are exact) and read back in
// USD: per request, per task (the sum of its requests) and per session (all time, and since the last /reset).
import { describe, expect, it } from "vitest";
import type { StepCommit } from "../../../src/store/store.js";
import { newRequest, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const OTHER = "telegram:200";

const usage = (requestId: string, costNanoUsd: number, tokens = 10): NonNullable<StepCommit["usage"]> => ({
  requestId,
  inputTokens: tokens,
  outputTokens: 1,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costNanoUsd,
});

export function costContract(ctx: ContractContext): void {
  describe("cost", () => {
    it("adds up exactly over several steps on the request, its task and its session", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      // 0.1 + 0.2 USD: summed as floats this would be 0.30000000000000004.
      await commitStep(store, { sessionKey: K, usage: usage("r1", 100_000_000) });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 200_000_000) });
      await store.requests.insert(newRequest("r2", K));
      await commitStep(store, { sessionKey: K, request: { id: "r2", status: "running", taskId: "t1" }, usage: usage("r2", 1) });
      await startTask(store, OTHER, { task: "t2", request: "r3" });
      await commitStep(store, { sessionKey: OTHER, usage: usage("r3", 5_000_000_000) });

      expect((await store.requests.get("r1"))?.costUsd).toBe(0.3);
      expect((await store.requests.get("r2"))?.costUsd).toBe(0.000000001);
      expect(await store.tasks.usage("t1")).toEqual({ inputTokens: 30, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.300000001 });
      expect((await store.tasks.usage("t2")).costUsd).toBe(5);
      expect((await store.tasks.usage("t-none")).costUsd).toBe(0);
      expect(await store.sessions.usage(K)).toMatchObject({ costUsd: 0.300000001, costSinceResetUsd: 0.300000001, sinceReset: 33 });
      expect(await store.sessions.usage("telegram:unknown")).toMatchObject({ costUsd: 0, costSinceResetUsd: 0 });
    });

    it("a new request costs nothing yet, and every listing of requests carries the cost", async () => {
      const { store } = ctx;
      const inserted = await store.requests.insert(newRequest("r1", K));
      expect(inserted).toMatchObject({ status: "inserted", request: { costUsd: 0 } });
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "running" }, usage: usage("r1", 1_500_000) });
      expect((await store.requests.ofSession(K)).map((r) => r.costUsd)).toEqual([0.0015]);
      expect((await store.requests.unfinished()).map((r) => r.costUsd)).toEqual([0.0015]);
    });

    it("a /reset zeroes the cost since the reset and keeps the all-time cost", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 2_000_000) });
      await commitStep(store, { sessionKey: K, newMainAgentSessionId: "as-fresh" });
      expect(await store.sessions.usage(K)).toMatchObject({ costUsd: 0.002, costSinceResetUsd: 0, sinceReset: 0 });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 250_000) });
      expect(await store.sessions.usage(K)).toMatchObject({ costUsd: 0.00225, costSinceResetUsd: 0.00025 });
      expect((await store.requests.get("r1"))?.costUsd).toBe(0.00225);
    });

    it("the memory extraction's cost adds to the session (all time and since the reset), not to any request", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 1_000_000) });
      await store.memories.save("telegram:alice", {
        add: [{ id: "m1", text: "prefers tea" }],
        usage: { sessionKey: K, inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, costNanoUsd: 30_000 },
      });
      expect(await store.sessions.usage(K)).toMatchObject({ inputTokens: 17, costUsd: 0.00103, costSinceResetUsd: 0.00103 });
      expect((await store.requests.get("r1"))?.costUsd).toBe(0.001);
      expect((await store.tasks.usage("t1")).costUsd).toBe(0.001);
    });

    it("a request's updatedAt follows its last change", async () => {
      const { store, clock } = ctx;
      const created = clock.t;
      await store.requests.insert(newRequest("r1", K));
      expect(await store.requests.get("r1")).toMatchObject({ createdAt: created, updatedAt: created });
      const later = clock.advance(5_000);
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "done" } });
      expect(await store.requests.get("r1")).toMatchObject({ createdAt: created, updatedAt: later });
    });
  });
}
