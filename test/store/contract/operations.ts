// Contract: the operator's queries (src/store/operations.ts): session summaries, pending approvals across
// sessions, work that has not moved, a session's recent errors, and the gauges' counts.
import { describe, expect, it } from "vitest";
import type { SessionSummary } from "../../../src/store/store.js";
import { ALICE, BOB, frame, freshAgentSessionId, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const OTHER = "slack:T1:C2";
const THIRD = "http:s-3";

export function operationsContract(ctx: ContractContext): void {
  describe("session summaries", () => {
    it("an idle session: no stack, owner from its newest task, activity from its requests, cost and tokens from the session", async () => {
      const { store, clock } = ctx;
      await startTask(store, K, { task: "t1", request: "r1", owner: ALICE, frames: [frame("f-main")] });
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "completed" }, request: { id: "r1", status: "done" }, framesPopped: ["f-main"] });
      clock.advance(100);
      await startTask(store, K, { task: "t2", request: "r2", owner: BOB, frames: [frame("f-main2")] });
      await commitStep(store, {
        sessionKey: K,
        usage: { requestId: "r2", inputTokens: 100, outputTokens: 20, cacheReadTokens: 3, cacheWriteTokens: 4, costNanoUsd: 1_250_000 },
      });
      const done = clock.advance(50);
      await commitStep(store, { sessionKey: K, task: { id: "t2", status: "completed" }, request: { id: "r2", status: "done" }, framesPopped: ["f-main2"] });
      clock.advance(1_000);
      expect(await store.operations.sessionSummary(K)).toEqual<SessionSummary>({
        key: K,
        provider: "telegram",
        ownerId: BOB,
        stack: [],
        status: "idle",
        taskId: null,
        lastActivity: done,
        costUsd: 0.00125,
        tokens: 127,
        pendingApprovals: 0,
      });
    });

    it("a session with no requests and no tasks: created at is its activity, nobody owns it", async () => {
      const { store, clock } = ctx;
      const created = clock.t;
      await store.sessions.open(OTHER, freshAgentSessionId);
      clock.advance(10);
      expect(await store.operations.sessionSummary(OTHER)).toEqual<SessionSummary>({
        key: OTHER,
        provider: "slack",
        ownerId: null,
        stack: [],
        status: "idle",
        taskId: null,
        lastActivity: created,
        costUsd: 0,
        tokens: 0,
        pendingApprovals: 0,
      });
      expect(await store.operations.sessionSummary("telegram:none")).toBeNull();
    });

    it("a private session's owner wins over the owner of its newest task", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", THIRD, { userId: BOB, claimSession: { mainAgentSessionId: "as-http" } }));
      await commitStep(store, { sessionKey: THIRD, taskCreated: { id: "t1", ownerId: ALICE, requestId: "r1" } });
      expect(await store.operations.sessionSummary(THIRD)).toMatchObject({ provider: "http", ownerId: BOB });
    });

    it("a child waiting for the user: the stack bottom first, as pushed, and the active task", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1", frames: [frame("f-main")] });
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f-skill", { agentName: "skill:interview", agentType: "skill" })] });
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f-agent", { agentName: "agent:mailer", agentType: "agent" })] });
      await commitStep(store, { sessionKey: K, framesPopped: ["f-agent"] });
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f-agent2", { agentName: "agent:clerk", agentType: "agent" })] });
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "waiting_user" }, request: { id: "r1", status: "done" } });
      expect(await store.operations.sessionSummary(K)).toMatchObject({
        stack: ["main", "skill:interview", "agent:clerk"],
        status: "waiting_user",
        taskId: "t1",
        ownerId: ALICE,
      });
    });

    it("a task waiting for approval: its status and the session's pending approvals", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1", frames: [frame("f-main")] });
      await commitStep(store, {
        sessionKey: K,
        task: { id: "t1", status: "waiting_approval" },
        approvalsCreated: [newApproval("a1", { taskId: "t1" }), newApproval("a2", { taskId: "t1" }), newApproval("a3", { taskId: "t1" })],
      });
      await store.approvals.decide("a3", "denied", ALICE);
      await commitStep(store, { sessionKey: OTHER, approvalsCreated: [newApproval("b1")] });
      expect(await store.operations.sessionSummary(K)).toMatchObject({ stack: ["main"], status: "waiting_approval", taskId: "t1", pendingApprovals: 2 });
    });

    it("recentSessions lists the most recently active first, at most `limit`", async () => {
      const { store, clock } = ctx;
      await store.sessions.open(K, freshAgentSessionId);
      await store.requests.insert(newRequest("r1", K)); // K created and active at t0
      clock.advance(10);
      await store.sessions.open(OTHER, freshAgentSessionId); // t0 + 10, no requests
      clock.advance(10);
      await store.sessions.open(THIRD, freshAgentSessionId); // t0 + 20, no requests
      clock.advance(10);
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "running" } }); // K active at t0 + 30
      expect((await store.operations.recentSessions(10)).map((s) => s.key)).toEqual([K, THIRD, OTHER]);
      expect((await store.operations.recentSessions(2)).map((s) => s.key)).toEqual([K, THIRD]);
      expect(await store.operations.recentSessions(0)).toEqual([]);
      const [first] = await store.operations.recentSessions(1);
      expect(first).toEqual(await store.operations.sessionSummary(K));
    });

    it("a frame that cannot be read shows as '?' and does not hide the session or the others", async (test) => {
      const { plantCorruptFrame, plantUnparsableFrame } = ctx.backend;
      if (!plantCorruptFrame || !plantUnparsableFrame) return test.skip();
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1", frames: [frame("f-main"), frame("f-skill", { agentName: "skill:x" }), frame("f-3")] });
      await startTask(store, OTHER, { task: "t2", request: "r2", frames: [frame("f-other")] });
      await plantUnparsableFrame(store, "f-skill");
      await plantCorruptFrame(store, "f-3");
      expect((await store.operations.sessionSummary(K))?.stack).toEqual(["main", "?", "?"]);
      expect((await store.operations.recentSessions(10)).map((s) => [s.key, s.stack])).toEqual([
        [OTHER, ["main"]],
        [K, ["main", "?", "?"]],
      ]);
    });
  });

  describe("pending approvals of every session", () => {
    it("lists them oldest first, across sessions, without decided ones", async () => {
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a2")] });
      clock.advance(10);
      await commitStep(store, { sessionKey: OTHER, approvalsCreated: [newApproval("b1")] });
      clock.advance(10);
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1"), newApproval("a3")] });
      await store.approvals.decide("a3", "approved", ALICE);
      expect((await store.operations.allPendingApprovals()).map((a) => [a.id, a.sessionKey])).toEqual([
        ["a2", K],
        ["b1", OTHER],
        ["a1", K],
      ]);
    });

    it("an unreadable approval is quarantined and skipped; the others are still listed", async (test) => {
      const plant = ctx.backend.plantCorruptApproval;
      if (!plant) return test.skip();
      const { store, clock } = ctx;
      await store.sessions.open(K, freshAgentSessionId);
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a1")] });
      clock.advance(10);
      await commitStep(store, { sessionKey: OTHER, approvalsCreated: [newApproval("b1")] });
      clock.advance(10);
      await commitStep(store, { sessionKey: K, approvalsCreated: [newApproval("a2")] });
      await plant(store, "a1");
      expect((await store.operations.allPendingApprovals()).map((a) => a.id)).toEqual(["b1", "a2"]);
      expect((await store.operations.stuckWork(clock.t + 1, 10)).approvals.map((a) => a.id)).toEqual(["b1", "a2"]);
      expect((await store.operations.quarantined()).map((q) => [q.kind, q.rowId])).toEqual([["approval", "a1"]]);
      expect((await store.operations.sessionSummary(K))?.pendingApprovals).toBe(1);
      expect((await store.operations.operationalCounts()).pendingApprovals).toBe(2);
    });
  });

  describe("stuck work", () => {
    it("picks exactly the old pending or running requests, undelivered replies and pending approvals, oldest first", async () => {
      const { store, clock } = ctx;
      // Old, and still waiting.
      await store.requests.insert(newRequest("r-old-pending", K));
      await commitStep(store, { sessionKey: K, outbound: [outbound("o-old")], approvalsCreated: [newApproval("a-old")] });
      clock.advance(10);
      await startTask(store, OTHER, { task: "t1", request: "r-old-running" });
      await commitStep(store, { sessionKey: OTHER, outbound: [outbound("o-old-2")], approvalsCreated: [newApproval("a-old-2")] });
      // Old, but finished.
      await store.requests.insert(newRequest("r-done", K));
      await store.requests.insert(newRequest("r-failed", K));
      await commitStep(store, {
        sessionKey: K,
        request: { id: "r-done", status: "done" },
        requestsClosed: [{ id: "r-failed", status: "failed", error: "boom", errorCode: "internal" }],
        outbound: [outbound("o-sent"), outbound("o-refused")],
        approvalsCreated: [newApproval("a-decided")],
      });
      await store.outbox.markDelivered("o-sent");
      await store.outbox.markUndeliverable("o-refused", "bot was blocked by the user");
      await store.approvals.decide("a-decided", "approved", ALICE);
      const threshold = clock.advance(1_000);
      // Fresh.
      await store.requests.insert(newRequest("r-fresh", K));
      await commitStep(store, { sessionKey: K, outbound: [outbound("o-fresh")], approvalsCreated: [newApproval("a-fresh")] });
      clock.advance(1_000);

      const stuck = await store.operations.stuckWork(threshold, 10);
      expect(stuck.requests.map((r) => r.id)).toEqual(["r-old-pending", "r-old-running"]);
      expect(stuck.outbound.map((o) => o.id)).toEqual(["o-old", "o-old-2"]);
      expect(stuck.approvals.map((a) => a.id)).toEqual(["a-old", "a-old-2"]);
      expect(stuck.requests[0]).toEqual(await store.requests.get("r-old-pending"));

      const oldest = await store.operations.stuckWork(threshold, 1);
      expect([oldest.requests, oldest.outbound, oldest.approvals].map((list) => list.map((x) => x.id))).toEqual([["r-old-pending"], ["o-old"], ["a-old"]]);
    });

    it("a request that moved since the threshold is not stuck, however old it is", async () => {
      const { store, clock } = ctx;
      await store.requests.insert(newRequest("r1", K));
      const threshold = clock.advance(1_000);
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "running" } });
      expect((await store.operations.stuckWork(threshold, 10)).requests).toEqual([]);
      expect((await store.operations.stuckWork(threshold + 1, 10)).requests.map((r) => r.id)).toEqual(["r1"]);
    });
  });

  describe("recent errors", () => {
    it("merges failed requests, failed tasks and undeliverable replies of the session, newest first, at most `limit`", async () => {
      const { store, clock } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      const requestFailed = clock.advance(10);
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "failed", error: "model unavailable", errorCode: "engine" } });
      const replyRefused = clock.advance(10);
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2")] });
      await store.outbox.markUndeliverable("o1", "chat not found");
      await store.outbox.markDelivered("o2");
      const taskFailed = clock.advance(10);
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "failed", error: "max iterations" } });
      clock.advance(10);
      await store.requests.insert(newRequest("r2", K));
      await commitStep(store, { sessionKey: K, request: { id: "r2", status: "done" } });
      await startTask(store, OTHER, { task: "t2", request: "r3" });
      await commitStep(store, {
        sessionKey: OTHER,
        task: { id: "t2", status: "failed", error: "elsewhere" },
        request: { id: "r3", status: "failed", error: "elsewhere", errorCode: "internal" },
      });

      expect(await store.operations.recentErrors(K, 10)).toEqual([
        { at: taskFailed, source: "task", id: "t1", error: "max iterations" },
        { at: replyRefused, source: "delivery", id: "o1", error: "chat not found" },
        { at: requestFailed, source: "request", id: "r1", error: "model unavailable" },
      ]);
      expect((await store.operations.recentErrors(K, 2)).map((e) => e.id)).toEqual(["t1", "o1"]);
      expect(await store.operations.recentErrors("telegram:quiet", 10)).toEqual([]);
    });
  });

  describe("operational counts", () => {
    it("counts active stacks, queued requests, pending approvals, undeliverable replies and the outbox backlog", async () => {
      const { store } = ctx;
      expect(await store.operations.operationalCounts()).toEqual({ activeStacks: 0, queuedMessages: 0, pendingApprovals: 0, undeliverable: 0, outboxBacklog: 0 });
      // K: two frames, a running request, one queued behind it.
      await startTask(store, K, { task: "t1", request: "r1", frames: [frame("f-main"), frame("f-skill")] });
      await store.requests.insert(newRequest("r2", K));
      // OTHER: one frame, two pending approvals (a third decided), replies: one sent, one refused, two waiting.
      await startTask(store, OTHER, { task: "t2", request: "r3", frames: [frame("f-other")] });
      await commitStep(store, {
        sessionKey: OTHER,
        approvalsCreated: [newApproval("a1"), newApproval("a2"), newApproval("a3")],
        outbound: [outbound("o1"), outbound("o2"), outbound("o3"), outbound("o4")],
      });
      await store.approvals.decide("a3", "denied", ALICE);
      await store.outbox.markDelivered("o1");
      await store.outbox.markUndeliverable("o2", "bot was kicked");
      // THIRD: its task ended and its frame popped; two queued requests, one of them done since.
      await startTask(store, THIRD, { task: "t3", request: "r4", frames: [frame("f-third")] });
      await commitStep(store, { sessionKey: THIRD, task: { id: "t3", status: "completed" }, request: { id: "r4", status: "done" }, framesPopped: ["f-third"] });
      await store.requests.insert(newRequest("r5", THIRD));
      await store.requests.insert(newRequest("r6", THIRD));
      await commitStep(store, { sessionKey: THIRD, request: { id: "r6", status: "done" } });

      expect(await store.operations.operationalCounts()).toEqual({ activeStacks: 2, queuedMessages: 2, pendingApprovals: 2, undeliverable: 1, outboxBacklog: 2 });
    });
  });
}
