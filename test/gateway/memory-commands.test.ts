// /memory and /forget: each user sees and removes only what the bot remembers about them, in any chat, at once.
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/gateway/commands.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { heldTool } from "../helpers/tools.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const ALICE = ["Name is Alice", "Prefers answers in Portuguese", "Working on a trip to Lisbon"];
const BOB = ["Name is Bob", "Allergic to peanuts"];

/** Alice's three memories and Bob's two, oldest first (ids sort the same way, so ties in time change nothing). */
async function seed(harness: Harness) {
  await harness.store.memories.save("alice", { add: ALICE.map((text, i) => ({ id: `mem_a${i + 1}`, text, ...(i === 1 ? { kind: "preference" } : {}) })) });
  await harness.store.memories.save("bob", { add: BOB.map((text, i) => ({ id: `mem_b${i + 1}`, text })) });
}

const texts = async (user: string) => (await h.store.memories.list(user)).map((m) => m.text);

describe("/memory", () => {
  it("lists the sender's memories numbered oldest first, with how to forget them", async () => {
    h = await startHarness();
    await seed(h);
    expect(await h.say("/memory")).toEqual([
      [
        "switchboard: Here is what I remember about you (3 memories):",
        "1. Name is Alice",
        "2. Prefers answers in Portuguese",
        "3. Working on a trip to Lisbon",
        "",
        "To make me forget one, send its number, e.g. /forget 2; /forget all forgets everything.",
      ].join("\n"),
    ]);
    expect(h.fake.calls).toHaveLength(0);
  });

  it("shows another user in the same shared chat their own memories, never the first user's", async () => {
    h = await startHarness();
    await seed(h);
    const [forAlice] = await h.say("/memory", { session: "group", user: "alice" });
    const [forBob] = await h.say("/memory", { session: "group", user: "bob" });
    expect(forBob).toBe(
      [
        "switchboard: Here is what I remember about you (2 memories):",
        "1. Name is Bob",
        "2. Allergic to peanuts",
        "",
        "To make me forget one, send its number, e.g. /forget 2; /forget all forgets everything.",
      ].join("\n"),
    );
    for (const text of ALICE) expect(forBob).not.toContain(text);
    for (const text of BOB) expect(forAlice).not.toContain(text);
  });

  it("says so kindly when nothing is remembered, and compares whole user ids", async () => {
    h = await startHarness();
    await h.store.memories.save("telegram:4242", { add: [{ id: "mem_t1", text: "Lives in Porto" }] });
    expect(await h.say("/memory", { user: "slack:T1:4242" })).toEqual(["switchboard: I don't remember anything about you yet."]);
    expect(await h.say("/memory", { user: "telegram:4242" })).toEqual([
      "switchboard: Here is what I remember about you (1 memory):\n1. Lives in Porto\n\nTo make me forget it, send /forget 1.",
    ]);
  });

  it("keeps each memory on one line", async () => {
    h = await startHarness();
    await h.store.memories.save("alice", { add: [{ id: "mem_x", text: "Likes\n\n1. fake numbering\tand tabs" }] });
    const [shown] = await h.say("/memory");
    expect(shown!.split("\n")[1]).toBe("1. Likes 1. fake numbering and tabs");
  });
});

describe("/forget", () => {
  it("removes exactly the memory with that number, as /memory shows them now", async () => {
    h = await startHarness();
    await seed(h);
    expect(await h.say("/forget 2")).toEqual(['switchboard: Done: I forgot "Prefers answers in Portuguese".']);
    expect(await texts("alice")).toEqual([ALICE[0], ALICE[2]]);
    expect(await texts("bob")).toEqual(BOB);
    // The numbers close up: what was 3 is 2 now.
    expect((await h.say("/memory"))[0]).toContain("1. Name is Alice\n2. Working on a trip to Lisbon\n");
    expect(await h.say("/forget 2")).toEqual(['switchboard: Done: I forgot "Working on a trip to Lisbon".']);
    expect(await texts("alice")).toEqual([ALICE[0]]);
    expect(h.fake.calls).toHaveLength(0);
  });

  it("forgets only the sender's own, also in a shared chat", async () => {
    h = await startHarness();
    await seed(h);
    expect(await h.say("/forget 1", { session: "group", user: "bob" })).toEqual(['switchboard: Done: I forgot "Name is Bob".']);
    expect(await texts("alice")).toEqual(ALICE);
    expect(await texts("bob")).toEqual([BOB[1]]);
  });

  it("/forget all removes all of the sender's memories and says how many", async () => {
    h = await startHarness();
    await seed(h);
    expect(await h.say("/forget all")).toEqual(["switchboard: Done: I forgot everything I remembered about you (3 memories)."]);
    expect(await texts("alice")).toEqual([]);
    expect(await texts("bob")).toEqual(BOB);
    expect(await h.say("/forget ALL")).toEqual(["switchboard: I don't remember anything about you yet. There is nothing to forget."]);
    expect(await h.say("/memory")).toEqual(["switchboard: I don't remember anything about you yet."]);
  });

  it("names the valid range for a number out of range or not a number, and forgets nothing", async () => {
    h = await startHarness();
    await seed(h);
    const range = "Send /forget followed by a number from 1 to 3 (as /memory lists them), or /forget all.";
    expect(await h.say("/forget 4")).toEqual([`switchboard: There is no memory 4. ${range}`]);
    expect(await h.say("/forget 0")).toEqual([`switchboard: There is no memory 0. ${range}`]);
    expect(await h.say("/forget")).toEqual([`switchboard: Which one? ${range}`]);
    expect(await h.say("/forget two")).toEqual([`switchboard: I can't tell which memory "two" is. ${range}`]);
    expect(await h.say("/forget -1")).toEqual([`switchboard: I can't tell which memory "-1" is. ${range}`]);
    expect(await h.say("/forget 1.5")).toEqual([`switchboard: I can't tell which memory "1.5" is. ${range}`]);
    expect(await h.say("/forget 1 2")).toEqual([`switchboard: I can't tell which memory "1 2" is. ${range}`]);
    expect(await h.say("/forget 99999999999999999999")).toEqual([expect.stringContaining(range)]);
    expect(await texts("alice")).toEqual(ALICE);
    // With one memory left the hint is that one number.
    await h.store.memories.delete("alice", ["mem_a1", "mem_a2"]);
    expect(await h.say("/forget 2")).toEqual(["switchboard: There is no memory 2. Send /forget 1 (as /memory lists them), or /forget all."]);
    expect(await h.say("/forget 1", { user: "carol" })).toEqual(["switchboard: I don't remember anything about you yet. There is nothing to forget."]);
    expect(await texts("alice")).toEqual([ALICE[2]]);
  });
});

