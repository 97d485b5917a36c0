// Contract: the daily usage counters (src/store/roles/usage.ts) the quotas read: increments add up per user or chat
// and day, a limit is told once, and the admin view finds what changed lately.
import { describe, expect, it } from "vitest";
import type { UsageDay } from "../../../src/store/store.js";
import { newRequest, type ContractContext } from "./fixtures.js";

const ANN = "telegram:ann";
const GROUP = "telegram:-100200";

export function usageContract(ctx: ContractContext): void {
  describe("daily usage", () => {
    it("counts nothing until something is added, then adds up per subject and day", async () => {
      const { store, clock } = ctx;
      expect(await store.usage.get("user", ANN, "2026-11-27")).toEqual<UsageDay>({
        scope: "user",
        subject: ANN,
        day: "2026-11-27",
        messages: 0,
        costNanoUsd: 0,
        updatedAt: 0,
      });
      await store.usage.add([{ scope: "user", subject: ANN, day: "2026-11-27", messages: 1 }]);
      const at = clock.advance(10);
      await store.usage.add([
        { scope: "user", subject: ANN, day: "2026-11-27", costNanoUsd: 2_500_000_000 },
        { scope: "user", subject: ANN, day: "2026-11-27", messages: 1, costNanoUsd: 1 },
        { scope: "chat", subject: GROUP, day: "2026-11-27", costNanoUsd: 2_500_000_001 },
      ]);
      expect(await store.usage.get("user", ANN, "2026-11-27")).toEqual<UsageDay>({
        scope: "user",
        subject: ANN,
        day: "2026-11-27",
        messages: 2,
        costNanoUsd: 2_500_000_001,
        updatedAt: at,
      });
      expect(await store.usage.get("chat", GROUP, "2026-11-27")).toMatchObject({ messages: 0, costNanoUsd: 2_500_000_001 });
      // Another day, another scope with the same name: separate counters.
      expect(await store.usage.get("user", ANN, "2026-11-28")).toMatchObject({ messages: 0, costNanoUsd: 0 });
      expect(await store.usage.get("chat", ANN, "2026-11-27")).toMatchObject({ messages: 0, costNanoUsd: 0 });
    });

    it("tells each limit once per subject and day, whether or not anything was counted", async () => {
      const { store } = ctx;
      expect(await store.usage.tell("user", ANN, "2026-11-27", "USER_DAILY_USD")).toBe(true);
      expect(await store.usage.tell("user", ANN, "2026-11-27", "USER_DAILY_USD")).toBe(false);
      // A name that contains another is its own limit.
      expect(await store.usage.tell("user", ANN, "2026-11-27", "USER_DAILY")).toBe(true);
      expect(await store.usage.tell("user", ANN, "2026-11-28", "USER_DAILY_USD")).toBe(true);
      await store.usage.add([{ scope: "user", subject: ANN, day: "2026-11-27", messages: 3 }]);
      expect(await store.usage.tell("user", ANN, "2026-11-27", "USER_DAILY_MESSAGES")).toBe(true);
      expect(await store.usage.tell("user", ANN, "2026-11-27", "USER_DAILY_MESSAGES")).toBe(false);
      // Telling counts nothing.
      expect(await store.usage.get("user", ANN, "2026-11-27")).toMatchObject({ messages: 3, costNanoUsd: 0 });
    });

    it("lists the counters of one scope changed since a time, by subject, newest day first", async () => {
      const { store, clock } = ctx;
      await store.usage.add([{ scope: "user", subject: "u:old", day: "2026-11-25", messages: 1 }]);
      const since = clock.advance(1_000);
      await store.usage.add([
        { scope: "user", subject: "u:b", day: "2026-11-26", messages: 1 },
        { scope: "user", subject: "u:b", day: "2026-11-27", messages: 2 },
        { scope: "user", subject: "u:a", day: "2026-11-27", costNanoUsd: 5 },
        { scope: "chat", subject: GROUP, day: "2026-11-27", costNanoUsd: 5 },
      ]);
      expect((await store.usage.recent("user", since)).map((u) => [u.subject, u.day, u.messages, u.costNanoUsd])).toEqual([
        ["u:a", "2026-11-27", 0, 5],
        ["u:b", "2026-11-27", 2, 0],
        ["u:b", "2026-11-26", 1, 0],
      ]);
      expect((await store.usage.recent("chat", since)).map((u) => u.subject)).toEqual([GROUP]);
    });

    it("are a user's data: exported and erased with their own chats', the group's and others' left alone", async () => {
      const { store } = ctx;
      const DM = "telegram:ann-dm";
      await store.sessions.open(DM, () => "as-dm");
      expect((await store.requests.insert(newRequest("r-dm", DM, { userId: ANN }))).status).toBe("inserted");
      await store.sessions.open(GROUP, () => "as-group");
      expect((await store.requests.insert(newRequest("r-g1", GROUP, { userId: ANN }))).status).toBe("inserted");
      expect((await store.requests.insert(newRequest("r-g2", GROUP, { userId: "telegram:bo" }))).status).toBe("inserted");
      await store.usage.add([
        { scope: "user", subject: ANN, day: "2026-11-27", messages: 2, costNanoUsd: 7 },
        { scope: "chat", subject: DM, day: "2026-11-27", costNanoUsd: 5 },
        { scope: "chat", subject: GROUP, day: "2026-11-27", costNanoUsd: 9 },
        { scope: "user", subject: "telegram:bo", day: "2026-11-27", messages: 1 },
      ]);
      expect((await store.userData.export(ANN)).usage.map((u) => [u.scope, u.subject, u.messages, u.costNanoUsd])).toEqual([
        ["user", ANN, 2, 7],
        ["chat", DM, 0, 5],
      ]);
      expect(await store.userData.erase(ANN)).toMatchObject({ usage_daily: 2 });
      expect(await store.usage.get("user", ANN, "2026-11-27")).toMatchObject({ messages: 0, costNanoUsd: 0 });
      expect(await store.usage.get("chat", GROUP, "2026-11-27")).toMatchObject({ costNanoUsd: 9 });
      expect(await store.usage.get("user", "telegram:bo", "2026-11-27")).toMatchObject({ messages: 1 });
    });
  });
}
