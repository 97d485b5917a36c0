// Contract: a user's data (npm run user) — everything stored about one user exported, then erased, leaving every
// other user's data as it was.
import { describe, expect, it } from "vitest";
import type { Store } from "../../../src/store/store.js";
import { ALICE, BOB, frame, logEntry, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";
import { commitStep, writerFor } from "../../helpers/steps.js";

const CAROL = "slack:T1:carol";
const HTTP = "http:alice-session"; // owned by Alice (claimed by her first request)
const DM = "telegram:alice"; // no owner, only Alice writes: hers too
const GROUP = "telegram:-100"; // a group: Bob's task, Alice and Carol write in it as well
const BOBS = "telegram:bob"; // Bob's own chat

/** A conversation: the task's request, a log row and a reply for it, delivered in one chunk. */
async function turn(store: Store, key: string, n: string, userId: string): Promise<void> {
  await store.sessions.open(key, () => `as-${key}`);
  const request = newRequest(`r-${n}`, key, { userId, text: `message ${n} from ${userId}` });
  expect((await store.requests.insert(request)).status).toBe("inserted");
  await commitStep(store, {
    sessionKey: key,
    log: [logEntry("message", { role: "user", content: `message ${n} from ${userId}` }, { requestId: `r-${n}`, agentSessionId: `as-${key}` })],
    outbound: [outbound(`o-${n}`, { requestId: `r-${n}`, text: `reply ${n} to ${userId}` })],
    request: { id: `r-${n}`, status: "done" },
  });
  await store.outbox.recordChunk(`o-${n}`, 0, `platform-${n}`);
}

export function userDataContract(ctx: ContractContext): void {
  async function world(): Promise<void> {
    const { store } = ctx;
    // Alice's private HTTP session: a task waiting for her approval, its frame, an idempotency key, a memory job.
    expect(
      (await store.requests.insert(newRequest("r-h1", HTTP, { claimSession: { mainAgentSessionId: "as-h" }, idempotency: { key: "k1", fingerprint: "f" } }))).status,
    ).toBe("inserted");
    await commitStep(store, {
      sessionKey: HTTP,
      taskCreated: { id: "t-h", ownerId: ALICE, requestId: "r-h1" },
      request: { id: "r-h1", status: "running", taskId: "t-h" },
      framesPushed: [frame("f-h")],
      log: [logEntry("message", { role: "user", content: "book a table" }, { taskId: "t-h", requestId: "r-h1" })],
      approvalsCreated: [newApproval("a-h", { taskId: "t-h", frameId: "f-h" })],
      outbound: [outbound("o-h", { requestId: "r-h1", approvalId: "a-h", text: "Approve?" })],
      memoryJob: { taskId: "t-h", userId: ALICE },
    });
    await store.indicators.save(HTTP, "typing");
    await turn(store, DM, "d1", ALICE);
    await startTask(store, GROUP, { task: "t-g", request: "r-g0", owner: BOB });
    await turn(store, GROUP, "g1", ALICE);
    await turn(store, GROUP, "g2", CAROL);
    await turn(store, GROUP, "g3", BOB);
    await commitStep(store, { sessionKey: GROUP, approvalsCreated: [newApproval("a-g", { ownerId: BOB })], memoryJob: { taskId: "t-g", userId: BOB } });
    await store.approvals.decide("a-g", "approved", BOB);
    await turn(store, BOBS, "b1", BOB);
    const httpLease = (await store.leases.acquire(HTTP, "replica-a", 10_000))!;
    // A file in Alice's workspace and one in the group's (Bob's).
    const file = (path: string, text: string) => ({ path, kind: "file" as const, mode: 0o644, size: text.length, sha256: "0".repeat(64), content: Buffer.from(text) });
    await store.workspaces.save(HTTP, httpLease, [file("booking.txt", "table for two")], []);
    await store.workspaces.save(GROUP, (await writerFor(store, GROUP)).fence, [file("agenda.md", "group agenda")], []);
    await store.memories.save(ALICE, {
      add: [
        { id: "ma1", text: "Alice lives in Lisbon" },
        { id: "ma2", text: "Alice is vegetarian" },
      ],
    });
    await store.memories.save(BOB, { add: [{ id: "mb1", text: "Bob lives in Porto" }] });
  }

  describe("exportUser", () => {
    it("holds the user's sessions, requests, log, replies, approvals and memories, and nobody else's", async () => {
      const { store } = ctx;
      await world();
      const data = await store.userData.export(ALICE);
      expect(data.userId).toBe(ALICE);
      expect(new Date(data.exportedAt).getTime()).toBe(ctx.clock.t);
      expect(data.memories.map((m) => m.text)).toEqual(["Alice lives in Lisbon", "Alice is vegetarian"]);
      const byKey = (x: unknown[], y: unknown[]) => (String(x[0]) < String(y[0]) ? -1 : 1);
      expect(data.sessions.map((s) => [s.sessionKey, s.owned]).sort(byKey)).toEqual(
        [
          [DM, true],
          [HTTP, true],
          [GROUP, false],
        ].sort(byKey),
      );
      const of = (key: string) => data.sessions.find((s) => s.sessionKey === key)!;
      expect(of(HTTP).requests.map((r) => r.id)).toEqual(["r-h1"]);
      expect(of(HTTP).tasks.map((t) => t.id)).toEqual(["t-h"]);
      expect(of(HTTP).log.map((e) => e.payload)).toEqual([{ role: "user", content: "book a table" }]);
      expect(of(HTTP).outbound).toEqual([{ id: "o-h", requestId: "r-h1", agent: "main", text: "Approve?", kind: "message", createdAt: ctx.clock.t }]);
      expect(of(DM).outbound.map((o) => o.text)).toEqual(["reply d1 to telegram:alice"]);
      // In the group only what is hers: her request, its log row and its reply; not Bob's task or Carol's words.
      expect(of(GROUP).requests.map((r) => r.id)).toEqual(["r-g1"]);
      expect(of(GROUP).tasks).toEqual([]);
      expect(of(GROUP).log.map((e) => e.requestId)).toEqual(["r-g1"]);
      expect(of(GROUP).outbound.map((o) => o.id)).toEqual(["o-g1"]);
      expect(data.approvals.map((a) => a.id)).toEqual(["a-h"]);
      const text = JSON.stringify(data);
      for (const other of [BOB, CAROL, "Porto"]) expect(text).not.toContain(other);
    });

    it("holds why each of the user's failed requests failed: the words they were told and the code", async () => {
      const { store } = ctx;
      await turn(store, DM, "d1", ALICE);
      expect((await store.requests.insert(newRequest("r-d2", DM, { userId: ALICE }))).status).toBe("inserted");
      await commitStep(store, { sessionKey: DM, request: { id: "r-d2", status: "failed", error: "USER_DAILY_MESSAGES reached", errorCode: "quota" } });
      const [session] = (await store.userData.export(ALICE)).sessions;
      expect(session!.requests.map((r) => [r.id, r.status, r.error, r.errorCode])).toEqual([
        ["r-d1", "done", null, null],
        ["r-d2", "failed", "USER_DAILY_MESSAGES reached", "quota"],
      ]);
    });

    it("holds the files of the workspaces of the sessions the user owns, and not of the others", async () => {
      const { store } = ctx;
      await world();
      const data = await store.userData.export(ALICE);
      const workspaceOf = (key: string) => data.sessions.find((s) => s.sessionKey === key)?.workspace;
      expect(workspaceOf(HTTP)).toEqual([
        { path: "booking.txt", kind: "file", mode: 0o644, size: 13, sha256: "0".repeat(64), contentBase64: Buffer.from("table for two").toString("base64") },
      ]);
      expect(workspaceOf(GROUP)).toEqual([]);
      await store.userData.erase(ALICE);
      expect(await store.workspaces.manifest(HTTP)).toEqual([]);
      expect((await store.workspaces.manifest(GROUP)).map((e) => e.path)).toEqual(["agenda.md"]);
    });

    it("is empty for a user the store knows nothing about", async () => {
      await world();
      const data = await ctx.store.userData.export("telegram:nobody");
      expect(data).toMatchObject({ userId: "telegram:nobody", memories: [], sessions: [], approvals: [] });
    });
  });

  describe("deleteUser", () => {
    it("erases the user's own sessions whole, their requests elsewhere and their memories; says how many rows went", async () => {
      const { store } = ctx;
      await world();
      const groupLog = await store.steps.log(GROUP);
      const counts = await store.userData.erase(ALICE);
      expect(counts).toMatchObject({
        sessions: 2,
        requests: 3,
        tasks: 1,
        frames: 1,
        context_log: 2,
        outbox: 2,
        deliveries: 1,
        approvals: 1,
        idempotency_keys: 1,
        indicators: 1,
        memories: 2,
        memory_jobs: 1,
      });
      const data = await store.userData.export(ALICE);
      expect(data).toMatchObject({ memories: [], sessions: [], approvals: [] });
      for (const key of [HTTP, DM]) {
        expect(await store.sessions.find(key)).toBeNull();
        expect(await store.requests.ofSession(key)).toEqual([]);
        expect(await store.steps.log(key)).toEqual([]);
        expect(await store.steps.frames(key)).toEqual([]);
      }
      expect(await store.tasks.get("t-h")).toBeNull();
      expect(await store.approvals.get("a-h")).toBeNull();
      expect(await store.requests.idempotency(ALICE, "k1")).toBeNull();
      expect(await store.outbox.deliveredChunks("o-d1")).toEqual([]);
      expect(await store.indicators.list("http")).toEqual([]);
      expect((await store.memories.pendingJobs()).map((j) => j.taskId)).toEqual(["t-g"]);
      // The group's conversation stays as it was (its history is Bob's and Carol's too); only her request went.
      expect((await store.requests.ofSession(GROUP)).map((r) => r.userId)).toEqual([BOB, CAROL, BOB]);
      expect(await store.steps.log(GROUP)).toEqual(groupLog);
      // A lease is never deleted (its fencing token must only grow).
      expect((await store.leases.get(HTTP))?.holder).toBe("replica-a");
      // Nothing is left to erase.
      expect(Object.values(await store.userData.erase(ALICE)).every((n) => n === 0)).toBe(true);
    });

    it("leaves every other user's data exactly as it was", async () => {
      const { store } = ctx;
      await world();
      const before = { bob: await store.userData.export(BOB), carol: await store.userData.export(CAROL) };
      await store.userData.erase(ALICE);
      const after = { bob: await store.userData.export(BOB), carol: await store.userData.export(CAROL) };
      expect(after).toEqual(before);
      expect(after.bob.memories.map((m) => m.text)).toEqual(["Bob lives in Porto"]);
      expect(after.bob.sessions.map((s) => s.sessionKey).sort()).toEqual([BOBS, GROUP].sort());
      expect(after.bob.approvals.map((a) => a.id)).toEqual(["a-g"]);
    });

    it("keeps another user's memory learnt in an erased task, without the link to the task", async () => {
      const { store } = ctx;
      await world();
      await commitStep(store, { sessionKey: DM, memoryJob: { taskId: "t-dm", userId: BOB } });
      const job = await store.memories.claimJob("w1", ctx.clock.t, 60_000, 3);
      expect(job?.taskId).toBe("t-h"); // the oldest first
      await store.memories.finishJob("t-h", "w1", { add: [{ id: "ma3", text: "Alice books tables" }] });
      // The session is leased to replica-a (world()): the step is that replica's.
      await (await writerFor(store, HTTP, "replica-a")).commit({
        taskCreated: { id: "t-h2", ownerId: ALICE, requestId: "r-h1" },
        memoryJob: { taskId: "t-h2", userId: BOB },
      });
      const claimed = [
        await store.memories.claimJob("w2", ctx.clock.t, 60_000, 3),
        await store.memories.claimJob("w2", ctx.clock.t, 60_000, 3),
        await store.memories.claimJob("w2", ctx.clock.t, 60_000, 3),
      ];
      expect(claimed.map((j) => j?.taskId)).toEqual(["t-g", "t-dm", "t-h2"]);
      await store.memories.finishJob("t-h2", "w2", { add: [{ id: "mb2", text: "Bob was mentioned" }] });
      expect((await store.memories.list(BOB)).find((m) => m.id === "mb2")?.taskId).toBe("t-h2");
      await store.userData.erase(ALICE);
      expect((await store.memories.list(BOB)).map((m) => [m.id, m.taskId])).toEqual([
        ["mb1", null],
        ["mb2", null],
      ]);
    });
  });
}
