// Contract: leases with fencing tokens (a replica's hold on a session or a singleton job), and fenced commits.
import { describe, expect, it } from "vitest";
import { FencedError, type Lease, type StepCommit } from "../../../src/store/store.js";
import { everythingOf, frame, freshAgentSessionId, logEntry, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";

const K = "telegram:100";
const TTL = 10_000;

export function leaseContract(ctx: ContractContext): void {
  describe("leases", () => {
    it("a free key is granted with token 1, expiring ttl after the store's clock; lease reads it back", async () => {
      const { store, clock } = ctx;
      expect(await store.leases.get(K)).toBeNull();
      const granted = await store.leases.acquire(K, "replica-a", TTL);
      expect(granted).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
      expect(await store.leases.get(K)).toEqual(granted);
    });

    it("the holder acquiring again only extends it: same token, new expiry", async () => {
      const { store, clock } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      clock.advance(4_000);
      expect(await store.leases.acquire(K, "replica-a", TTL)).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
    });

    it("another holder is refused while the lease is live, up to the last millisecond", async () => {
      const { store, clock } = ctx;
      const held = await store.leases.acquire(K, "replica-a", TTL);
      expect(await store.leases.acquire(K, "replica-b", TTL)).toBeNull();
      clock.advance(TTL - 1);
      expect(await store.leases.acquire(K, "replica-b", TTL)).toBeNull();
      expect(await store.leases.get(K)).toEqual(held);
    });

    it("once it has expired, another holder takes it over with the next token", async () => {
      const { store, clock } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      clock.advance(TTL);
      expect(await store.leases.acquire(K, "replica-b", 5_000)).toEqual({ key: K, holder: "replica-b", token: 2, expiresAt: clock.t + 5_000 });
      expect(await store.leases.acquire(K, "replica-a", TTL)).toBeNull();
      clock.advance(5_000);
      expect((await store.leases.acquire(K, "replica-a", TTL))?.token).toBe(3);
    });

    it("the same holder taking back its own expired lease keeps the token (nobody else had it)", async () => {
      const { store, clock } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      clock.advance(TTL * 3);
      expect(await store.leases.acquire(K, "replica-a", TTL)).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
    });

    it("renew extends the lease while holder and token match, even after it expired", async () => {
      const { store, clock } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      clock.advance(TTL + 500);
      expect(await store.leases.renew(K, "replica-a", 1, TTL)).toBe(true);
      expect(await store.leases.get(K)).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
      expect(await store.leases.acquire(K, "replica-b", TTL)).toBeNull();
    });

    it("renew fails with another token, another holder, an unknown key, and after a takeover", async () => {
      const { store, clock } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      expect(await store.leases.renew(K, "replica-a", 2, TTL)).toBe(false);
      expect(await store.leases.renew(K, "replica-b", 1, TTL)).toBe(false);
      expect(await store.leases.renew("telegram:none", "replica-a", 1, TTL)).toBe(false);
      clock.advance(TTL);
      const taken = await store.leases.acquire(K, "replica-b", TTL);
      expect(await store.leases.renew(K, "replica-a", 1, TTL)).toBe(false);
      expect(await store.leases.get(K)).toEqual(taken);
    });

    it("release frees the lease at once and keeps its token; another holder then gets the next token", async () => {
      const { store, clock } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      await store.leases.release(K, "replica-a", 1);
      expect(await store.leases.get(K)).toMatchObject({ key: K, holder: "replica-a", token: 1 });
      expect((await store.leases.get(K))!.expiresAt).toBeLessThanOrEqual(clock.t);
      expect(await store.leases.acquire(K, "replica-b", TTL)).toEqual({ key: K, holder: "replica-b", token: 2, expiresAt: clock.t + TTL });
    });

    it("a released lease taken back by its last holder keeps the token", async () => {
      const { store } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      await store.leases.release(K, "replica-a", 1);
      expect((await store.leases.acquire(K, "replica-a", TTL))?.token).toBe(1);
    });

    it("release with a stale token or by another holder changes nothing", async () => {
      const { store, clock } = ctx;
      await store.leases.acquire(K, "replica-a", TTL);
      clock.advance(TTL);
      const taken = await store.leases.acquire(K, "replica-b", TTL);
      await store.leases.release(K, "replica-a", 1);
      await store.leases.release(K, "replica-a", 2);
      expect(await store.leases.get(K)).toEqual(taken);
      expect(await store.leases.acquire(K, "replica-a", TTL)).toBeNull();
    });

    it("keys are independent, singleton job names included", async () => {
      const { store } = ctx;
      expect((await store.leases.acquire(K, "replica-a", TTL))?.token).toBe(1);
      expect(await store.leases.acquire("@telegram-polling", "replica-b", TTL)).toMatchObject({ key: "@telegram-polling", holder: "replica-b", token: 1 });
      expect((await store.leases.acquire("telegram:200", "replica-b", TTL))?.holder).toBe("replica-b");
      expect((await store.leases.get(K))?.holder).toBe("replica-a");
    });
  });

  describe("writers: a step is written under a lease the store granted", () => {
    const snapshot = () => everythingOf(ctx.store, K);

    /** A step touching every table a step can write. */
    const bigStep = (over: Partial<StepCommit> = {}): StepCommit => ({
      taskCreated: { id: "t2", ownerId: "telegram:alice", requestId: "r1" },
      log: [logEntry("message", { role: "assistant", content: "hi" }, { taskId: "t1", requestId: "r1", agentSessionId: "as-f-main" })],
      framesPushed: [frame("f-skill", { agentType: "skill" })],
      framesUpdated: [frame("f-main", { iteration: 3 })],
      task: { id: "t1", status: "completed", result: "done" },
      request: { id: "r1", status: "done" },
      usage: { requestId: "r1", inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, costNanoUsd: 0 },
      outbound: [outbound("o1", { requestId: "r1" })],
      newMainAgentSessionId: "as-after",
      approvalsCreated: [newApproval("a1")],
      ...over,
    });

    async function givenTurnUnderLease(): Promise<Lease> {
      await startTask(ctx.store, K, { task: "t1", request: "r1", frames: [frame("f-main")] });
      return (await ctx.store.leases.acquire(K, "replica-a", TTL))!;
    }

    it("a writer carries its lease's session and fence", async () => {
      const lease = await givenTurnUnderLease();
      const writer = ctx.store.steps.writer(lease);
      expect({ sessionKey: writer.sessionKey, fence: writer.fence }).toEqual({ sessionKey: K, fence: { holder: "replica-a", token: lease.token } });
    });

    it("the writer of the current lease commits", async () => {
      const lease = await givenTurnUnderLease();
      await ctx.store.steps.writer(lease).commit(bigStep());
      expect((await ctx.store.requests.get("r1"))?.status).toBe("done");
      expect((await ctx.store.outbox.pending(K)).map((o) => o.id)).toEqual(["o1"]);
    });

    it("the writer of a lease another replica has since taken over throws FencedError and writes nothing", async () => {
      const { store, clock } = ctx;
      const lease = await givenTurnUnderLease();
      const stale = store.steps.writer(lease);
      clock.advance(TTL);
      expect((await store.leases.acquire(K, "replica-b", TTL))?.token).toBe(lease.token + 1);
      const before = await snapshot();
      const error = await stale.commit(bigStep()).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FencedError);
      expect(error).toMatchObject({ sessionKey: K, token: lease.token, current: lease.token + 1 });
      expect(await snapshot()).toEqual(before);
      expect(await store.tasks.get("t2")).toBeNull();
      expect(await store.approvals.get("a1")).toBeNull();
      expect(await store.outbox.ofRequest("r1")).toEqual([]);
    });

    it("a writer made from a forged lease on a session nobody ever leased throws FencedError with no current token", async () => {
      const { store } = ctx;
      const NEVER = "telegram:never-leased";
      const before = await everythingOf(store, NEVER);
      // Only a cast makes a Lease the store did not grant.
      const forged = store.steps.writer({ key: NEVER, holder: "replica-a", token: 1, expiresAt: Number.MAX_SAFE_INTEGER } as Lease);
      const step = { log: [logEntry("message", { role: "assistant", content: "hi" })], outbound: [outbound("o-forged")] };
      await expect(forged.commit(step)).rejects.toMatchObject({ name: "FencedError", sessionKey: NEVER, token: 1, current: null });
      expect(await everythingOf(store, NEVER)).toEqual(before);
      expect(await store.outbox.pending(NEVER)).toEqual([]);
    });

    it("the fence checks the token, not the clock: an expired lease nobody took over still commits", async () => {
      const lease = await givenTurnUnderLease();
      ctx.clock.advance(TTL * 2);
      await ctx.store.steps.writer(lease).commit({ request: { id: "r1", status: "done" } });
      expect((await ctx.store.requests.get("r1"))?.status).toBe("done");
    });

    it("a released lease's writer still commits until another holder takes the session", async () => {
      const { store } = ctx;
      const lease = await givenTurnUnderLease();
      await store.leases.release(K, "replica-a", lease.token);
      await store.steps.writer(lease).commit({ request: { id: "r1", status: "running" } });
      expect((await store.requests.get("r1"))?.status).toBe("running");
      await store.leases.acquire(K, "replica-b", TTL);
      await expect(store.steps.writer(lease).commit({ request: { id: "r1", status: "done" } })).rejects.toBeInstanceOf(FencedError);
      expect((await store.requests.get("r1"))?.status).toBe("running");
    });

    it("each session is fenced by its own lease", async () => {
      const { store } = ctx;
      const lease = await givenTurnUnderLease();
      await store.sessions.open("telegram:200", freshAgentSessionId);
      await store.requests.insert(newRequest("r9", "telegram:200"));
      const other = (await store.leases.acquire("telegram:200", "replica-b", TTL))!;
      await store.steps.writer(lease).commit(bigStep());
      await store.steps.writer(other).commit({ request: { id: "r9", status: "done" } });
      expect((await store.requests.get("r1"))?.status).toBe("done");
      expect((await store.requests.get("r9"))?.status).toBe("done");
    });
  });
}
