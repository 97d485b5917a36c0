// Contract: a conversation's owner (conversationOwner) and the owner rule of insertRequest, which decides it in the
// transaction that stores a request, so that of several members writing at once exactly one becomes the owner.
import { describe, expect, it } from "vitest";
import { ALICE, BOB, newRequest, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:-100500";
const OTHER = "telegram:-100600";

export function ownerContract(ctx: ContractContext): void {
  describe("conversationOwner", () => {
    it("is nobody, then the sender of the oldest unfinished message, then its task's owner, then nobody again", async () => {
      const { store } = ctx;
      expect(await store.requests.conversationOwner(K)).toBeNull();
      await store.requests.insert(newRequest("c1", K, { userId: BOB, kind: "command", text: "/status" }));
      expect(await store.requests.conversationOwner(K)).toBeNull();
      await store.requests.insert(newRequest("r1", K, { userId: ALICE }));
      await store.requests.insert(newRequest("r2", K, { userId: BOB }));
      await store.requests.insert(newRequest("r3", OTHER, { userId: BOB }));
      expect(await store.requests.conversationOwner(K)).toBe(ALICE);
      expect(await store.requests.conversationOwner(OTHER)).toBe(BOB);

      // r1 starts Alice's task: she owns it while it is active, whatever else waits.
      await commitStep(store, { sessionKey: K, taskCreated: { id: "t1", ownerId: ALICE, requestId: "r1" }, request: { id: "r1", status: "running", taskId: "t1" } });
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "done" }, task: { id: "t1", status: "waiting_user" } });
      expect(await store.requests.conversationOwner(K)).toBe(ALICE);
      await commitStep(store, { sessionKey: K, task: { id: "t1", status: "completed" } });
      // The task is over: r2 is the oldest unfinished message now.
      expect(await store.requests.conversationOwner(K)).toBe(BOB);
      await commitStep(store, {
        sessionKey: K,
        request: { id: "r2", status: "failed", error: "x", errorCode: "internal" },
        requestsClosed: [{ id: "c1", status: "done" }],
      });
      expect(await store.requests.conversationOwner(K)).toBeNull();
    });

    it("atDoor tells the message seen before and the conversation's owner, in one look", async () => {
      const { store } = ctx;
      expect(await store.requests.atDoor(K, "ext-r1")).toEqual({ seen: null, owner: null });
      // Stored under an owner rule (one batch on PostgreSQL, its values written in as literals): read back as sent.
      const text = "it's 'quoted' \\ $1 $$ ✓";
      const taskOptions = { expiresAt: 1_900_000_000_000, metadataJson: `{"k":"v'\\"}` };
      const stored = await store.requests.insert(newRequest("r1", K, { userId: ALICE, owner: "mine-or-free", text, taskOptions }));
      expect(stored).toMatchObject({ status: "inserted", request: { id: "r1", text, taskOptions, userId: ALICE } });
      const again = await store.requests.atDoor(K, "ext-r1");
      expect(again.owner).toBe(ALICE);
      expect(again.seen).toEqual(await store.requests.get("r1"));
      expect(again.seen).toMatchObject({ text, taskOptions, status: "pending" });
      expect(await store.requests.atDoor(K, "ext-r2")).toEqual({ seen: null, owner: ALICE });
      expect(await store.requests.atDoor(OTHER, "ext-r1")).toEqual({ seen: null, owner: null });
      await startTask(store, OTHER, { task: "t1", request: "r2", owner: BOB });
      expect(await store.requests.atDoor(OTHER, "ext-r9")).toEqual({ seen: null, owner: BOB });
    });

    it("is the owner of the active task after a restart too", async () => {
      await startTask(ctx.store, K, { task: "t1", request: "r1", owner: BOB });
      ctx.store = await ctx.backend.reopen(ctx.store, ctx.clock.now);
      expect(await ctx.store.requests.conversationOwner(K)).toBe(BOB);
    });
  });

  describe("insertRequest's owner rule", () => {
    it("mine-or-free: the first member's message is stored and makes them the owner; another member's is busy and not stored", async () => {
      const { store } = ctx;
      expect(await store.requests.insert(newRequest("r1", K, { userId: ALICE, owner: "mine-or-free" }))).toMatchObject({ status: "inserted" });
      expect(await store.requests.insert(newRequest("r2", K, { userId: BOB, owner: "mine-or-free" }))).toEqual({ status: "busy", ownerId: ALICE });
      expect(await store.requests.insert(newRequest("r3", K, { userId: ALICE, owner: "mine-or-free", kind: "command", text: "/cancel" }))).toMatchObject({
        status: "inserted",
      });
      expect((await store.requests.ofSession(K)).map((r) => r.id)).toEqual(["r1", "r3"]);
      expect(await store.requests.get("r2")).toBeNull();
    });

    it("mine: stored only from the owner, and never into a conversation nobody owns", async () => {
      const { store } = ctx;
      expect(await store.requests.insert(newRequest("r1", K, { userId: ALICE, owner: "mine" }))).toEqual({ status: "busy", ownerId: null });
      await startTask(store, K, { task: "t1", request: "r2", owner: ALICE });
      expect(await store.requests.insert(newRequest("r3", K, { userId: BOB, owner: "mine" }))).toEqual({ status: "busy", ownerId: ALICE });
      expect(await store.requests.insert(newRequest("r4", K, { userId: ALICE, owner: "mine" }))).toMatchObject({ status: "inserted" });
      expect((await store.requests.ofSession(K)).map((r) => r.id)).toEqual(["r2", "r4"]);
    });

    it("of many members writing at once, exactly one is stored and the others are told who owns the conversation", async () => {
      const { store } = ctx;
      const users = Array.from({ length: 8 }, (_, i) => `telegram:member${i}`);
      const results = await Promise.all(users.map((userId, i) => store.requests.insert(newRequest(`r${i}`, K, { userId, owner: "mine-or-free" }))));
      const stored = results.flatMap((r) => (r.status === "inserted" ? [r.request.userId] : []));
      expect(stored).toHaveLength(1);
      expect(results.filter((r) => r.status === "busy")).toEqual(Array(7).fill({ status: "busy", ownerId: stored[0] }));
      expect(await store.requests.conversationOwner(K)).toBe(stored[0]);
      expect(await store.requests.ofSession(K)).toHaveLength(1);
    });

    it("a message delivered again is its duplicate, not busy, and a refused idempotency key stays unused", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { userId: ALICE, owner: "mine-or-free" }));
      // Stored before the rule existed: a second delivery of it finds it.
      await store.requests.insert(newRequest("r2", K, { userId: BOB }));
      expect(await store.requests.insert(newRequest("r2-again", K, { userId: BOB, externalId: "ext-r2", owner: "mine-or-free" }))).toMatchObject({
        status: "duplicate",
        request: { id: "r2" },
      });
      const keyed = newRequest("r3", K, { userId: BOB, owner: "mine-or-free", idempotency: { key: "k1", fingerprint: "fp" } });
      expect(await store.requests.insert(keyed)).toEqual({ status: "busy", ownerId: ALICE });
      expect(await store.requests.idempotency(BOB, "k1")).toBeNull();
    });
  });
}
