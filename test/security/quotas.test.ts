// The daily quotas (USER_DAILY_MESSAGES, USER_DAILY_USD, CHAT_DAILY_USD, QUOTA_EXEMPT_USERS) through the gateway, the
// real runtime and SDK, and the strict fake Messages API, on a clock moved by hand: a refused message starts no
// task, the user is told which limit and when it resets once, a task crossing a limit mid-way ends cleanly, and the
// counters start again at the user's midnight.
import { afterEach, describe, expect, it } from "vitest";
import { PriceTable } from "../../src/llm/prices.js";
import { snapshot, usageView } from "../../src/admin/report.js";
import { chatOf, dayIn, type QuotaLimit, type QuotaPlace, type QuotaSettings } from "../../src/runtime/quota.js";
import { reply, text, toolUse, type FakeBlock, type FakeReply } from "../fakes/anthropic/server.js";
import { expectSettled } from "../helpers/consistent.js";
import { agentFile, startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

// 1000 USD per million tokens in and out: a reply of `tokens` tokens costs tokens / 1000 USD.
const PRICE = { input: 1000, output: 1000, cacheWrite: 1000, cacheRead: 1000 };
const PRICES = new PriceTable({ "claude-test": PRICE, "claude-memory-test": PRICE });
const costing = (tokens: number, ...blocks: FakeBlock[]): FakeReply => ({ ...reply(...blocks), usage: { input_tokens: tokens / 2, output_tokens: tokens / 2 } });

// Friday 27 November 2026, 20:00 UTC: 15:00 in New York, 21:00 in Berlin.
const START = Date.UTC(2026, 10, 27, 20, 0);
const ZONES: Record<string, string> = { ana: "America/New_York", ben: "Europe/Berlin" };

async function start(settings: Partial<QuotaSettings>, files: Record<string, string> = {}) {
  let now = START;
  const refusals: Array<[QuotaLimit, QuotaPlace]> = [];
  h = await startHarness({
    files,
    prices: PRICES,
    quotas: { settings, now: () => now, zoneOf: async (user) => ZONES[user] ?? null, refused: (limit, place) => refusals.push([limit, place]) },
  });
  return { refusals, advanceTo: (t: number) => void (now = t), now: () => now };
}

describe("the days quotas count", () => {
  it("end at the user's midnight in their zone", () => {
    expect(dayIn(START, "America/New_York")).toEqual({ day: "2026-11-27", zone: "America/New_York", resetsAt: Date.UTC(2026, 10, 28, 5, 0) });
    expect(dayIn(START, "Europe/Berlin")).toEqual({ day: "2026-11-27", zone: "Europe/Berlin", resetsAt: Date.UTC(2026, 10, 27, 23, 0) });
    expect(dayIn(Date.UTC(2026, 10, 27, 23, 30), "Europe/Berlin").day).toBe("2026-11-28");
    // The night the clocks go back in New York (1 November 2026) is 25 hours long.
    expect(dayIn(Date.UTC(2026, 9, 31, 12), "America/New_York").resetsAt).toBe(Date.UTC(2026, 10, 1, 4));
    expect(dayIn(Date.UTC(2026, 10, 1, 12), "America/New_York").resetsAt).toBe(Date.UTC(2026, 10, 2, 5));
  });
});

describe("the chat a limit counts", () => {
  it("is a Slack thread's channel, and any other conversation itself", () => {
    expect(chatOf("slack:T1:C2:thread:1700000000.000100")).toBe("slack:T1:C2");
    expect(chatOf("slack:T1:C2")).toBe("slack:T1:C2");
    expect(chatOf("telegram:-1001234")).toBe("telegram:-1001234");
    expect(chatOf("http:s-1")).toBe("http:s-1");
  });
});

describe("USER_DAILY_MESSAGES in a group", () => {
  it("limits each member: told once with the reset in their zone, then silence, and a new day at their midnight", async () => {
    const { refusals, advanceTo } = await start({ userDailyMessages: 2 });
    h.fake.fallback(() => text("ok"));
    const group = { session: "group" };
    expect(await h.say("one", { ...group, user: "ana" })).toEqual(["main: ok"]);
    expect(await h.say("two", { ...group, user: "ana" })).toEqual(["main: ok"]);
    expect(await h.say("three", { ...group, user: "ana" })).toEqual([
      "switchboard: You've sent 2 messages today, the daily limit (USER_DAILY_MESSAGES), so I can't take more. It resets at 00:00 on Sat 28 Nov (America/New_York), in 9 h 0 min.",
    ]);
    // Told once: the next one is refused without a word, and reaches no model.
    expect(await h.say("four", { ...group, user: "ana" })).toEqual([]);
    expect(h.fake.accepted()).toHaveLength(2);
    // Ben, in the same group, has his own count.
    expect(await h.say("hello", { ...group, user: "ben" })).toEqual(["main: ok"]);
    expect(await h.say("again", { ...group, user: "ben" })).toEqual(["main: ok"]);
    expect((await h.say("more", { ...group, user: "ben" }))[0]).toMatch(/resets at 00:00 on Sat 28 Nov \(Europe\/Berlin\), in 3 h 0 min\.$/);
    expect(refusals).toEqual([
      ["USER_DAILY_MESSAGES", "door"],
      ["USER_DAILY_MESSAGES", "door"],
      ["USER_DAILY_MESSAGES", "door"],
    ]);
    // The refused requests are ended, failed, saying why (what the HTTP API answers with).
    const failed = (await h.store.requests.ofSession("console:group")).filter((r) => r.status === "failed");
    expect(failed.map((r) => r.text)).toEqual(["three", "four", "more"]);
    expect(failed[1]!.error).toMatch(/^You've sent 2 messages today/);

    // Midnight in Berlin: Ben's new day; Ana's is still the old one until New York's midnight.
    advanceTo(Date.UTC(2026, 10, 27, 23, 0));
    expect(await h.say("morning", { ...group, user: "ben" })).toEqual(["main: ok"]);
    expect(await h.say("five", { ...group, user: "ana" })).toEqual([]);
    advanceTo(Date.UTC(2026, 10, 28, 5, 0));
    expect(await h.say("six", { ...group, user: "ana" })).toEqual(["main: ok"]);
  });

  it("never limits an exempt user, and /usage shows the day's use against the limits without counting", async () => {
    await start({ userDailyMessages: 1, userDailyUsd: 5, exemptUsers: ["ben"] });
    h.fake.fallback(() => costing(1000, { type: "text", text: "ok" }));
    for (let i = 0; i < 3; i++) expect(await h.say(`hi ${i}`, { user: "ben" })).toEqual(["main: ok"]);
    expect(await h.say("hi", { user: "ana" })).toEqual(["main: ok"]);
    expect(await h.say("/usage", { user: "ana" })).toEqual([
      [
        "switchboard: Your use today (2026-11-27, America/New_York):",
        "• messages: 1 of 1",
        "• cost: $1.00 of $5.00",
        "This chat today (2026-11-27, UTC): $1.00 (no limit).",
        "Your limits reset at 00:00 on Sat 28 Nov (America/New_York), in 9 h 0 min.",
      ].join("\n"),
    ]);
    expect((await h.say("/usage", { user: "ben" }))[0]).toMatch(/messages: 0 of 1\n• cost: \$0\.0000 of \$5\.00\n[^]*You are exempt/);
    expect((await h.say("more", { user: "ana" }))[0]).toMatch(/USER_DAILY_MESSAGES/);
  });
});

describe("a task that crosses USER_DAILY_USD mid-way", () => {
  it("a child agent's step finishes, the next call is refused: the task ends with the limit as its status", async () => {
    const { refusals } = await start({ userDailyUsd: 1 }, agentFile("scout", "Scout."));
    h.fake.script(
      costing(400, toolUse("use_agent", { name: "scout", message: "look around" })),
      costing(700, toolUse("call_agent", { agent: "scout", message: "dig deeper" })),
      // The callee's call and everything after: never asked for ($1.10 spent by then).
      text("deeper"),
      text("found it"),
      text("done"),
    );
    const shown = await h.say("go", { user: "ana" });
    expect(shown).toEqual([
      "switchboard: I had to stop before finishing. You've used $1.10 of model time today, the daily limit of $1.00 per user (USER_DAILY_USD). It resets at 00:00 on Sat 28 Nov (America/New_York), in 9 h 0 min.",
    ]);
    expect(h.fake.accepted()).toHaveLength(2);
    expect(refusals).toEqual([["USER_DAILY_USD", "call"]]);
    expect((await h.store.tasks.ofSession("console:t")).map((t) => [t.status, t.error])).toEqual([["failed", expect.stringMatching(/USER_DAILY_USD/)]]);
    const closed = (await h.store.steps.log("console:t"))
      .filter((e) => e.type === "agent_session_complete")
      .map((e) => e.payload as { agent_name: string; result: string });
    expect(closed.map((c) => [c.agent_name, c.result])).toEqual([["agent:scout", "stopped: USER_DAILY_USD reached"]]);
    await expectSettled(h.store, "console:t");
    expect(h.fake.rejected()).toEqual([]);

    // She was told with the task's end: her next message is refused silently, at the door.
    expect(await h.say("and now?", { user: "ana" })).toEqual([]);
    expect(refusals.at(-1)).toEqual(["USER_DAILY_USD", "door"]);
    expect(h.fake.accepted()).toHaveLength(2);
  });
});

describe("CHAT_DAILY_USD", () => {
  it("limits the group as a whole, whoever spent it; the chat is told once", async () => {
    await start({ chatDailyUsd: 1 });
    h.fake.fallback(() => costing(1200, { type: "text", text: "ok" }));
    const group = { session: "group" };
    expect(await h.say("plan our trip", { ...group, user: "ana" })).toEqual(["main: ok"]);
    expect(await h.say("and the hotel?", { ...group, user: "ben" })).toEqual([
      "switchboard: This chat has used $1.20 of model time today, its daily limit of $1.00 (CHAT_DAILY_USD). It resets at 00:00 on Sat 28 Nov (UTC), in 4 h 0 min.",
    ]);
    expect(await h.say("hello?", { ...group, user: "cy" })).toEqual([]);
    // Another chat is not limited by this one.
    expect(await h.say("hi", { session: "dm", user: "ben" })).toEqual(["main: ok"]);
    expect(h.fake.accepted()).toHaveLength(2);
  });
});

describe("the admin view", () => {
  it("shows each user's use on their own today, the biggest spender first", async () => {
    const { advanceTo, now } = await start({ userDailyUsd: 10 });
    h.fake.fallback(() => costing(500, { type: "text", text: "ok" }));
    await h.say("a", { user: "ben", session: "group" });
    await h.say("b", { user: "ana", session: "group" });
    await h.say("c", { user: "ana", session: "dm" });
    // 23:30 UTC: past midnight in Berlin (Ben's new day, nothing used yet), still the 27th in New York.
    advanceTo(Date.UTC(2026, 10, 27, 23, 30));
    await h.say("d", { user: "ben", session: "group" });
    const view = await usageView(h.store, { now: Date.now() });
    expect(view.users.map((u) => [u.user, u.day, u.messages, u.costUsd])).toEqual([
      ["ana", "2026-11-27", 2, 1],
      ["ben", "2026-11-28", 1, 0.5],
    ]);
    expect((await snapshot(h.store, { limit: 10, stuckAfterMs: 60_000 })).usage).toEqual(view.users);
    expect(now()).toBe(Date.UTC(2026, 10, 27, 23, 30));
  });
});

describe("memory extraction", () => {
  it("asks the model nothing for a user over USER_DAILY_USD, and counts what it spends for the task's owner", async () => {
    let now = START;
    h = await startHarness({ memory: true, prices: PRICES, quotas: { settings: { userDailyUsd: 1 }, now: () => now } });
    h.fake.script(costing(1000, { type: "text", text: "Nice to meet you, Ana." }));
    expect(await h.say("Hi, I'm Ana and I live in Lisbon.", { user: "ana" })).toEqual(["main: Nice to meet you, Ana."]);
    expect(h.fake.calls).toHaveLength(1);
    expect(await h.store.memories.pendingJobs()).toEqual([]);
    expect(await h.store.memories.list("ana")).toEqual([]);

    // The next day she may spend again: the extraction's call counts for her like her agents' calls.
    now = Date.UTC(2026, 10, 28, 12, 0);
    h.fake.script(costing(200, { type: "text", text: "Lisbon is lovely." }), {
      ...reply(toolUse("save_memories", { memories: [{ text: "Ana lives in Lisbon" }] })),
      usage: { input_tokens: 150, output_tokens: 150 },
    });
    expect(await h.say("I live in Lisbon, remember?", { user: "ana" })).toEqual(["main: Lisbon is lovely."]);
    expect(h.fake.calls).toHaveLength(3);
    expect(await h.store.usage.get("user", "ana", "2026-11-28")).toMatchObject({ messages: 1, costNanoUsd: 500_000_000 });
  });
});
