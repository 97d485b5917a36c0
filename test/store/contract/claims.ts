// Contract: claiming replies to send (claimNextOutbound) and finding sessions whose work nobody is doing
// (orphanedSessions).
import { describe, expect, it } from "vitest";
import { newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const OTHER = "telegram:200";
const TTL = 10_000;

export function claimContract(ctx: ContractContext): void {
  describe("claimNextOutbound", () => {
    it("hands out the session's replies oldest first, each once, then null", async () => {
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o-b"), outbound("o-a")] });
      await commitStep(store, { sessionKey: OTHER, outbound: [outbound("o-x")] });
      clock.advance(10);
      await commitStep(store, { sessionKey: K, outbound: [outbound("o-c")] });
      const claimed = [];
      for (let i = 0; i < 4; i++) claimed.push((await store.outbox.claimNext(K))?.id ?? null);
      expect(claimed).toEqual(["o-b", "o-a", "o-c", null]);
      expect((await store.outbox.pending()).map((o) => o.id)).toEqual(["o-x"]);
    });

    it("returns the record as written, with its session and commit time", async () => {
      const { store, clock } = ctx;
      const input = outbound("o1", { requestId: "r1", taskId: "t1", agent: "skill:research", depth: 1, text: "Approve?", kind: "notice", approvalId: "a1" });
      await commitStep(store, { sessionKey: K, outbound: [input] });
      const createdAt = clock.t;
      clock.advance(100);
      expect(await store.outbox.claimNext(K)).toEqual({ ...input, sessionKey: K, createdAt, sentChunks: [], morePending: !ctx.backend.name.startsWith("postgres") });
    });

    it("comes with the chunks already sent of the reply it claims, in order, and only its own", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2")] });
      // A send cut off halfway: chunks 0 and 2 of o1 reached the platform, then the claim was taken back.
      expect((await store.outbox.claimNext(K))?.id).toBe("o1");
      await store.outbox.recordChunk("o1", 2, "msg-12");
      await store.outbox.recordChunk("o1", 0, "msg-10");
      await store.outbox.markUndelivered("o1");
      expect(await store.outbox.claimNext(K)).toMatchObject({ id: "o1", sentChunks: [0, 2] });
      expect(await store.outbox.claimNext(K)).toMatchObject({ id: "o2", sentChunks: [] });
    });

    it("says whether another reply was pending, so a pass ends without a claim that finds nothing", async () => {
      const { store, backend } = ctx;
      // SQLite always says "maybe" (OutboxStore.claimNext); it must never say "no more" while one is pending.
      const last = !backend.name.startsWith("postgres");
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2"), outbound("o3")] });
      await commitStep(store, { sessionKey: OTHER, outbound: [outbound("o-x")] });
      await store.outbox.markUndeliverable("o3", "bot was blocked by the user");
      expect(await store.outbox.claimNext(K)).toMatchObject({ id: "o1", morePending: true });
      // Neither the undeliverable o3 nor another session's reply counts.
      expect(await store.outbox.claimNext(K)).toMatchObject({ id: "o2", morePending: last });
      // One committed after the claim is found by the next claim (its announcement queues the next pass).
      await commitStep(store, { sessionKey: K, outbound: [outbound("o4")] });
      expect(await store.outbox.claimNext(K)).toMatchObject({ id: "o4", morePending: last });
      expect(await store.outbox.claimNext(K)).toBeNull();
    });

    it("never hands out a delivered or an undeliverable reply", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2"), outbound("o3")] });
      await store.outbox.markDelivered("o1");
      await store.outbox.markUndeliverable("o2", "bot was blocked by the user");
      expect((await store.outbox.claimNext(K))?.id).toBe("o3");
      expect(await store.outbox.claimNext(K)).toBeNull();
    });

    it("markUndelivered makes a claimed reply claimable again, still first in order", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2"), outbound("o3")] });
      expect((await store.outbox.claimNext(K))?.id).toBe("o1");
      expect((await store.outbox.claimNext(K))?.id).toBe("o2");
      await store.outbox.markUndelivered("o1");
      expect((await store.outbox.pending(K)).map((o) => o.id)).toEqual(["o1", "o3"]);
      expect((await store.outbox.claimNext(K))?.id).toBe("o1");
      expect((await store.outbox.claimNext(K))?.id).toBe("o3");
    });

    it("is null for a session without replies", async () => {
      expect(await ctx.store.outbox.claimNext("telegram:none")).toBeNull();
    });
  });

  describe("orphanedSessions", () => {
    const sorted = async () => [...(await ctx.store.leases.orphanedSessions())].sort();

    it("lists sessions with a pending or running request and no lease", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K));
      await startTask(store, OTHER, { task: "t1", request: "r2" }); // r2 running
      await store.requests.insert(newRequest("r3", "telegram:300"));
      await commitStep(store, { sessionKey: "telegram:300", request: { id: "r3", status: "done" } });
      expect(await sorted()).toEqual([K, OTHER]);
    });

    it("leaves out a session with a live lease, and lists it again once the lease expired or was released", async () => {
      const { store, clock } = ctx;
      await store.requests.insert(newRequest("r1", K));
      const lease = (await store.leases.acquire(K, "replica-a", TTL))!;
      expect(await sorted()).toEqual([]);
      clock.advance(TTL - 1);
      expect(await sorted()).toEqual([]);
      clock.advance(1);
      expect(await sorted()).toEqual([K]);
      await store.leases.renew(K, "replica-a", lease.token, TTL);
      expect(await sorted()).toEqual([]);
      await store.leases.release(K, "replica-a", lease.token);
      expect(await sorted()).toEqual([K]);
    });

    it("lists a session whose only work is a reply not yet delivered", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1")] });
      await commitStep(store, { sessionKey: OTHER, outbound: [outbound("o2"), outbound("o3")] });
      await store.outbox.markDelivered("o2");
      await store.outbox.markUndeliverable("o3", "chat not found");
      expect(await sorted()).toEqual([K]);
      await store.outbox.claimNext(K);
      expect(await sorted()).toEqual([]);
    });

    it("never lists keys of singleton jobs (starting with @)", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", "@telegram-polling"));
      await commitStep(store, { sessionKey: "@memory", outbound: [outbound("o1")] });
      await store.requests.insert(newRequest("r2", K));
      expect(await sorted()).toEqual([K]);
    });

    it("lists each session once however much work it has", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K));
      await store.requests.insert(newRequest("r2", K));
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2")] });
      expect(await store.leases.orphanedSessions()).toEqual([K]);
    });
  });
}
