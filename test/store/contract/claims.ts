// Contract: claiming replies to send (claimNextOutbound) and finding sessions whose work nobody is doing
// (orphanedSessions).
import { describe, expect, it } from "vitest";
import { newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";

const K = "telegram:100";
const OTHER = "telegram:200";
const TTL = 10_000;

export function claimContract(ctx: ContractContext): void {
  describe("claimNextOutbound", () => {
    it("hands out the session's replies oldest first, each once, then null", async () => {
      const { store, clock } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o-b"), outbound("o-a")] });
      await store.commit({ sessionKey: OTHER, outbound: [outbound("o-x")] });
      clock.advance(10);
      await store.commit({ sessionKey: K, outbound: [outbound("o-c")] });
      const claimed = [];
      for (let i = 0; i < 4; i++) claimed.push((await store.claimNextOutbound(K))?.id ?? null);
      expect(claimed).toEqual(["o-b", "o-a", "o-c", null]);
      expect((await store.pendingOutbound()).map((o) => o.id)).toEqual(["o-x"]);
    });

    it("returns the record as written, with its session and commit time", async () => {
      const { store, clock } = ctx;
      const input = outbound("o1", { requestId: "r1", taskId: "t1", agent: "skill:research", depth: 1, text: "Approve?", kind: "notice", approvalId: "a1" });
      await store.commit({ sessionKey: K, outbound: [input] });
      const createdAt = clock.t;
      clock.advance(100);
      expect(await store.claimNextOutbound(K)).toEqual({ ...input, sessionKey: K, createdAt });
    });

    it("never hands out a delivered or an undeliverable reply", async () => {
      const { store } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o1"), outbound("o2"), outbound("o3")] });
      await store.markDelivered("o1");
      await store.markUndeliverable("o2", "bot was blocked by the user");
      expect((await store.claimNextOutbound(K))?.id).toBe("o3");
      expect(await store.claimNextOutbound(K)).toBeNull();
    });

    it("markUndelivered makes a claimed reply claimable again, still first in order", async () => {
      const { store } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o1"), outbound("o2"), outbound("o3")] });
      expect((await store.claimNextOutbound(K))?.id).toBe("o1");
      expect((await store.claimNextOutbound(K))?.id).toBe("o2");
      await store.markUndelivered("o1");
      expect((await store.pendingOutbound(K)).map((o) => o.id)).toEqual(["o1", "o3"]);
      expect((await store.claimNextOutbound(K))?.id).toBe("o1");
      expect((await store.claimNextOutbound(K))?.id).toBe("o3");
    });

    it("is null for a session without replies", async () => {
      expect(await ctx.store.claimNextOutbound("telegram:none")).toBeNull();
    });
  });

  describe("orphanedSessions", () => {
    const sorted = async () => [...(await ctx.store.orphanedSessions())].sort();

    it("lists sessions with a pending or running request and no lease", async () => {
      const { store } = ctx;
      await store.insertRequest(newRequest("r1", K));
      await startTask(store, OTHER, { task: "t1", request: "r2" }); // r2 running
      await store.insertRequest(newRequest("r3", "telegram:300"));
      await store.commit({ sessionKey: "telegram:300", request: { id: "r3", status: "done" } });
      expect(await sorted()).toEqual([K, OTHER]);
    });

    it("leaves out a session with a live lease, and lists it again once the lease expired or was released", async () => {
      const { store, clock } = ctx;
      await store.insertRequest(newRequest("r1", K));
      const lease = (await store.acquireLease(K, "replica-a", TTL))!;
      expect(await sorted()).toEqual([]);
      clock.advance(TTL - 1);
      expect(await sorted()).toEqual([]);
      clock.advance(1);
      expect(await sorted()).toEqual([K]);
      await store.renewLease(K, "replica-a", lease.token, TTL);
      expect(await sorted()).toEqual([]);
      await store.releaseLease(K, "replica-a", lease.token);
      expect(await sorted()).toEqual([K]);
    });

    it("lists a session whose only work is a reply not yet delivered", async () => {
      const { store } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o1")] });
      await store.commit({ sessionKey: OTHER, outbound: [outbound("o2"), outbound("o3")] });
      await store.markDelivered("o2");
      await store.markUndeliverable("o3", "chat not found");
      expect(await sorted()).toEqual([K]);
      await store.claimNextOutbound(K);
      expect(await sorted()).toEqual([]);
    });

    it("never lists keys of singleton jobs (starting with @)", async () => {
      const { store } = ctx;
      await store.insertRequest(newRequest("r1", "@telegram-polling"));
      await store.commit({ sessionKey: "@memory", outbound: [outbound("o1")] });
      await store.insertRequest(newRequest("r2", K));
      expect(await sorted()).toEqual([K]);
    });

    it("lists each session once however much work it has", async () => {
      const { store } = ctx;
      await store.insertRequest(newRequest("r1", K));
      await store.insertRequest(newRequest("r2", K));
      await store.commit({ sessionKey: K, outbound: [outbound("o1"), outbound("o2")] });
      expect(await store.orphanedSessions()).toEqual([K]);
    });
  });
}
