// Contract: approvals (bound to the exact call, decided by compare-and-set, expiring) and quarantine of rows
// the store cannot read back.
import { describe, expect, it } from "vitest";
import { ALICE, BOB, newApproval, newRequest, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const OTHER = "telegram:200";
/** Where the fixtures' approvals are asked (newApproval has no task). */
const AT = { sessionKey: K, taskId: null };

export function approvalContract(ctx: ContractContext): void {
  describe("approvals", () => {
    it("a step creates a pending approval stamped with its session, request time and expiry", async () => {
      const { store, clock } = ctx;
      const input = { method: "POST", url: "https://example.test/x", headers: { a: "1" } };
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { taskId: "t1", input, timeoutMs: 30_000 })] });
      expect(await store.approvals.get("a1")).toEqual({
        id: "a1",
        sessionKey: K,
        taskId: "t1",
        requestId: null,
        frameId: "f-main",
        toolUseId: "toolu_a1",
        toolName: "http_request",
        input,
        agent: "main",
        ownerId: ALICE,
        status: "pending",
        requestedAt: clock.t,
        expiresAt: clock.t + 30_000,
        decidedBy: null,
        decidedAt: null,
      });
      expect(await store.approvals.get("a-none")).toBeNull();
    });

    it("pendingApprovals lists the session's pending approvals in the order they were asked", async () => {
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a2")] });
      clock.advance(10);
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1"), newApproval("a3")] });
      await commitStep(store, { sessionKey: OTHER, approvalsCreated: [newApproval("b1")] });
      await store.approvals.decide("a3", "denied", ALICE);
      expect((await store.approvals.pending(K)).map((a) => a.id)).toEqual(["a2", "a1"]);
    });

    it("approvalFor finds the approval of the same call whatever the key order of its input", async () => {
      const { store } = ctx;
      const input = { url: "https://example.test/x", body: { to: "bob", cc: ["a", "b"] }, method: "POST" };
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { toolUseId: "toolu_1", input })] });
      const reordered = { method: "POST", body: { cc: ["a", "b"], to: "bob" }, url: "https://example.test/x" };
      expect((await store.approvals.forCall({ id: "toolu_1", name: "http_request", input: reordered }, AT))?.id).toBe("a1");
    });

    it("approvalFor does not match another input, another tool or another tool_use id", async () => {
      const { store } = ctx;
      const input = { url: "https://example.test/x", body: { cc: ["a", "b"] } };
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { toolUseId: "toolu_1", input })] });
      const call = { id: "toolu_1", name: "http_request", input };
      expect((await store.approvals.forCall(call, AT))?.id).toBe("a1");
      expect(await store.approvals.forCall({ ...call, input: { ...input, url: "https://evil.test/" } }, AT)).toBeNull();
      expect(await store.approvals.forCall({ ...call, input: { url: input.url, body: { cc: ["b", "a"] } } }, AT)).toBeNull();
      expect(await store.approvals.forCall({ ...call, name: "send_email" }, AT)).toBeNull();
      expect(await store.approvals.forCall({ ...call, id: "toolu_2" }, AT)).toBeNull();
    });

    it("the same tool_use id with another input is another approval", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { toolUseId: "toolu_1", input: { n: 1 } })] });
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a2", { toolUseId: "toolu_1", input: { n: 2 } })] });
      await store.approvals.decide("a1", "approved", ALICE);
      expect((await store.approvals.forCall({ id: "toolu_1", name: "http_request", input: { n: 1 } }, AT))?.status).toBe("approved");
      expect(await store.approvals.forCall({ id: "toolu_1", name: "http_request", input: { n: 2 } }, AT)).toMatchObject({ id: "a2", status: "pending" });
    });

    it("names the request whose turn it paused", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { taskId: "t1", requestId: "r1" })] });
      expect(await store.approvals.get("a1")).toMatchObject({ requestId: "r1", taskId: "t1" });
      expect((await store.approvals.pending(K))[0]?.requestId).toBe("r1");
      expect((await store.approvals.due(Number.MAX_SAFE_INTEGER))[0]?.requestId).toBe("r1");
    });

    it("belongs to its session and task: the same call elsewhere is not answered by it and is asked again", async () => {
      const { store } = ctx;
      const call = { id: "toolu_1", name: "transfer", input: { amount: 500, to: "mallory" } };
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { taskId: "t1", toolUseId: call.id, toolName: call.name, input: call.input })] });
      await store.approvals.decide("a1", "approved", ALICE);
      expect((await store.approvals.forCall(call, { sessionKey: K, taskId: "t1" }))?.status).toBe("approved");
      // Another user's session, and a later task of the same session: the identical call finds nothing.
      expect(await store.approvals.forCall(call, { sessionKey: OTHER, taskId: "t1" })).toBeNull();
      expect(await store.approvals.forCall(call, { sessionKey: K, taskId: "t2" })).toBeNull();
      expect(await store.approvals.forCall(call, { sessionKey: K, taskId: null })).toBeNull();
      // …so each is asked for anew, and stored beside the first instead of being dropped as its duplicate.
      await commitStep(store, {
        sessionKey: OTHER,
        approvalsCreated: [newApproval("b1", { taskId: "t1", toolUseId: call.id, toolName: call.name, input: call.input, ownerId: BOB })],
      });
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a2", { taskId: "t2", toolUseId: call.id, toolName: call.name, input: call.input })] });
      expect(await store.approvals.forCall(call, { sessionKey: OTHER, taskId: "t1" })).toMatchObject({ id: "b1", status: "pending", ownerId: BOB });
      expect(await store.approvals.forCall(call, { sessionKey: K, taskId: "t2" })).toMatchObject({ id: "a2", status: "pending" });
      expect(await store.approvals.forCall(call, { sessionKey: K, taskId: "t1" })).toMatchObject({ id: "a1", status: "approved" });
    });

    it("asking again for the same call keeps the first approval", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { toolUseId: "toolu_1", input: { a: 1, b: 2 } })] });
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a2", { toolUseId: "toolu_1", input: { b: 2, a: 1 } })] });
      expect((await store.approvals.forCall({ id: "toolu_1", name: "http_request", input: { a: 1, b: 2 } }, AT))?.id).toBe("a1");
      expect((await store.approvals.pending(K)).map((a) => a.id)).toEqual(["a1"]);
    });
  });

  describe("approval decisions (compare-and-set)", () => {
    it("of two decisions only the first wins; the record shows who decided and when", async () => {
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1")] });
      const decidedAt = clock.advance(2_000);
      expect(await store.approvals.decide("a1", "approved", ALICE)).toBe(true);
      clock.advance(1_000);
      expect(await store.approvals.decide("a1", "denied", BOB)).toBe(false);
      expect(await store.approvals.get("a1")).toMatchObject({ status: "approved", decidedBy: ALICE, decidedAt });
      expect(await store.approvals.pending(K)).toEqual([]);
    });

    it("deciding an approval that does not exist returns false", async () => {
      expect(await ctx.store.approvals.decide("a-none", "approved", ALICE)).toBe(false);
    });

    it("decideApprovalAndResume stores the resume request only when it wins", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { taskId: "t1" })], task: { id: "t1", status: "waiting_approval" } });
      const resume = (id: string) => newRequest(id, K, { externalId: `approval:a1:${id}`, kind: "approval", text: "approved" });
      expect(await store.approvals.decideAndResume("a1", "approved", ALICE, resume("r-resume-1"))).toBe(true);
      expect(await store.approvals.decideAndResume("a1", "denied", BOB, resume("r-resume-2"))).toBe(false);
      expect(await store.requests.get("r-resume-1")).toMatchObject({ kind: "approval", status: "pending" });
      expect(await store.requests.get("r-resume-2")).toBeNull();
      expect((await store.approvals.get("a1"))?.status).toBe("approved");
    });

    it("decideApprovalAndResume loses to an earlier decideApproval and stores nothing", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1")] });
      await store.approvals.decide("a1", "expired", "timeout");
      expect(await store.approvals.decideAndResume("a1", "approved", ALICE, newRequest("r-resume", K, { kind: "approval" }))).toBe(false);
      expect(await store.requests.get("r-resume")).toBeNull();
      expect(await store.approvals.get("a1")).toMatchObject({ status: "expired", decidedBy: "timeout" });
    });

    it("dueApprovals lists pending approvals of every session whose expiry is at or before now, soonest first", async () => {
      const { store, clock } = ctx;
      const t = clock.t;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a-late", { timeoutMs: 5_000 }), newApproval("a-soon", { timeoutMs: 1_000 })] });
      await commitStep(store, { sessionKey: OTHER, approvalsCreated: [newApproval("b-mid", { timeoutMs: 3_000 }), newApproval("b-decided", { timeoutMs: 1 })] });
      await store.approvals.decide("b-decided", "denied", BOB);
      expect(await store.approvals.due(t + 999)).toEqual([]);
      expect((await store.approvals.due(t + 1_000)).map((a) => a.id)).toEqual(["a-soon"]);
      expect((await store.approvals.due(t + 10_000)).map((a) => a.id)).toEqual(["a-soon", "b-mid", "a-late"]);
      await store.approvals.decide("a-soon", "expired", "timeout");
      expect((await store.approvals.due(t + 10_000)).map((a) => a.id)).toEqual(["b-mid", "a-late"]);
    });
  });

  describe("quarantine of unreadable rows", () => {
    it("an unreadable approval is set aside; the session's other approvals and other sessions carry on", async (test) => {
      const plant = ctx.backend.plantCorruptApproval;
      if (!plant) return test.skip();
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1"), newApproval("a2")] });
      await commitStep(store, { sessionKey: OTHER, approvalsCreated: [newApproval("b1")] });
      await plant(store, "a1");
      expect((await store.approvals.pending(K)).map((a) => a.id)).toEqual(["a2"]);
      expect(await store.approvals.get("a1")).toBeNull();
      expect((await store.approvals.due(Number.MAX_SAFE_INTEGER)).map((a) => a.id).sort()).toEqual(["a2", "b1"]);
      expect(await store.approvals.decide("a1", "approved", ALICE)).toBe(false);
      expect(await store.approvals.decide("a2", "approved", ALICE)).toBe(true);
      expect((await store.approvals.pending(OTHER)).map((a) => a.id)).toEqual(["b1"]);
    });

    it("an unreadable approval is listed in quarantined once, however often it is read", async (test) => {
      const plant = ctx.backend.plantCorruptApproval;
      if (!plant) return test.skip();
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1")] });
      await plant(store, "a1");
      const at = clock.advance(100);
      await store.approvals.get("a1");
      await store.approvals.pending(K);
      await store.approvals.due(Number.MAX_SAFE_INTEGER);
      const quarantined = await store.operations.quarantined();
      expect(quarantined.map((q) => [q.kind, q.rowId, q.sessionKey, q.createdAt])).toEqual([["approval", "a1", K, at]]);
      expect(quarantined[0]?.reason).not.toBe("");
    });

    it("a quarantined approval frees its call: the same call can be asked for again", async (test) => {
      const plant = ctx.backend.plantCorruptApproval;
      if (!plant) return test.skip();
      const { store } = ctx;
      const call = { id: "toolu_1", name: "http_request", input: { n: 1 } };
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1", { toolUseId: call.id, input: call.input })] });
      await plant(store, "a1");
      expect(await store.approvals.forCall(call, AT)).toBeNull();
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a2", { toolUseId: call.id, input: call.input })] });
      expect(await store.approvals.forCall(call, AT)).toMatchObject({ id: "a2", status: "pending" });
    });

    it("a task whose structured output is unreadable still reads, without it, and is listed", async (test) => {
      const plant = ctx.backend.plantCorruptTaskOutput;
      if (!plant) return test.skip();
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await startTask(store, OTHER, { task: "t2", request: "r2" });
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "waiting_user", result: "so far", structuredOutput: { total: 3 } } });
      await commitStep(store, { sessionKey: OTHER, task: { id: "t2", status: "waiting_user", structuredOutput: { total: 4 } } });
      await plant(store, "t1");
      expect(await store.tasks.get("t1")).toMatchObject({ id: "t1", status: "waiting_user", result: "so far", structuredOutput: null });
      expect((await store.tasks.active(K))?.id).toBe("t1");
      expect((await store.tasks.get("t2"))?.structuredOutput).toEqual({ total: 4 });
      expect((await store.operations.quarantined()).map((q) => [q.kind, q.rowId, q.sessionKey])).toEqual([["task", "t1", K]]);
    });

    it("quarantined lists the newest first", async (test) => {
      const { plantCorruptApproval, plantCorruptTaskOutput } = ctx.backend;
      if (!plantCorruptApproval || !plantCorruptTaskOutput) return test.skip();
      const { store, clock } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "running", structuredOutput: { x: 1 } }, approvalsCreated: [newApproval("a1")] });
      await plantCorruptApproval(store, "a1");
      await plantCorruptTaskOutput(store, "t1");
      clock.advance(10);
      await store.approvals.get("a1");
      clock.advance(10);
      await store.tasks.get("t1");
      expect((await store.operations.quarantined()).map((q) => q.kind)).toEqual(["task", "approval"]);
    });
  });
}
