// Contract: leases with fencing tokens (a replica's hold on a session or a singleton job), and fenced commits.
import { describe, expect, it } from "vitest";
import { FencedError, type StepCommit } from "../../../src/store/store.js";
import { everythingOf, frame, freshAgentSessionId, logEntry, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";

const K = "telegram:100";
const TTL = 10_000;

export function leaseContract(ctx: ContractContext): void {
  describe("leases", () => {
    it("a free key is granted with token 1, expiring ttl after the store's clock; lease reads it back", async () => {
      const { store, clock } = ctx;
      expect(await store.lease(K)).toBeNull();
      const granted = await store.acquireLease(K, "replica-a", TTL);
      expect(granted).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
      expect(await store.lease(K)).toEqual(granted);
    });

    it("the holder acquiring again only extends it: same token, new expiry", async () => {
      const { store, clock } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      clock.advance(4_000);
      expect(await store.acquireLease(K, "replica-a", TTL)).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
    });

    it("another holder is refused while the lease is live, up to the last millisecond", async () => {
      const { store, clock } = ctx;
      const held = await store.acquireLease(K, "replica-a", TTL);
      expect(await store.acquireLease(K, "replica-b", TTL)).toBeNull();
      clock.advance(TTL - 1);
      expect(await store.acquireLease(K, "replica-b", TTL)).toBeNull();
      expect(await store.lease(K)).toEqual(held);
    });

    it("once it has expired, another holder takes it over with the next token", async () => {
      const { store, clock } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      clock.advance(TTL);
      expect(await store.acquireLease(K, "replica-b", 5_000)).toEqual({ key: K, holder: "replica-b", token: 2, expiresAt: clock.t + 5_000 });
      expect(await store.acquireLease(K, "replica-a", TTL)).toBeNull();
      clock.advance(5_000);
      expect((await store.acquireLease(K, "replica-a", TTL))?.token).toBe(3);
    });

    it("the same holder taking back its own expired lease keeps the token (nobody else had it)", async () => {
      const { store, clock } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      clock.advance(TTL * 3);
      expect(await store.acquireLease(K, "replica-a", TTL)).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
    });

    it("renew extends the lease while holder and token match, even after it expired", async () => {
      const { store, clock } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      clock.advance(TTL + 500);
      expect(await store.renewLease(K, "replica-a", 1, TTL)).toBe(true);
      expect(await store.lease(K)).toEqual({ key: K, holder: "replica-a", token: 1, expiresAt: clock.t + TTL });
      expect(await store.acquireLease(K, "replica-b", TTL)).toBeNull();
    });

    it("renew fails with another token, another holder, an unknown key, and after a takeover", async () => {
      const { store, clock } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      expect(await store.renewLease(K, "replica-a", 2, TTL)).toBe(false);
      expect(await store.renewLease(K, "replica-b", 1, TTL)).toBe(false);
      expect(await store.renewLease("telegram:none", "replica-a", 1, TTL)).toBe(false);
      clock.advance(TTL);
      const taken = await store.acquireLease(K, "replica-b", TTL);
      expect(await store.renewLease(K, "replica-a", 1, TTL)).toBe(false);
      expect(await store.lease(K)).toEqual(taken);
    });

    it("release frees the lease at once and keeps its token; another holder then gets the next token", async () => {
      const { store, clock } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      await store.releaseLease(K, "replica-a", 1);
      expect(await store.lease(K)).toMatchObject({ key: K, holder: "replica-a", token: 1 });
      expect((await store.lease(K))!.expiresAt).toBeLessThanOrEqual(clock.t);
      expect(await store.acquireLease(K, "replica-b", TTL)).toEqual({ key: K, holder: "replica-b", token: 2, expiresAt: clock.t + TTL });
    });

    it("a released lease taken back by its last holder keeps the token", async () => {
      const { store } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      await store.releaseLease(K, "replica-a", 1);
      expect((await store.acquireLease(K, "replica-a", TTL))?.token).toBe(1);
    });

    it("release with a stale token or by another holder changes nothing", async () => {
      const { store, clock } = ctx;
      await store.acquireLease(K, "replica-a", TTL);
      clock.advance(TTL);
      const taken = await store.acquireLease(K, "replica-b", TTL);
      await store.releaseLease(K, "replica-a", 1);
      await store.releaseLease(K, "replica-a", 2);
      expect(await store.lease(K)).toEqual(taken);
      expect(await store.acquireLease(K, "replica-a", TTL)).toBeNull();
    });

    it("keys are independent, singleton job names included", async () => {
      const { store } = ctx;
      expect((await store.acquireLease(K, "replica-a", TTL))?.token).toBe(1);
      expect(await store.acquireLease("@telegram-polling", "replica-b", TTL)).toMatchObject({ key: "@telegram-polling", holder: "replica-b", token: 1 });
      expect((await store.acquireLease("telegram:200", "replica-b", TTL))?.holder).toBe("replica-b");
      expect((await store.lease(K))?.holder).toBe("replica-a");
    });
  });

  describe("fenced commits", () => {
    const snapshot = () => everythingOf(ctx.store, K);

    /** A step touching every table a step can write. */
    const bigStep = (over: Partial<StepCommit> = {}): StepCommit => ({
      sessionKey: K,
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

    async function givenTurnUnderLease(): Promise<number> {
      await startTask(ctx.store, K, { task: "t1", request: "r1", frames: [frame("f-main")] });
      return (await ctx.store.acquireLease(K, "replica-a", TTL))!.token;
    }

    it("a step fenced with the current token is committed", async () => {
      const token = await givenTurnUnderLease();
      await ctx.store.commit(bigStep({ fence: { holder: "replica-a", token } }));
      expect((await ctx.store.request("r1"))?.status).toBe("done");
      expect((await ctx.store.pendingOutbound(K)).map((o) => o.id)).toEqual(["o1"]);
    });

    it("a step fenced with a token another replica has since replaced throws FencedError and writes nothing", async () => {
      const { store, clock } = ctx;
      const token = await givenTurnUnderLease();
      clock.advance(TTL);
      expect((await store.acquireLease(K, "replica-b", TTL))?.token).toBe(token + 1);
      const before = await snapshot();
      const error = await store.commit(bigStep({ fence: { holder: "replica-a", token } })).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FencedError);
      expect(error).toMatchObject({ sessionKey: K, token, current: token + 1 });
      expect(await snapshot()).toEqual(before);
      expect(await store.task("t2")).toBeNull();
      expect(await store.approval("a1")).toBeNull();
      expect(await store.outboundFor("r1")).toEqual([]);
    });

    it("a fenced step on a session nobody ever leased throws FencedError with no current token", async () => {
      const { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1", frames: [frame("f-main")] });
      const before = await snapshot();
      await expect(store.commit(bigStep({ fence: { holder: "replica-a", token: 1 } }))).rejects.toMatchObject({
        name: "FencedError",
        sessionKey: K,
        token: 1,
        current: null,
      });
      expect(await snapshot()).toEqual(before);
    });

    it("the fence checks the token, not the clock: an expired lease nobody took over still commits", async () => {
      const token = await givenTurnUnderLease();
      ctx.clock.advance(TTL * 2);
      await ctx.store.commit({ sessionKey: K, fence: { holder: "replica-a", token }, request: { id: "r1", status: "done" } });
      expect((await ctx.store.request("r1"))?.status).toBe("done");
    });

    it("a step without a fence is committed whoever holds the lease", async () => {
      const { store } = ctx;
      await givenTurnUnderLease();
      await store.session("telegram:200", freshAgentSessionId);
      await store.insertRequest(newRequest("r9", "telegram:200"));
      await store.acquireLease("telegram:200", "replica-b", TTL);
      await store.commit(bigStep());
      await store.commit({ sessionKey: "telegram:200", request: { id: "r9", status: "done" } });
      expect((await store.request("r1"))?.status).toBe("done");
      expect((await store.request("r9"))?.status).toBe("done");
    });
  });
}
