// Contract: the change feed (watch/announce) that wakes replicas, and the readiness probe.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoreChange } from "../../../src/store/store.js";
import { ChangeRecorder, isDone, isOutbound, isRequest } from "./changes-recorder.js";
import { ALICE, BOB, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const TTL = 10_000;

export function changeContract(ctx: ContractContext): void {
  describe("change feed", () => {
    let changes: ChangeRecorder;
    beforeEach(() => {
      changes = new ChangeRecorder(ctx.store);
    });
    afterEach(() => {
      changes.close();
    });

    it("a stored request is announced with its session and id", async () => {
      await ctx.store.requests.insert(newRequest("r1", K));
      expect(await changes.waitFor(isRequest(K, "r1"))).toEqual({ kind: "request", sessionKey: K, requestId: "r1" });
    });

    it("a duplicate or forbidden request is not announced", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", "http:s1", { externalId: "m1", claimSession: { mainAgentSessionId: "as-1" } }));
      await changes.waitFor(isRequest("http:s1", "r1"));
      const from = changes.seen.length;
      await store.requests.insert(newRequest("r2", "http:s1", { externalId: "m1" }));
      await store.requests.insert(newRequest("r3", "http:s1", { externalId: "m3", userId: BOB, claimSession: { mainAgentSessionId: "as-1" } }));
      expect(await changes.settle(from)).toEqual([]);
    });

    it("a step that finishes requests announces each as done; a request that only starts is not", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await store.requests.insert(newRequest("r2", K));
      const from = changes.seen.length;
      await commitStep(store, { sessionKey: K, request: { id: "r2", status: "running" } });
      expect((await changes.settle(from)).filter((c) => c.kind === "done")).toEqual([]);
      await commitStep(store, {
        sessionKey: K,
        request: { id: "r2", status: "done" },
        requestsClosed: [{ id: "r1", status: "failed", error: "cancelled", errorCode: "cancelled" }],
      });
      expect(await changes.waitFor(isDone(K, "r2"))).toEqual({ kind: "done", sessionKey: K, requestId: "r2" });
      expect(await changes.waitFor(isDone(K, "r1"))).toEqual({ kind: "done", sessionKey: K, requestId: "r1" });
    });

    it("a step that queues replies announces them with their request ids", async () => {
      await commitStep(ctx.store, {
        sessionKey: K,
        outbound: [outbound("o1", { requestId: "r1" }), outbound("o2", { requestId: null }), outbound("o3", { requestId: "r1" })],
      });
      const change = await changes.waitFor(isOutbound(K));
      expect(change.kind === "outbound" && new Set(change.requestIds)).toEqual(new Set(["r1", null]));
    });

    it("a step that fails announces nothing", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      const lease = (await store.leases.acquire(K, "replica-a", TTL))!;
      const writer = store.steps.writer(lease);
      const from = changes.seen.length;
      const stale = store.steps.writer({ ...lease, token: lease.token - 1 });
      await expect(stale.commit({ request: { id: "r1", status: "done" }, outbound: [outbound("o1")] })).rejects.toThrow();
      await writer.commit({ outbound: [outbound("o2")] });
      await expect(writer.commit({ request: { id: "r1", status: "done" }, outbound: [outbound("o2")] })).rejects.toThrow();
      const seen = await changes.settle(from);
      expect(seen.filter((c) => c.kind === "done")).toEqual([]);
      expect(seen.filter((c) => c.kind === "outbound")).toHaveLength(1);
    });

    it("the resume request of a winning approval decision is announced; a losing decision announces nothing", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1")] });
      const resume = (id: string) => newRequest(id, K, { externalId: `approval:a1:${id}`, kind: "approval" });
      expect(await store.approvals.decideAndResume("a1", "approved", ALICE, resume("r-win"))).toBe(true);
      await changes.waitFor(isRequest(K, "r-win"));
      const from = changes.seen.length;
      expect(await store.approvals.decideAndResume("a1", "denied", BOB, resume("r-lose"))).toBe(false);
      expect(await changes.settle(from)).toEqual([]);
    });

    it("announce reaches every watcher with the change as sent", async () => {
      const other = new ChangeRecorder(ctx.store);
      const stack: StoreChange = { kind: "stack", sessionKey: K, event: { type: "push", agent: "skill:research", depth: 1 } };
      await ctx.store.feed.announce(stack);
      expect(await changes.waitFor((c) => c.kind === "stack")).toEqual(stack);
      expect(await other.waitFor((c) => c.kind === "stack")).toEqual(stack);
      other.close();
    });

    it("an unsubscribed watcher hears nothing more; a watcher that throws does not stop the others", async () => {
      const { store } = ctx;
      const late: StoreChange[] = [];
      const stop = store.feed.watch((c) => late.push(c));
      const unsubscribeThrowing = store.feed.watch(() => {
        throw new Error("watcher bug");
      });
      stop();
      await store.requests.insert(newRequest("r1", K));
      await changes.waitFor(isRequest(K, "r1"));
      await changes.settle();
      expect(late).toEqual([]);
      unsubscribeThrowing();
    });

    it("ping resolves while the database answers", async () => {
      await expect(ctx.store.ping()).resolves.toBeUndefined();
    });
  });
}
