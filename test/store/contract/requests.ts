// Contract: sessions, inbound requests (dedupe, session claiming, idempotency keys) and tasks.
import { describe, expect, it } from "vitest";
import { ALICE, BOB, newRequest, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "http:s1";
const OTHER = "http:s2";

export function requestContract(ctx: ContractContext): void {
  describe("sessions", () => {
    it("session creates a session once, with its main agent session id, and findSession finds it", async () => {
      const { store, clock } = ctx;
      expect(await store.sessions.find(K)).toBeNull();
      const created = await store.sessions.open(K, () => "as-first");
      expect(created).toEqual({ key: K, ownerId: null, mainAgentSessionId: "as-first", createdAt: clock.t });
      expect(await store.sessions.find(K)).toEqual(created);
    });

    it("session keeps the existing session's main agent session id and creation time", async () => {
      const { store, clock } = ctx;
      const created = await store.sessions.open(K, () => "as-first");
      clock.advance(5_000);
      expect(await store.sessions.open(K, () => "as-second")).toEqual(created);
      expect(await store.sessions.find(OTHER)).toBeNull();
    });
  });

  describe("insertRequest", () => {
    it("stores a pending request that request and requests read back", async () => {
      const { store, clock } = ctx;
      const result = await store.requests.insert(newRequest("r1", K, { externalId: "m1", text: "hello", kind: "command" }));
      const expected = {
        id: "r1",
        sessionKey: K,
        externalId: "m1",
        kind: "command",
        userId: ALICE,
        text: "hello",
        status: "pending",
        taskId: null,
        error: null,
        errorCode: null,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: 0,
        taskOptions: null,
        createdAt: clock.t,
        updatedAt: clock.t,
      };
      expect(result).toEqual({ status: "inserted", request: expected });
      expect(await store.requests.get("r1")).toEqual(expected);
      expect(await store.requests.get("r-none")).toBeNull();
    });

    it("requests lists a session's requests oldest first", async () => {
      const { store, clock } = ctx;
      await store.requests.insert(newRequest("r2", K));
      clock.advance(10);
      await store.requests.insert(newRequest("r1", K));
      await store.requests.insert(newRequest("r3", OTHER));
      expect((await store.requests.ofSession(K)).map((r) => r.id)).toEqual(["r2", "r1"]);
    });

    it("a second request with the same session and external id is a duplicate of the first", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { externalId: "m1", text: "first" }));
      const again = await store.requests.insert(newRequest("r2", K, { externalId: "m1", text: "second" }));
      expect(again.status).toBe("duplicate");
      expect(again.status === "duplicate" && again.request).toMatchObject({ id: "r1", text: "first" });
      expect(await store.requests.get("r2")).toBeNull();
      expect((await store.requests.ofSession(K)).map((r) => r.id)).toEqual(["r1"]);
    });

    it("the same external id in another session is another request", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { externalId: "m1" }));
      expect((await store.requests.insert(newRequest("r2", OTHER, { externalId: "m1" }))).status).toBe("inserted");
    });

    it("byExternalId finds the request stored for a session's external id, and only that one", async () => {
      const { store } = ctx;
      expect(await store.requests.byExternalId(K, "m1")).toBeNull();
      await store.requests.insert(newRequest("r1", K, { externalId: "m1", text: "first" }));
      expect(await store.requests.byExternalId(K, "m1")).toMatchObject({ id: "r1", sessionKey: K, externalId: "m1", text: "first" });
      expect(await store.requests.byExternalId(OTHER, "m1")).toBeNull();
      expect(await store.requests.byExternalId(K, "m2")).toBeNull();
    });

    it("a second request with the same user and idempotency key is a duplicate, in any session", async () => {
      const { store } = ctx;
      const idempotency = { key: "idem-1", fingerprint: "fp-1" };
      await store.requests.insert(newRequest("r1", K, { externalId: "m1", idempotency }));
      const again = await store.requests.insert(newRequest("r2", OTHER, { externalId: "m2", idempotency: { key: "idem-1", fingerprint: "fp-2" } }));
      expect(again.status === "duplicate" && again.request.id).toBe("r1");
      expect(await store.requests.get("r2")).toBeNull();
      expect(await store.requests.idempotency(ALICE, "idem-1")).toMatchObject({ requestId: "r1", fingerprint: "fp-1" });
    });

    it("another user's idempotency key of the same name is another request", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { externalId: "m1", idempotency: { key: "idem-1", fingerprint: "fp" } }));
      const bobs = await store.requests.insert(newRequest("r2", OTHER, { externalId: "m2", userId: BOB, idempotency: { key: "idem-1", fingerprint: "fp" } }));
      expect(bobs.status).toBe("inserted");
      expect((await store.requests.idempotency(BOB, "idem-1"))?.requestId).toBe("r2");
    });
  });

  describe("idempotency records", () => {
    it("record the first request and, once saved, its response", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { idempotency: { key: "idem-1", fingerprint: "fp-1" } }));
      expect(await store.requests.idempotency(ALICE, "idem-1")).toEqual({
        userId: ALICE,
        key: "idem-1",
        requestId: "r1",
        sessionKey: K,
        fingerprint: "fp-1",
        response: null,
      });
      await store.requests.saveIdempotentResponse(ALICE, "idem-1", '{"status":"done"}');
      expect((await store.requests.idempotency(ALICE, "idem-1"))?.response).toBe('{"status":"done"}');
      expect(await store.requests.idempotency(BOB, "idem-1")).toBeNull();
      expect(await store.requests.idempotency(ALICE, "idem-2")).toBeNull();
    });

    it("are not written for a request without a key", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K));
      await store.requests.saveIdempotentResponse(ALICE, "idem-1", "x");
      expect(await store.requests.idempotency(ALICE, "idem-1")).toBeNull();
    });
  });

  describe("claimSession", () => {
    const claim = { mainAgentSessionId: "as-claimed" };

    it("the first user's request creates the session and makes them its owner", async () => {
      const { store } = ctx;
      expect((await store.requests.insert(newRequest("r1", K, { claimSession: claim }))).status).toBe("inserted");
      expect(await store.sessions.find(K)).toMatchObject({ key: K, ownerId: ALICE, mainAgentSessionId: "as-claimed" });
      expect((await store.requests.insert(newRequest("r2", K, { claimSession: { mainAgentSessionId: "as-other" } }))).status).toBe("inserted");
      expect(await store.sessions.find(K)).toMatchObject({ ownerId: ALICE, mainAgentSessionId: "as-claimed" });
    });

    it("another user is forbidden and nothing of their request is stored", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { claimSession: claim }));
      const before = await store.sessions.find(K);
      const bobs = await store.requests.insert(newRequest("r2", K, { userId: BOB, claimSession: claim, idempotency: { key: "idem-b", fingerprint: "fp" } }));
      expect(bobs).toEqual({ status: "forbidden", ownerId: ALICE });
      expect(await store.requests.get("r2")).toBeNull();
      expect((await store.requests.ofSession(K)).map((r) => r.id)).toEqual(["r1"]);
      expect(await store.requests.idempotency(BOB, "idem-b")).toBeNull();
      expect(await store.sessions.find(K)).toEqual(before);
    });

    it("claims an existing session that has no owner yet", async () => {
      const { store } = ctx;
      await store.sessions.open(K, () => "as-shared");
      await store.requests.insert(newRequest("r1", K, { userId: BOB, claimSession: claim }));
      expect(await store.sessions.find(K)).toMatchObject({ ownerId: BOB, mainAgentSessionId: "as-shared" });
      expect((await store.requests.insert(newRequest("r2", K, { claimSession: claim }))).status).toBe("forbidden");
    });
  });

  describe("request status", () => {
    it("unfinishedRequests lists pending and running requests of every session, oldest first", async () => {
      const { store, clock } = ctx;
      for (const [id, key] of [
        ["r1", K],
        ["r2", OTHER],
        ["r3", K],
        ["r4", OTHER],
        ["r5", K],
      ] as const) {
        await store.requests.insert(newRequest(id, key));
        clock.advance(10);
      }
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "running" } });
      await commitStep(store, { sessionKey: OTHER, request: { id: "r2", status: "done" } });
      await commitStep(store, { sessionKey: K, request: { id: "r3", status: "failed", error: "boom", errorCode: "internal" } });
      expect((await store.requests.unfinished()).map((r) => [r.id, r.status])).toEqual([
        ["r1", "running"],
        ["r4", "pending"],
        ["r5", "pending"],
      ]);
      expect(await store.requests.get("r3")).toMatchObject({ status: "failed", error: "boom" });
    });

    it("unfinishedRequestsOf lists one session's pending and running requests, oldest first", async () => {
      const { store, clock } = ctx;
      for (const [id, key] of [
        ["r1", K],
        ["r2", OTHER],
        ["r3", K],
        ["r4", K],
      ] as const) {
        await store.requests.insert(newRequest(id, key));
        clock.advance(10);
      }
      await commitStep(store, { sessionKey: K, request: { id: "r3", status: "running" } });
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "done" } });
      expect((await store.requests.unfinishedOf(K)).map((r) => [r.id, r.status])).toEqual([
        ["r3", "running"],
        ["r4", "pending"],
      ]);
      expect(await store.requests.unfinishedOf("http:none")).toEqual([]);
    });

    it("runningRequests lists only the session's running requests", async () => {
      const { store } = ctx;
      for (const [id, key] of [
        ["r1", K],
        ["r2", K],
        ["r3", OTHER],
        ["r4", K],
      ] as const)
        await store.requests.insert(newRequest(id, key));
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "running" } });
      await commitStep(store, { sessionKey: OTHER, request: { id: "r3", status: "running" } });
      await commitStep(store, { sessionKey: K, request: { id: "r4", status: "running" } });
      expect((await store.requests.running(K)).map((r) => r.id)).toEqual(["r1", "r4"]);
    });

    it("requestsClosed ends other requests in the same step", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await store.requests.insert(newRequest("r2", K));
      await commitStep(store, {
        sessionKey: K,
        request: { id: "r2", status: "done" },
        requestsClosed: [{ id: "r1", status: "failed", error: "cancelled by /cancel", errorCode: "cancelled" }],
        task: { id: "t1", status: "cancelled" },
      });
      expect(await store.requests.get("r1")).toMatchObject({ status: "failed", error: "cancelled by /cancel", taskId: "t1" });
      expect(await store.requests.unfinished()).toEqual([]);
    });
  });

  describe("a failure's code", () => {
    it("is stored with a failed request and read back by every read; a request not failed has none", async () => {
      const { store } = ctx;
      for (const id of ["r1", "r2", "r3"]) await store.requests.insert(newRequest(id, K));
      expect((await store.requests.get("r1"))?.errorCode).toBeNull();
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "failed", error: "Daily limit reached.", errorCode: "quota" } });
      await commitStep(store, { sessionKey: K, request: { id: "r2", status: "done" } });
      expect(await store.requests.get("r1")).toMatchObject({ status: "failed", error: "Daily limit reached.", errorCode: "quota" });
      expect(await store.requests.byExternalId(K, "ext-r1")).toMatchObject({ errorCode: "quota" });
      expect((await store.requests.ofSession(K)).map((r) => [r.id, r.status, r.errorCode])).toEqual([
        ["r1", "failed", "quota"],
        ["r2", "done", null],
        ["r3", "pending", null],
      ]);
    });

    it("is written for each request a step closes, alongside the step's own request", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await store.requests.insert(newRequest("r2", K));
      await store.requests.insert(newRequest("r3", K));
      await commitStep(store, {
        sessionKey: K,
        request: { id: "r3", status: "failed", error: "the task expired", errorCode: "expired" },
        requestsClosed: [
          { id: "r1", status: "failed", error: "cancelled by the user", errorCode: "cancelled" },
          { id: "r2", status: "done" },
        ],
      });
      expect((await store.requests.ofSession(K)).map((r) => [r.id, r.errorCode])).toEqual([
        ["r1", "cancelled"],
        ["r2", null],
        ["r3", "expired"],
      ]);
    });
  });

  describe("tasks", () => {
    it("taskCreated starts a running task owned by the request's user; tasks lists them oldest first", async () => {
      const { store, clock } = ctx;
      const t0 = clock.t;
      await startTask(store, K, { task: "t2", request: "r1", owner: BOB });
      await commitStep(store, { sessionKey: K, task: { id: "t2", status: "completed", result: "done" } });
      clock.advance(100);
      await startTask(store, K, { task: "t1", request: "r2" });
      expect(await store.tasks.get("t2")).toEqual({
        id: "t2",
        sessionKey: K,
        ownerId: BOB,
        status: "completed",
        requestId: "r1",
        result: "done",
        error: null,
        structuredOutput: null,
        expiresAt: null,
        metadata: null,
        createdAt: t0,
        updatedAt: t0,
      });
      expect((await store.tasks.ofSession(K)).map((t) => t.id)).toEqual(["t2", "t1"]);
      expect(await store.tasks.ofSession(OTHER)).toEqual([]);
      expect(await store.tasks.get("t-none")).toBeNull();
      expect((await store.requests.get("r2"))?.taskId).toBe("t1");
    });

    it("a status change keeps the result and structured output set before, and stamps updatedAt", async () => {
      const { store, clock } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "waiting_user", result: "partial", structuredOutput: { rows: [1, 2] } } });
      const later = clock.advance(1_000);
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "failed", error: "model down" } });
      expect(await store.tasks.get("t1")).toMatchObject({
        status: "failed",
        result: "partial",
        error: "model down",
        structuredOutput: { rows: [1, 2] },
        updatedAt: later,
      });
    });

    it("activeTask is the session's newest task under way, null once it ended", async () => {
      const { store, clock } = ctx;
      await startTask(store, K, { task: "t1", request: "r1" });
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "waiting_approval" } });
      expect((await store.tasks.active(K))?.id).toBe("t1");
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "completed" } });
      expect(await store.tasks.active(K)).toBeNull();
      clock.advance(10);
      await startTask(store, K, { task: "t2", request: "r2" });
      await commitStep(store, { sessionKey: K, task: { id: "t2", status: "waiting_user" } });
      expect((await store.tasks.active(K))?.id).toBe("t2");
      expect(await store.tasks.active(OTHER)).toBeNull();
    });

    it("activeTaskOf matches the key and its sub-keys for that owner only", async () => {
      const { store } = ctx;
      await startTask(store, "slack:T:C:thread:1", { task: "t-thread", request: "r1", owner: ALICE });
      await startTask(store, "slack:T:C2", { task: "t-sibling", request: "r2", owner: BOB });
      expect((await store.tasks.activeOf("slack:T:C", ALICE))?.id).toBe("t-thread");
      expect((await store.tasks.activeOf("slack:T:C:thread:1", ALICE))?.id).toBe("t-thread");
      expect(await store.tasks.activeOf("slack:T:C", BOB)).toBeNull();
      expect((await store.tasks.activeOf("slack:T:C2", BOB))?.id).toBe("t-sibling");
      expect(await store.tasks.activeOf("slack:T:C:thread:1:x", ALICE)).toBeNull();
    });

    it("activeTaskOf ignores ended tasks and picks the most recently updated one", async () => {
      const { store, clock } = ctx;
      await startTask(store, "slack:T:C", { task: "t1", request: "r1" });
      clock.advance(10);
      await startTask(store, "slack:T:C:thread:1", { task: "t2", request: "r2" });
      clock.advance(10);
      await commitStep(store, { sessionKey: "slack:T:C", task: { id: "t1", status: "waiting_user" } });
      expect((await store.tasks.activeOf("slack:T:C", ALICE))?.id).toBe("t1");
      await commitStep(store, { sessionKey: "slack:T:C", task: { id: "t1", status: "completed" } });
      expect((await store.tasks.activeOf("slack:T:C", ALICE))?.id).toBe("t2");
    });
  });
}
