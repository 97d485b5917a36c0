// Contract: the outbox (delivery journal), delivered chunks and provider indicators.
import { describe, expect, it } from "vitest";
import { outbound, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";
const OTHER = "slack:T:C";

export function outboxContract(ctx: ContractContext): void {
  describe("outbox", () => {
    it("pendingOutbound lists undelivered replies in commit order, of all sessions or one", async () => {
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o-b"), outbound("o-a")] });
      clock.advance(10);
      await commitStep(store, { sessionKey: OTHER, outbound: [outbound("o-c")] });
      await commitStep(store, { sessionKey: K, outbound: [outbound("o-d")] });
      expect((await store.outbox.pending()).map((o) => o.id)).toEqual(["o-b", "o-a", "o-c", "o-d"]);
      expect((await store.outbox.pending(K)).map((o) => o.id)).toEqual(["o-b", "o-a", "o-d"]);
      expect((await store.outbox.pending(OTHER)).map((o) => o.id)).toEqual(["o-c"]);
    });

    it("an outbound record reads back as written, with its session and time", async () => {
      const { store, clock } = ctx;
      const input = outbound("o1", { approvalId: "a1", requestId: "r1", taskId: "t1", agent: "skill:research", depth: 2, text: "Approve?", kind: "notice" });
      await commitStep(store, { sessionKey: K, outbound: [input] });
      const expected = { ...input, sessionKey: K, createdAt: clock.t };
      expect(await store.outbox.pending(K)).toEqual([expected]);
      expect(await store.outbox.ofRequest("r1")).toEqual([expected]);
    });

    it("an outbound without approval reads back with approvalId null", async () => {
      await commitStep(ctx.store, { sessionKey: K, outbound: [outbound("o1", { kind: "error" })] });
      expect((await ctx.store.outbox.pending(K))[0]).toMatchObject({ approvalId: null, kind: "error", requestId: null, taskId: null });
    });

    it("markDelivered takes a reply out of pending; markUndelivered puts it back in its place", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2"), outbound("o3")] });
      await store.outbox.markDelivered("o1");
      await store.outbox.markDelivered("o2");
      expect((await store.outbox.pending(K)).map((o) => o.id)).toEqual(["o3"]);
      await store.outbox.markUndelivered("o1");
      expect((await store.outbox.pending(K)).map((o) => o.id)).toEqual(["o1", "o3"]);
    });

    it("markUndeliverable succeeds once, keeps the first reason, and the reply is never pending again", async () => {
      const { store, clock } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1"), outbound("o2")] });
      await commitStep(store, { sessionKey: OTHER, outbound: [outbound("o3")] });
      const failedAt = clock.advance(500);
      expect(await store.outbox.markUndeliverable("o1", "bot was blocked by the user")).toBe(true);
      clock.advance(500);
      expect(await store.outbox.markUndeliverable("o1", "chat not found")).toBe(false);
      await store.outbox.markUndelivered("o1");
      expect((await store.outbox.pending()).map((o) => o.id)).toEqual(["o2", "o3"]);
      const [record, ...rest] = await store.outbox.undeliverable(K);
      expect(rest).toEqual([]);
      expect(record).toMatchObject({ id: "o1", sessionKey: K, failure: "bot was blocked by the user", failedAt });
      expect(await store.outbox.undeliverable(OTHER)).toEqual([]);
    });

    it("a delivered reply can still be marked undeliverable (its last chunk was refused)", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1")] });
      await store.outbox.markDelivered("o1");
      expect(await store.outbox.markUndeliverable("o1", "message is too long")).toBe(true);
      expect((await store.outbox.undeliverable(K)).map((o) => o.id)).toEqual(["o1"]);
      expect(await store.outbox.markUndeliverable("missing", "x")).toBe(false);
    });

    it("outboundFor lists every reply of a request in order, delivered or not", async () => {
      const { store } = ctx;
      await commitStep(store, { sessionKey: K, outbound: [outbound("o2", { requestId: "r1" }), outbound("o1", { requestId: "r2" })] });
      await commitStep(store, { sessionKey: K, outbound: [outbound("o3", { requestId: "r1" })] });
      await store.outbox.markDelivered("o2");
      await store.outbox.markUndeliverable("o3", "gone");
      expect((await store.outbox.ofRequest("r1")).map((o) => o.id)).toEqual(["o2", "o3"]);
      expect(await store.outbox.ofRequest("r-none")).toEqual([]);
    });
  });

  describe("delivery chunks", () => {
    it("deliveredChunks lists recorded chunks in ascending order, per outbound message", async () => {
      const { store } = ctx;
      expect(await store.outbox.deliveredChunks("o1")).toEqual([]);
      await store.outbox.recordChunk("o1", 2, "msg-12");
      await store.outbox.recordChunk("o1", 0, "msg-10");
      await store.outbox.recordChunk("o2", 1, "msg-20");
      expect(await store.outbox.deliveredChunks("o1")).toEqual([0, 2]);
      expect(await store.outbox.deliveredChunks("o2")).toEqual([1]);
    });

    it("recording the same chunk again is harmless", async () => {
      const { store } = ctx;
      await store.outbox.recordChunk("o1", 0, "msg-10");
      await store.outbox.recordChunk("o1", 0, "msg-10-again");
      expect(await store.outbox.deliveredChunks("o1")).toEqual([0]);
    });
  });

  describe("indicators", () => {
    it("indicators lists one provider's indicators, oldest first", async () => {
      const { store, clock } = ctx;
      await store.indicators.save("slack:T:C2", "b");
      clock.advance(10);
      await store.indicators.save("slack:T:C1", "a");
      await store.indicators.save("telegram:100", "t");
      await store.indicators.save("slackware:x", "not slack");
      expect(await store.indicators.list("slack")).toEqual([
        { sessionKey: "slack:T:C2", data: "b" },
        { sessionKey: "slack:T:C1", data: "a" },
      ]);
      expect(await store.indicators.list("telegram")).toEqual([{ sessionKey: "telegram:100", data: "t" }]);
      expect(await store.indicators.list("http")).toEqual([]);
    });

    it("saveIndicator replaces the session's indicator; deleteIndicator removes only that one", async () => {
      const { store } = ctx;
      await store.indicators.save("slack:T:C1", '{"reaction":"eyes"}');
      await store.indicators.save("slack:T:C2", "other");
      await store.indicators.save("slack:T:C1", '{"reaction":"hourglass"}');
      expect(await store.indicators.list("slack")).toEqual([
        { sessionKey: "slack:T:C1", data: '{"reaction":"hourglass"}' },
        { sessionKey: "slack:T:C2", data: "other" },
      ]);
      await store.indicators.delete("slack:T:C1");
      await store.indicators.delete("slack:T:none");
      expect(await store.indicators.list("slack")).toEqual([{ sessionKey: "slack:T:C2", data: "other" }]);
    });
  });
}
