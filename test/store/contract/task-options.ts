// Contract: a task's expiry and metadata travel with the request that starts it (stored with that request until its
// task exists), and the task reads them back as given; the expired task status and the withdrawn approval status.
import { describe, expect, it } from "vitest";
import { ALICE, newApproval, newRequest, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "http:s1";

export function taskOptionContract(ctx: ContractContext): void {
  describe("task expiry and metadata", () => {
    it("a request keeps the options it was stored with; one without any has none", async () => {
      const { store, clock } = ctx;
      const options = { expiresAt: clock.t + 60_000, metadataJson: '{"ticket":"T-1","tags":["a","b"]}' };
      const inserted = await store.requests.insert(newRequest("r1", K, { taskOptions: options }));
      expect(inserted).toMatchObject({ status: "inserted", request: { taskOptions: options } });
      expect((await store.requests.get("r1"))?.taskOptions).toEqual(options);
      expect((await store.requests.unfinishedOf(K))[0]?.taskOptions).toEqual(options);
      await store.requests.insert(newRequest("r2", K, { taskOptions: { expiresAt: null, metadataJson: '{"only":"metadata"}' } }));
      expect((await store.requests.get("r2"))?.taskOptions).toEqual({ expiresAt: null, metadataJson: '{"only":"metadata"}' });
      await store.requests.insert(newRequest("r3", K));
      expect((await store.requests.get("r3"))?.taskOptions).toBeNull();
    });

    it("a task takes its first request's expiry and metadata; tasks without them have neither", async () => {
      const { store, clock } = ctx;
      const metadata = { ticket: "T-1", nested: { deep: [1, { two: 2 }] }, unicode: "ação ✓" };
      const metadataJson = JSON.stringify(metadata);
      await store.requests.insert(newRequest("r1", K));
      await commitStep(store, { sessionKey: K, taskCreated: { id: "t1", ownerId: ALICE, requestId: "r1", options: { expiresAt: clock.t + 5_000, metadataJson } } });
      expect(await store.tasks.get("t1")).toMatchObject({ id: "t1", status: "running", expiresAt: clock.t + 5_000, metadata });
      await startTask(store, "http:s2", { task: "t2", request: "r2" });
      expect(await store.tasks.get("t2")).toMatchObject({ expiresAt: null, metadata: null });
      // Later steps of the task leave them as they were.
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "waiting_user", result: "so far" } });
      expect((await store.tasks.active(K))?.metadata).toEqual(metadata);
      expect((await store.tasks.ofSession(K))[0]?.expiresAt).toBe(clock.t + 5_000);
    });

    it("a key named __proto__ in the metadata is kept as data, not as the object's prototype", async () => {
      const { store } = ctx;
      const metadataJson = '{"__proto__":{"polluted":true},"constructor":"c"}';
      await store.requests.insert(newRequest("r1", K));
      await commitStep(store, { sessionKey: K, taskCreated: { id: "t1", ownerId: ALICE, requestId: "r1", options: { expiresAt: null, metadataJson } } });
      const metadata = (await store.tasks.get("t1"))!.metadata!;
      expect(Object.keys(metadata)).toEqual(["__proto__", "constructor"]);
      expect(JSON.stringify(metadata)).toBe(metadataJson);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it("an expired task is no longer active; its withdrawn approvals are no longer pending", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, {
        sessionKey: K,
        task: { id: "t1", status: "waiting_approval" },
        approvalsCreated: [newApproval("a1", { taskId: "t1", requestId: "r1" })],
      });
      expect(await store.approvals.decide("a1", "withdrawn", "task-expired")).toBe(true);
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "expired", error: "the task expired" } });
      expect(await store.tasks.active(K)).toBeNull();
      expect(await store.tasks.get("t1")).toMatchObject({ status: "expired", error: "the task expired" });
      expect(await store.approvals.pending(K)).toEqual([]);
      expect(await store.approvals.get("a1")).toMatchObject({ status: "withdrawn", decidedBy: "task-expired" });
      expect(await store.approvals.decide("a1", "approved", ALICE)).toBe(false);
    });

    it("a task whose stored metadata is unreadable still reads, without it, and is listed in quarantined", async (test) => {
      const plant = ctx.backend.plantCorruptTaskMetadata;
      if (!plant) return test.skip();
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K));
      await commitStep(store, { sessionKey: K, taskCreated: { id: "t1", ownerId: ALICE, requestId: "r1", options: { expiresAt: null, metadataJson: '{"a":1}' } } });
      await plant(store, "t1");
      expect(await store.tasks.get("t1")).toMatchObject({ id: "t1", status: "running", metadata: null });
      expect((await store.operations.quarantined()).map((q) => [q.kind, q.rowId])).toEqual([["task", "t1"]]);
    });
  });
}
