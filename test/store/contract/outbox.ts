// Contract: the outbox (delivery journal), delivered chunks and provider indicators.
import { describe, expect, it } from "vitest";
import { outbound, type ContractContext } from "./fixtures.js";

const K = "telegram:100";
const OTHER = "slack:T:C";

export function outboxContract(ctx: ContractContext): void {
  describe("outbox", () => {
    it("pendingOutbound lists undelivered replies in commit order, of all sessions or one", async () => {
      const { store, clock } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o-b"), outbound("o-a")] });
      clock.advance(10);
      await store.commit({ sessionKey: OTHER, outbound: [outbound("o-c")] });
      await store.commit({ sessionKey: K, outbound: [outbound("o-d")] });
      expect((await store.pendingOutbound()).map((o) => o.id)).toEqual(["o-b", "o-a", "o-c", "o-d"]);
      expect((await store.pendingOutbound(K)).map((o) => o.id)).toEqual(["o-b", "o-a", "o-d"]);
      expect((await store.pendingOutbound(OTHER)).map((o) => o.id)).toEqual(["o-c"]);
    });

    it("an outbound record reads back as written, with its session and time", async () => {
      const { store, clock } = ctx;
      const input = outbound("o1", { approvalId: "a1", requestId: "r1", taskId: "t1", agent: "skill:research", depth: 2, text: "Approve?", kind: "notice" });
      await store.commit({ sessionKey: K, outbound: [input] });
      const expected = { ...input, sessionKey: K, createdAt: clock.t };
      expect(await store.pendingOutbound(K)).toEqual([expected]);
      expect(await store.outboundFor("r1")).toEqual([expected]);
    });

    it("an outbound without approval reads back with approvalId null", async () => {
      await ctx.store.commit({ sessionKey: K, outbound: [outbound("o1", { kind: "error" })] });
      expect((await ctx.store.pendingOutbound(K))[0]).toMatchObject({ approvalId: null, kind: "error", requestId: null, taskId: null });
    });

    it("markDelivered takes a reply out of pending; markUndelivered puts it back in its place", async () => {
      const { store } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o1"), outbound("o2"), outbound("o3")] });
      await store.markDelivered("o1");
      await store.markDelivered("o2");
      expect((await store.pendingOutbound(K)).map((o) => o.id)).toEqual(["o3"]);
      await store.markUndelivered("o1");
      expect((await store.pendingOutbound(K)).map((o) => o.id)).toEqual(["o1", "o3"]);
    });

    it("markUndeliverable succeeds once, keeps the first reason, and the reply is never pending again", async () => {
      const { store, clock } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o1"), outbound("o2")] });
      await store.commit({ sessionKey: OTHER, outbound: [outbound("o3")] });
      const failedAt = clock.advance(500);
      expect(await store.markUndeliverable("o1", "bot was blocked by the user")).toBe(true);
      clock.advance(500);
      expect(await store.markUndeliverable("o1", "chat not found")).toBe(false);
      await store.markUndelivered("o1");
      expect((await store.pendingOutbound()).map((o) => o.id)).toEqual(["o2", "o3"]);
      const [record, ...rest] = await store.undeliverable(K);
      expect(rest).toEqual([]);
      expect(record).toMatchObject({ id: "o1", sessionKey: K, failure: "bot was blocked by the user", failedAt });
      expect(await store.undeliverable(OTHER)).toEqual([]);
    });

    it("a delivered reply can still be marked undeliverable (its last chunk was refused)", async () => {
      const { store } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o1")] });
      await store.markDelivered("o1");
      expect(await store.markUndeliverable("o1", "message is too long")).toBe(true);
      expect((await store.undeliverable(K)).map((o) => o.id)).toEqual(["o1"]);
      expect(await store.markUndeliverable("missing", "x")).toBe(false);
    });

    it("outboundFor lists every reply of a request in order, delivered or not", async () => {
      const { store } = ctx;
      await store.commit({ sessionKey: K, outbound: [outbound("o2", { requestId: "r1" }), outbound("o1", { requestId: "r2" })] });
      await store.commit({ sessionKey: K, outbound: [outbound("o3", { requestId: "r1" })] });
      await store.markDelivered("o2");
      await store.markUndeliverable("o3", "gone");
      expect((await store.outboundFor("r1")).map((o) => o.id)).toEqual(["o2", "o3"]);
      expect(await store.outboundFor("r-none")).toEqual([]);
    });
  });

  describe("delivery chunks", () => {
    it("deliveredChunks lists recorded chunks in ascending order, per outbound message", async () => {
      const { store } = ctx;
      expect(await store.deliveredChunks("o1")).toEqual([]);
      await store.recordChunk("o1", 2, "msg-12");
      await store.recordChunk("o1", 0, "msg-10");
      await store.recordChunk("o2", 1, "msg-20");
      expect(await store.deliveredChunks("o1")).toEqual([0, 2]);
      expect(await store.deliveredChunks("o2")).toEqual([1]);
    });

    it("recording the same chunk again is harmless", async () => {
      const { store } = ctx;
      await store.recordChunk("o1", 0, "msg-10");
      await store.recordChunk("o1", 0, "msg-10-again");
      expect(await store.deliveredChunks("o1")).toEqual([0]);
    });
  });

  describe("indicators", () => {
    it("indicators lists one provider's indicators, oldest first", async () => {
      const { store, clock } = ctx;
      await store.saveIndicator("slack:T:C2", "b");
      clock.advance(10);
      await store.saveIndicator("slack:T:C1", "a");
      await store.saveIndicator("telegram:100", "t");
      await store.saveIndicator("slackware:x", "not slack");
      expect(await store.indicators("slack")).toEqual([
        { sessionKey: "slack:T:C2", data: "b" },
        { sessionKey: "slack:T:C1", data: "a" },
      ]);
      expect(await store.indicators("telegram")).toEqual([{ sessionKey: "telegram:100", data: "t" }]);
      expect(await store.indicators("http")).toEqual([]);
    });

    it("saveIndicator replaces the session's indicator; deleteIndicator removes only that one", async () => {
      const { store } = ctx;
      await store.saveIndicator("slack:T:C1", '{"reaction":"eyes"}');
      await store.saveIndicator("slack:T:C2", "other");
      await store.saveIndicator("slack:T:C1", '{"reaction":"hourglass"}');
      expect(await store.indicators("slack")).toEqual([
        { sessionKey: "slack:T:C1", data: '{"reaction":"hourglass"}' },
        { sessionKey: "slack:T:C2", data: "other" },
      ]);
      await store.deleteIndicator("slack:T:C1");
      await store.deleteIndicator("slack:T:none");
      expect(await store.indicators("slack")).toEqual([{ sessionKey: "slack:T:C2", data: "other" }]);
    });
  });
}
