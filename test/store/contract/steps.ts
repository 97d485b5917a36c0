// Contract: a StepCommit is one transaction; the stack, the context log and token usage it writes.
import { describe, expect, it } from "vitest";
import { CorruptStateError, type StepCommit } from "../../../src/store/store.js";
import { everythingOf, frame, freshAgentSessionId, logEntry, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const OTHER = "telegram:200";

export function stepContract(ctx: ContractContext): void {
  describe("commit: one transaction per step", () => {
    const snapshot = () => everythingOf(ctx.store, K);

    // Everything a step can write, then a write that must fail: the whole step must be rolled back.
    const failingStep = (failure: Partial<StepCommit>): StepCommit & { sessionKey: string } => ({
      sessionKey: K,
      taskCreated: { id: "t2", ownerId: "telegram:alice", requestId: "r1" },
      log: [logEntry("message", { role: "assistant", content: "half" }, { taskId: "t1", requestId: "r1", agentSessionId: "as-f-main" })],
      framesPushed: [frame("f-skill", { agentType: "skill", agentName: "skill:research" })],
      framesUpdated: [frame("f-main", { iteration: 4 })],
      task: { id: "t1", status: "waiting_user", result: "half done" },
      request: { id: "r1", status: "done" },
      requestsClosed: [{ id: "r0", status: "failed", error: "cancelled", errorCode: "cancelled" }],
      usage: { requestId: "r1", inputTokens: 10, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 1, costNanoUsd: 0 },
      outbound: [outbound("o2", { requestId: "r1" })],
      newMainAgentSessionId: "as-after-reset",
      approvalsCreated: [newApproval("a1")],
      ...failure,
    });

    async function givenTurnInFlight() {
      const { store } = ctx;
      await store.sessions.open(K, freshAgentSessionId);
      await store.requests.insert(newRequest("r0", K, { externalId: "m0" }));
      await commitStep(store, { sessionKey: K, request: { id: "r0", status: "running" } });
      await startTask(store, K, { task: "t1", request: "r1", frames: [frame("f-main")] });
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1", { requestId: "r1" })] });
    }

    it("a step whose outbound id is already taken leaves nothing of itself", async () => {
      await givenTurnInFlight();
      const before = await snapshot();
      ctx.clock.advance(1_000);
      await expect(async () => {
        await commitStep(ctx.store, failingStep({ outbound: [outbound("o2", { requestId: "r1" }), outbound("o1")] }));
      }).rejects.toThrow();
      expect(await snapshot()).toEqual(before);
    });

    it("a step pushing a frame id that is already stacked leaves nothing of itself", async () => {
      await givenTurnInFlight();
      const before = await snapshot();
      await expect(async () => {
        await commitStep(ctx.store, failingStep({ framesPushed: [frame("f-skill"), frame("f-main")] }));
      }).rejects.toThrow();
      expect(await snapshot()).toEqual(before);
    });

    it("the store takes the next step after a failed one", async () => {
      await givenTurnInFlight();
      await expect(async () => {
        await commitStep(ctx.store, { sessionKey: K, outbound: [outbound("o1")] });
      }).rejects.toThrow();
      await commitStep(ctx.store, { sessionKey: K, task: { id: "t1", status: "completed", result: "ok" }, outbound: [outbound("o3")] });
      expect((await ctx.store.tasks.get("t1"))?.status).toBe("completed");
      expect((await ctx.store.outbox.pending(K)).map((o) => o.id)).toEqual(["o1", "o3"]);
    });
  });

  describe("frames", () => {
    it("come back bottom first, in push order, across steps", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f1")] });
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f2"), frame("f3")] });
      expect((await store.steps.frames(K)).map((f) => f.frameId)).toEqual(["f1", "f2", "f3"]);
    });

    it("read back every field as written", async () => {
      const full = frame("f1", {
        agentName: "agent:mailer",
        agentType: "agent",
        definitionName: "mailer",
        environment: { TZ: "Europe/Lisbon" },
        iteration: 2,
        effectiveTools: ["complete", "report_back"],
        isSkillAgent: true,
        parentToolUseId: "toolu_parent",
        mode: "batch",
        callChain: ["main", "mailer"],
        runningToolUseId: "toolu_run",
        outputSchema: { type: "object", required: ["sent"] },
        reportAttempts: 1,
        contextTokens: 1234,
        approvalTools: ["*"],
        memories: "- Prefers tea\n- Lives in Lisbon",
      });
      await commitStep(ctx.store, { sessionKey: K, framesPushed: [full] });
      expect(await ctx.store.steps.frames(K)).toEqual([full]);
    });

    it("an update replaces the frame's record in place", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f1"), frame("f2"), frame("f3")] });
      await commitStep(store, { sessionKey: K, framesUpdated: [frame("f2", { iteration: 7, runningToolUseId: "toolu_x" })] });
      const frames = await store.steps.frames(K);
      expect(frames.map((f) => [f.frameId, f.iteration, f.runningToolUseId])).toEqual([
        ["f1", 0, null],
        ["f2", 7, "toolu_x"],
        ["f3", 0, null],
      ]);
    });

    it("a pop removes the frame and the next push goes on top", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f1"), frame("f2")] });
      await commitStep(store, { sessionKey: K, framesPopped: ["f2"] });
      expect((await store.steps.frames(K)).map((f) => f.frameId)).toEqual(["f1"]);
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f3")] });
      expect((await store.steps.frames(K)).map((f) => f.frameId)).toEqual(["f1", "f3"]);
    });

    it("a frame pushed and popped in one step nets to nothing; a replaced top keeps the order", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f1"), frame("f2")] });
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f3")], framesPopped: ["f3"] });
      expect((await store.steps.frames(K)).map((f) => f.frameId)).toEqual(["f1", "f2"]);
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f4")], framesPopped: ["f2"] });
      expect((await store.steps.frames(K)).map((f) => f.frameId)).toEqual(["f1", "f4"]);
    });

    it("each session has its own stack", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f1"), frame("f2")] });
      await commitStep(store, { sessionKey: OTHER, framesPushed: [frame("g1")] });
      await commitStep(store, { sessionKey: OTHER, framesPopped: ["g1"], framesPushed: [frame("g2")] });
      expect((await store.steps.frames(K)).map((f) => f.frameId)).toEqual(["f1", "f2"]);
      expect((await store.steps.frames(OTHER)).map((f) => f.frameId)).toEqual(["g2"]);
      expect(await store.steps.frames("telegram:300")).toEqual([]);
    });

    it("framesQuarantined sets every frame of the session aside, and only that session's", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f1"), frame("f2")] });
      await commitStep(store, { sessionKey: OTHER, framesPushed: [frame("g1")] });
      await commitStep(store, { sessionKey: K, framesQuarantined: { reason: "frames unreadable" } });
      expect(await store.steps.frames(K)).toEqual([]);
      expect((await store.steps.frames(OTHER)).map((f) => f.frameId)).toEqual(["g1"]);
      const quarantined = (await store.operations.quarantined()).map((q) => [q.kind, q.rowId, q.sessionKey]);
      expect(quarantined.sort((x, y) => (x.join() < y.join() ? -1 : 1))).toEqual([
        ["frame", "f1", K],
        ["frame", "f2", K],
      ]);
      expect((await store.operations.quarantined())[0]?.reason).toContain("frames unreadable");
    });

    it("an unreadable frame fails its own session with CorruptStateError; framesQuarantined clears it", async (test) => {
      const plant = ctx.backend.plantCorruptFrame;
      if (!plant) return test.skip();
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f1"), frame("f2")] });
      await commitStep(store, { sessionKey: OTHER, framesPushed: [frame("g1")] });
      await plant(store, "f2");
      await expect(async () => {
        await store.steps.frames(K);
      }).rejects.toThrow(CorruptStateError);
      expect((await store.steps.frames(OTHER)).map((f) => f.frameId)).toEqual(["g1"]);
      await commitStep(store, { sessionKey: K, framesQuarantined: { reason: "reset" } });
      await commitStep(store, { sessionKey: K, framesPushed: [frame("f3")] });
      expect((await store.steps.frames(K)).map((f) => f.frameId)).toEqual(["f3"]);
    });
  });

  describe("context log", () => {
    it("sessionLog returns the session's rows in commit order, stamped with key, rising seq and commit time", async () => {
      const { store, clock } = ctx;
      const t0 = clock.t;
      await commitStep(store, { sessionKey: K, log: [logEntry("message", { n: 1 }), logEntry("tool_use", { n: 2 })] });
      await commitStep(store, { sessionKey: OTHER, log: [logEntry("message", { n: 99 })] });
      const t1 = clock.advance(500);
      await commitStep(store, { sessionKey: K, log: [logEntry("approval", { n: 3 }, { taskId: "t1", requestId: "r1", frameId: "f1", agentSessionId: "as-1" })] });
      const log = await store.steps.log(K);
      expect(log.map((e) => [e.sessionKey, e.type, e.payload, e.createdAt])).toEqual([
        [K, "message", { n: 1 }, t0],
        [K, "tool_use", { n: 2 }, t0],
        [K, "approval", { n: 3 }, t1],
      ]);
      expect(log[2]).toMatchObject({ taskId: "t1", requestId: "r1", frameId: "f1", agentSessionId: "as-1" });
      const seqs = log.map((e) => e.seq);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(3);
    });

    it("keeps nested payloads exactly", async () => {
      const payload = {
        role: "user",
        content: [
          { type: "text", text: "héllo \u{1F600}" },
          { type: "tool_result", tool_use_id: "t", is_error: true },
        ],
        n: null,
      };
      await commitStep(ctx.store, { sessionKey: K, log: [logEntry("message", payload)] });
      expect((await ctx.store.steps.log(K))[0]?.payload).toEqual(payload);
    });

    it("keeps text that looks like SQL, array or placeholder syntax exactly, in every kind of row, under any key", async () => {
      const nasty = `it's "quoted" \\ back\\slash; DROP TABLE requests; -- $1 $fence$ {a,b} NULL\n\u00e9\u{1F600}`;
      const key = `http:o'brien$fence$\\`;
      const payload = { role: "assistant", content: [{ type: "text", text: nasty }], list: ["{", "}", ",", "NULL", '"', null] };
      await commitStep(ctx.store, {
        sessionKey: key,
        log: [logEntry("message", payload)],
        outbound: [outbound("o-nasty", { text: nasty })],
        approvalsCreated: [newApproval("a-nasty", { input: { command: nasty } })],
      });
      expect((await ctx.store.steps.log(key))[0]?.payload).toEqual(payload);
      expect((await ctx.store.outbox.pending(key)).map((o) => o.text)).toEqual([nasty]);
      expect((await ctx.store.approvals.get("a-nasty"))?.input).toEqual({ command: nasty });
    });

    it("history holds the message, tool_result and compaction rows of one agent session, in order", async () => {
      const { store } = ctx;
      const a = { agentSessionId: "as-a" };
      await commitStep(store, {
        sessionKey: K,
        log: [
          logEntry("agent_session", { agent_name: "main" }, a),
          logEntry("message", { n: 1 }, a),
          logEntry("tool_use", { n: 2 }, a),
          logEntry("message", { n: 100 }, { agentSessionId: "as-b" }),
        ],
      });
      await commitStep(store, { sessionKey: OTHER, log: [logEntry("message", { n: 200 }, { agentSessionId: "as-c" })] });
      await commitStep(store, {
        sessionKey: K,
        log: [logEntry("tool_result", { n: 3 }, a), logEntry("approval", { n: 4 }, a), logEntry("compaction", { n: 5 }, a), logEntry("message", { n: 6 }, a)],
      });
      const history = await store.steps.history(K, "as-a");
      expect(history.map((e) => [e.type, e.payload])).toEqual([
        ["message", { n: 1 }],
        ["tool_result", { n: 3 }],
        ["compaction", { n: 5 }],
        ["message", { n: 6 }],
      ]);
      expect((await store.steps.history(K, "as-b")).map((e) => e.payload)).toEqual([{ n: 100 }]);
      expect(await store.steps.history(K, "as-none")).toEqual([]);
      // Another session's agent session is not this session's history.
      expect(await store.steps.history(K, "as-c")).toEqual([]);
      expect((await store.steps.history(OTHER, "as-c")).map((e) => e.payload)).toEqual([{ n: 200 }]);
    });

    it("openAgentSessions lists agent sessions started and not completed in this chat", async () => {
      const { store } = ctx;
      await commitStep(store, {
        sessionKey: K,
        log: [
          logEntry("agent_session", { agent_name: "skill:research" }, { agentSessionId: "as-1" }),
          logEntry("agent_session", { agent_name: "agent:mailer" }, { agentSessionId: "as-2" }),
        ],
      });
      await commitStep(store, { sessionKey: OTHER, log: [logEntry("agent_session", { agent_name: "elsewhere" }, { agentSessionId: "as-3" })] });
      await commitStep(store, { sessionKey: K, log: [logEntry("agent_session_complete", { agent_name: "skill:research" }, { agentSessionId: "as-1" })] });
      expect(await store.steps.openAgentSessions(K)).toEqual([{ agentSessionId: "as-2", agentName: "agent:mailer" }]);
    });
  });

  describe("usage", () => {
    const usage = (requestId: string, i: number, o: number, r = 0, w = 0) => ({
      requestId,
      inputTokens: i,
      outputTokens: o,
      cacheReadTokens: r,
      cacheWriteTokens: w,
      costNanoUsd: 0,
    });

    it("sessionUsage sums every step's usage; sinceReset counts all four kinds", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 100, 20, 3, 4) });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 50, 10, 1, 2) });
      expect(await store.sessions.usage(K)).toEqual({
        inputTokens: 150,
        outputTokens: 30,
        cacheReadTokens: 4,
        cacheWriteTokens: 6,
        sinceReset: 190,
        costUsd: 0,
        costSinceResetUsd: 0,
      });
      expect(await store.sessions.usage("telegram:unknown")).toEqual({
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        sinceReset: 0,
        costUsd: 0,
        costSinceResetUsd: 0,
      });
    });

    it("newMainAgentSessionId resets sinceReset, keeps the totals and becomes the session's main agent session", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 100, 20) });
      await commitStep(store, { sessionKey: K, newMainAgentSessionId: "as-fresh" });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 7, 3) });
      expect(await store.sessions.usage(K)).toMatchObject({ inputTokens: 107, outputTokens: 23, sinceReset: 10 });
      expect((await store.sessions.find(K))?.mainAgentSessionId).toBe("as-fresh");
      expect((await store.sessions.open(K, () => "as-not-used")).mainAgentSessionId).toBe("as-fresh");
    });

    it("taskUsage sums the requests of one task and the request keeps its own counts", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await store.requests.insert(newRequest("r2", K));
      await commitStep(store, { sessionKey: K, request: { id: "r2", status: "running", taskId: "t1" }, usage: usage("r2", 5, 6, 7, 8) });
      await commitStep(store, { sessionKey: K, usage: usage("r1", 1, 2, 3, 4) });
      await startTask(store, OTHER, { task: "t2", request: "r3" });
      await commitStep(store, { sessionKey: OTHER, usage: usage("r3", 1000, 1000) });
      expect(await store.tasks.usage("t1")).toEqual({ inputTokens: 6, outputTokens: 8, cacheReadTokens: 10, cacheWriteTokens: 12, costUsd: 0 });
      expect(await store.tasks.usage("t-none")).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 });
      expect(await store.requests.get("r2")).toMatchObject({ inputTokens: 5, outputTokens: 6, cacheReadTokens: 7, cacheWriteTokens: 8, taskId: "t1" });
    });
  });
}