describe("while a turn is running", () => {
  it("/memory and /forget are answered at once, for the task's owner and for anyone else in the chat", async () => {
    const search = heldTool();
    h = await startHarness({ tools: [search.tool] });
    await seed(h);
    h.fake.script(reply(toolUse("search_flights", {}, "toolu_s")), text("3 flights to Lisbon."));
    await h.gateway.submit({ sessionKey: "console:group", messageId: "m1", userId: "alice", text: "find flights" });
    await search.started;

    await h.gateway.submit({ sessionKey: "console:group", messageId: "m2", userId: "alice", text: "/memory" });
    const forAlice = await h.delivered((m) => m.text.startsWith("Here is what I remember"));
    expect(forAlice.text).toContain("3. Working on a trip to Lisbon");
    await h.gateway.submit({ sessionKey: "console:group", messageId: "m3", userId: "bob", text: "/forget 2" });
    await h.delivered((m) => m.text === 'Done: I forgot "Allergic to peanuts".');
    await h.gateway.submit({ sessionKey: "console:group", messageId: "m4", userId: "bob", text: "/memory" });
    const forBob = await h.delivered((m) => m.text.includes("(1 memory)"));
    expect(forBob.text).toContain("1. Name is Bob");
    // All of it while the tool still runs: the turn has not produced its answer.
    expect(h.seen.filter((m) => m.kind === "message")).toEqual([]);

    search.release();
    await h.gateway.idle();
    expect(await texts("alice")).toEqual(ALICE);
    expect(await texts("bob")).toEqual([BOB[0]]);
    // Nobody was told their command waits, and the commands never reached the model's history.
    expect(h.seen.filter((m) => m.text.startsWith("Got it."))).toEqual([]);
    expect(JSON.stringify(await h.store.steps.log("console:group"))).not.toContain("/memory");
  });
});

describe("in a chat held by someone else's task", () => {
  it("answers another member's /memory and /forget with their own, where other messages are refused", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    await seed(h);
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    expect(await h.say("plan a trip", { session: "group", user: "alice" })).toEqual(["skill:interview: Where to?"]);
    expect((await h.store.tasks.active("console:group"))?.ownerId).toBe("alice");

    const refused = await h.gateway.submit({ sessionKey: "console:group", messageId: "b1", userId: "bob", text: "hello?" });
    expect(refused.status).toBe("refused");
    const [list] = await h.say("/memory", { session: "group", user: "bob" });
    expect(list).toContain("1. Name is Bob\n2. Allergic to peanuts\n");
    expect(await h.say("/forget all", { session: "group", user: "bob" })).toEqual(["switchboard: Done: I forgot everything I remembered about you (2 memories)."]);
    expect(await texts("alice")).toEqual(ALICE);
    // Alice's task goes on untouched.
    expect((await h.store.tasks.active("console:group"))?.status).toBe("waiting_user");
    expect(h.fake.calls).toHaveLength(2);
  });
});

describe("parseCommand", () => {
  it("knows /memory and /forget, in Telegram's /cmd@bot form too", () => {
    expect(parseCommand("/memory", false)).toBe("memory");
    expect(parseCommand("/memory@SwitchboardBot", false)).toBe("memory");
    expect(parseCommand("/forget all", false)).toBe("forget");
    expect(parseCommand("/forget@SwitchboardBot 2", true)).toBe("forget");
    expect(parseCommand("/memorize", false)).toBeNull();
  });
});
