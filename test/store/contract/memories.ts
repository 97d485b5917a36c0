// Contract: a user's long-term memories (per user identity, never shared) and their full-text search.
import { describe, expect, it } from "vitest";
import type { NewMemory } from "../../../src/store/store.js";
import { ALICE, BOB, freshAgentSessionId, type ContractContext } from "./fixtures.js";

const K = "telegram:100";

const texts = (list: Array<{ text: string }>) => list.map((m) => m.text);

export function memoryContract(ctx: ContractContext): void {
  /** Saves each memory in its own call, a second apart, so each is newer than the one before. */
  async function remember(userId: string, ...memories: Array<NewMemory | string>): Promise<void> {
    let n = (await ctx.store.memories.list(userId)).length;
    for (const m of memories) {
      ctx.clock.advance(1_000);
      await ctx.store.memories.save(userId, { add: [typeof m === "string" ? { id: `${userId}-m${++n}`, text: m } : m] });
    }
  }

  describe("memories", () => {
    it("lists a user's memories oldest first, as written", async () => {
      const { store, clock } = ctx;
      clock.advance(1_000);
      await store.memories.save(ALICE, {
        add: [
          { id: "m1", text: "Prefers tea", kind: "preference" },
          { id: "m2", text: "Works on Switchboard" },
        ],
      });
      const t1 = clock.t;
      clock.advance(1_000);
      await store.memories.save(ALICE, { add: [{ id: "m3", text: "Lives in Lisbon", kind: "identity" }] });
      expect(await store.memories.list(ALICE)).toEqual([
        { id: "m1", userId: ALICE, text: "Prefers tea", kind: "preference", taskId: null, createdAt: t1, updatedAt: t1 },
        { id: "m2", userId: ALICE, text: "Works on Switchboard", kind: null, taskId: null, createdAt: t1, updatedAt: t1 },
        { id: "m3", userId: ALICE, text: "Lives in Lisbon", kind: "identity", taskId: null, createdAt: clock.t, updatedAt: clock.t },
      ]);
      expect(await store.memories.list(BOB)).toEqual([]);
    });

    it("adds and removes in one call; a known id is updated in place (created kept, updated moved)", async () => {
      const { store, clock } = ctx;
      await remember(ALICE, { id: "m1", text: "Timezone is Europe/Lisbon" }, { id: "m2", text: "Has a cat" });
      const created = (await store.memories.list(ALICE))[0]!.createdAt;
      clock.advance(5_000);
      await store.memories.save(ALICE, {
        remove: ["m2"],
        add: [
          { id: "m1", text: "Timezone is Asia/Tokyo", kind: "identity" },
          { id: "m3", text: "Has a dog" },
        ],
      });
      const after = await store.memories.list(ALICE);
      expect(after.map((m) => [m.id, m.text, m.kind])).toEqual([
        ["m1", "Timezone is Asia/Tokyo", "identity"],
        ["m3", "Has a dog", null],
      ]);
      expect(after[0]).toMatchObject({ createdAt: created, updatedAt: clock.t });
      // The search index follows the update and the removal.
      expect(texts(await store.memories.search(ALICE, "Lisbon", 5))).toEqual([]);
      expect(texts(await store.memories.search(ALICE, "Tokyo", 5))).toEqual(["Timezone is Asia/Tokyo"]);
      expect(texts(await store.memories.search(ALICE, "cat", 5))).toEqual([]);
    });

    it("keeps users apart: another user never sees, finds, deletes or overwrites a memory, even by its id", async () => {
      const { store } = ctx;
      await remember(ALICE, { id: "a1", text: "Alice's timezone is Europe/Lisbon" }, { id: "a2", text: "Alice likes jazz" });
      await remember(BOB, { id: "b1", text: "Bob's timezone is America/Chicago" });
      expect((await store.memories.list(BOB)).map((m) => m.id)).toEqual(["b1"]);
      expect((await store.memories.search(BOB, "timezone jazz Lisbon", 10)).map((m) => m.id)).toEqual(["b1"]);
      expect((await store.memories.search(BOB, "", 10)).map((m) => m.id)).toEqual(["b1"]);
      expect(await store.memories.delete(BOB, ["a1", "a2"])).toBe(0);
      await store.memories.save(BOB, { remove: ["a1"], add: [{ id: "a2", text: "Bob took this id" }] });
      expect(texts(await store.memories.list(ALICE))).toEqual(["Alice's timezone is Europe/Lisbon", "Alice likes jazz"]);
      expect((await store.memories.list(BOB)).map((m) => m.id)).toEqual(["b1"]);
      expect(await store.memories.delete(BOB)).toBe(1);
      expect(await store.memories.list(ALICE)).toHaveLength(2);
    });

    it("deleteMemories deletes the given ids, or all of the user's, and says how many went", async () => {
      const { store } = ctx;
      await remember(ALICE, { id: "m1", text: "one" }, { id: "m2", text: "two" }, { id: "m3", text: "three" });
      expect(await store.memories.delete(ALICE, ["m2", "missing"])).toBe(1);
      expect(await store.memories.delete(ALICE, [])).toBe(0);
      expect(texts(await store.memories.list(ALICE))).toEqual(["one", "three"]);
      expect(await store.memories.delete(ALICE)).toBe(2);
      expect(await store.memories.list(ALICE)).toEqual([]);
      expect(await store.memories.search(ALICE, "one three", 5)).toEqual([]);
    });

    it("usage given with the changes counts toward the session's totals and its budget since /reset", async () => {
      const { store } = ctx;
      await store.sessions.open(K, freshAgentSessionId);
      await store.memories.save(ALICE, {
        add: [{ id: "m1", text: "Prefers short answers" }],
        usage: { sessionKey: K, inputTokens: 100, outputTokens: 20, cacheReadTokens: 3, cacheWriteTokens: 2, costNanoUsd: 0 },
      });
      expect(await store.sessions.usage(K)).toMatchObject({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 3, cacheWriteTokens: 2, sinceReset: 125 });
    });
  });

  describe("searchMemories", () => {
    const facts = [
      "Has two cats named Miso and Tofu",
      "Works as a nurse in Porto",
      "My timezone is Europe/Lisbon",
      "Allergic to peanuts",
      "Prefers answers in Portuguese",
    ];

    it("finds the memory a query is about first, among unrelated facts", async () => {
      await remember(ALICE, ...facts);
      const found = await ctx.store.memories.search(ALICE, "What timezone am I in?", 3);
      expect(found[0]?.text).toBe("My timezone is Europe/Lisbon");
      expect(texts(found)).not.toContain("Allergic to peanuts");
    });

    it("matches whole words case-insensitively, through punctuation", async () => {
      await remember(ALICE, ...facts);
      expect(texts(await ctx.store.memories.search(ALICE, "LISBON", 5))).toEqual(["My timezone is Europe/Lisbon"]);
      expect(texts(await ctx.store.memories.search(ALICE, "europe", 5))).toEqual(["My timezone is Europe/Lisbon"]);
      expect(texts(await ctx.store.memories.search(ALICE, "miso?", 5))).toEqual(["Has two cats named Miso and Tofu"]);
    });

    it("ranks a memory matching more of the query's words above one matching fewer, however old", async () => {
      await remember(ALICE, "Coffee: flat white, no sugar", "Drinks coffee", "Likes sugar in tea");
      expect(texts(await ctx.store.memories.search(ALICE, "coffee with sugar", 3))[0]).toBe("Coffee: flat white, no sugar");
    });

    it("gives ties to the most recently updated memory", async () => {
      const { store, clock } = ctx;
      await remember(ALICE, { id: "m1", text: "Favourite colour: blue" }, { id: "m2", text: "Favourite colour: green" }, "Unrelated fact");
      expect(texts(await store.memories.search(ALICE, "favourite colour", 5))).toEqual(["Favourite colour: green", "Favourite colour: blue"]);
      clock.advance(1_000);
      await store.memories.save(ALICE, { add: [{ id: "m1", text: "Favourite colour: teal" }] });
      expect(texts(await store.memories.search(ALICE, "favourite colour", 5))).toEqual(["Favourite colour: teal", "Favourite colour: green"]);
    });

    it("returns at most `limit` memories, and only ones that match", async () => {
      await remember(ALICE, "note alpha", "note beta", "note gamma", "something else");
      expect(await ctx.store.memories.search(ALICE, "note", 2)).toHaveLength(2);
      expect(texts(await ctx.store.memories.search(ALICE, "note", 10)).sort()).toEqual(["note alpha", "note beta", "note gamma"]);
      expect(await ctx.store.memories.search(ALICE, "zebra", 10)).toEqual([]);
    });

    it("an empty or wordless query gives the most recently updated memories", async () => {
      const { store } = ctx;
      await remember(ALICE, "first", "second", "third", "fourth");
      for (const query of ["", "   ", "?!", "🙂🎉", "*", "--"]) {
        expect(texts(await store.memories.search(ALICE, query, 3)), JSON.stringify(query)).toEqual(["fourth", "third", "second"]);
      }
    });

    it("never reads the query as search syntax: hostile strings neither throw nor change anything", async () => {
      const { store } = ctx;
      await remember(ALICE, ...facts, "Said AND twice", "NEAR the sea");
      const hostile = [
        '"',
        '""',
        "*",
        "timezone*",
        "NEAR(",
        "NEAR(a b, 2)",
        "AND",
        "OR",
        "NOT",
        "a AND",
        "-",
        "-timezone",
        "^timezone",
        "text:timezone",
        "{text}: x",
        "'); DROP TABLE memories;--",
        "\\",
        "':* & !",
        "timezone | (",
        "🙂 timezone 🎉",
        "é\u0301 ́",
        "\u0000",
        "x".repeat(10_000),
        "timezone ".repeat(1_200),
        Array.from({ length: 2_000 }, (_, i) => `w${i}`).join(" "),
      ];
      for (const query of hostile) {
        const found = await store.memories.search(ALICE, query, 5);
        expect(found.length, query.slice(0, 40)).toBeLessThanOrEqual(5);
      }
      expect(texts(await store.memories.search(ALICE, "NEAR(", 5))).toEqual(["NEAR the sea"]);
      expect(texts(await store.memories.search(ALICE, "AND", 5)).sort()).toEqual(["Has two cats named Miso and Tofu", "Said AND twice"]);
      expect(texts(await store.memories.search(ALICE, "-timezone", 5))).toEqual(["My timezone is Europe/Lisbon"]);
      expect(await store.memories.list(ALICE)).toHaveLength(facts.length + 2);
    });
  });
}
