// Contract: the quotas' holds (src/store/roles/usage.ts). A model call's estimated cost is held on its counters while
// it runs, so calls started together see each other; a hold is settled to the real cost, released, or lapses at its
// expiry (what a process that died mid-call leaves behind). And a request a quota refused is recorded once.
import { describe, expect, it } from "vitest";
import type { HoldCounter, UsageHold } from "../../../src/store/store.js";
import type { ContractContext } from "./fixtures.js";

const ANN = "telegram:ann";
const GROUP = "telegram:-100200";
const DAY = "2026-11-27";
const USD = 1_000_000_000;

const counters = (userLimit: number, chatLimit = 0): HoldCounter[] => [
  { scope: "user", subject: ANN, day: DAY, limitNanoUsd: userLimit },
  { scope: "chat", subject: GROUP, day: DAY, limitNanoUsd: chatLimit },
];
const hold = (id: string, costNanoUsd: number, ttlMs: number, on: HoldCounter[]): UsageHold => ({ id, costNanoUsd, ttlMs, counters: on });

export function usageHoldsContract(ctx: ContractContext): void {
  describe("usage holds", () => {
    it("holds on every counter, refuses once spent plus held reaches a limit, and names the counter", async () => {
      const { store } = ctx;
      const until = 60_000;
      await store.usage.add([{ scope: "user", subject: ANN, day: DAY, costNanoUsd: USD / 2 }]);
      expect(await store.usage.hold(hold("h1", USD / 4, until, counters(USD)))).toEqual({ status: "held" });
      expect(await store.usage.held("user", ANN, DAY)).toBe(USD / 4);
      expect(await store.usage.held("chat", GROUP, DAY)).toBe(USD / 4);
      // 0.5 spent + 0.25 held < 1: one more fits; then 0.5 + 0.5 = 1 is the limit.
      expect(await store.usage.hold(hold("h2", USD / 4, until, counters(USD)))).toEqual({ status: "held" });
      expect(await store.usage.hold(hold("h3", 1, until, counters(USD)))).toEqual({ status: "over", scope: "user", subject: ANN, day: DAY, usedNanoUsd: USD });
      // The chat's own limit is checked too, and a counter without a limit never refuses.
      expect(await store.usage.hold(hold("h4", 1, until, counters(0, USD / 2)))).toEqual({
        status: "over",
        scope: "chat",
        subject: GROUP,
        day: DAY,
        usedNanoUsd: USD / 2,
      });
      expect(await store.usage.hold(hold("h5", 1, until, counters(0, 0)))).toEqual({ status: "held" });
      // Holds are not spending.
      expect(await store.usage.get("user", ANN, DAY)).toMatchObject({ costNanoUsd: USD / 2 });
    });

    it("settles a hold to the real cost in one step, and releases one with nothing counted", async () => {
      const { store } = ctx;
      const until = 60_000;
      await store.usage.hold(hold("h1", USD / 2, until, counters(USD)));
      await store.usage.hold(hold("h2", USD / 2, until, counters(USD)));
      await store.usage.settle("h1", [
        { scope: "user", subject: ANN, day: DAY, costNanoUsd: 3 },
        { scope: "chat", subject: GROUP, day: DAY, costNanoUsd: 3 },
      ]);
      expect(await store.usage.held("user", ANN, DAY)).toBe(USD / 2);
      expect(await store.usage.get("user", ANN, DAY)).toMatchObject({ costNanoUsd: 3 });
      expect(await store.usage.get("chat", GROUP, DAY)).toMatchObject({ costNanoUsd: 3 });
      await store.usage.release("h2");
      expect(await store.usage.held("user", ANN, DAY)).toBe(0);
      expect(await store.usage.get("user", ANN, DAY)).toMatchObject({ costNanoUsd: 3 });
      // A settle after the hold lapsed still counts the cost; a second release is harmless.
      await store.usage.settle("gone", [{ scope: "user", subject: ANN, day: DAY, costNanoUsd: 4 }]);
      await store.usage.release("h2");
      expect(await store.usage.get("user", ANN, DAY)).toMatchObject({ costNanoUsd: 7 });
    });

    it("lets a hold nobody settled lapse at its expiry, so a process that died mid-call blocks nothing for long", async () => {
      const { store, clock } = ctx;
      expect(await store.usage.hold(hold("dead", USD, 60_000, counters(USD)))).toEqual({ status: "held" });
      expect((await store.usage.hold(hold("next", 1, 60_000, counters(USD)))).status).toBe("over");
      clock.advance(60_000);
      expect(await store.usage.held("user", ANN, DAY)).toBe(0);
      expect(await store.usage.hold(hold("next", 1, 60_000, counters(USD)))).toEqual({ status: "held" });
    });

    it("admits exactly as many of many holds racing as fit under the limit", async () => {
      const { store } = ctx;
      const until = 60_000;
      await store.usage.add([{ scope: "user", subject: ANN, day: DAY, costNanoUsd: USD / 10 }]);
      // 0.1 spent; each holds 0.3: the first three start (0.1, 0.4, 0.7 are under 1), the rest are refused.
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.usage.hold(hold(`race-${i}`, (3 * USD) / 10, until, counters(USD)))));
      expect(results.filter((r) => r.status === "held")).toHaveLength(4 - 1);
      expect(await store.usage.held("user", ANN, DAY)).toBe((9 * USD) / 10);
    });

    it("records a refused request once, with its limit and reset", async () => {
      const { store, clock } = ctx;
      expect(await store.usage.refusal("r1")).toBeNull();
      const at = clock.now();
      await store.usage.refused({ requestId: "r1", sessionKey: "http:s1", userId: "http:alice", limit: "USER_DAILY_USD", resetsAt: 1_800_000_000_000 });
      await store.usage.refused({ requestId: "r1", sessionKey: "http:s1", userId: "http:alice", limit: "CHAT_DAILY_USD", resetsAt: 1 });
      expect(await store.usage.refusal("r1")).toEqual({
        requestId: "r1",
        sessionKey: "http:s1",
        userId: "http:alice",
        limit: "USER_DAILY_USD",
        resetsAt: 1_800_000_000_000,
        createdAt: at,
      });
    });
  });
}
