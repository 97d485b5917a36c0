// USER_DAILY_USD under a fan-out: one user's calls running at the same moment (five conversations of theirs at once)
// each hold their estimated cost while they run, so the ones that start see each other and the limit is not passed
// by what they all cost together. Spending used to be counted only as calls returned: all five passed the check at
// $0 and together spent $0.75 of a $0.50 limit.
import { afterEach, expect, it } from "vitest";
import { callEstimate } from "../../src/llm/estimate.js";
import { PriceTable } from "../../src/llm/prices.js";
import type { QuotaLimit } from "../../src/runtime/quota.js";
import type { FakeReply } from "../fakes/anthropic/server.js";
import { reply } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

// Output at 1000 USD per million tokens, input at 1: at most 200 tokens out, a call is held at about $0.20; each
// answers with 150 tokens out ($0.15) and 100 in ($0.0001).
const PRICES = new PriceTable({ "claude-test": { input: 1, output: 1000, cacheWrite: 1, cacheRead: 1 } });
const SESSIONS = ["a", "b", "c", "d", "e"];

it("lets only the calls whose holds fit under USER_DAILY_USD start, so five at once cannot overshoot it", async () => {
  const refusals: QuotaLimit[] = [];
  // Every call that starts waits at the gate until each of the five either reached the API or was refused (allIn).
  const allIn = deferred<void>();
  const gate = deferred<void>();
  let arrived = 0;
  const settle = () => {
    if (arrived + refusals.length === SESSIONS.length) allIn.resolve();
  };
  h = await startHarness({
    prices: PRICES,
    quotas: {
      settings: { userDailyUsd: 0.5 },
      now: () => Date.UTC(2026, 10, 27, 20, 0),
      estimate: callEstimate(PRICES, 200),
      refused: (limit) => {
        refusals.push(limit);
        settle();
      },
    },
  });
  h.fake.fallback(async (req) => {
    arrived += 1;
    settle();
    await gate.promise;
    const answer: FakeReply = { ...reply({ type: "text", text: `done ${req.messages.length}` }), usage: { input_tokens: 100, output_tokens: 150 } };
    return answer;
  });
  for (const s of SESSIONS) await h.gateway.submit({ sessionKey: `console:${s}`, messageId: `m-${s}`, userId: "alice", text: "go" });
  await allIn.promise;
  // While three calls run, /usage shows what they hold beside what was spent.
  const usage = await h.gateway.submit({ sessionKey: "console:f", messageId: "m-usage", userId: "alice", text: "/usage" });
  if (usage.status !== "accepted") throw new Error(usage.status);
  await h.gateway.whenDone(usage.requestId);
  const [shown] = await h.store.outbox.ofRequest(usage.requestId);
  expect(shown!.text).toMatch(/^• cost: \$0\.0000 of \$0\.5000, and up to \$0\.60\d\d for calls still running$/m);
  gate.resolve();
  await h.gateway.idle();

  // $0, $0.20, $0.40 held: three start; the fourth would see $0.60 under way and is refused, as is the fifth.
  expect(arrived).toBe(3);
  expect(refusals).toEqual(["USER_DAILY_USD", "USER_DAILY_USD"]);
  const spent = await h.store.usage.get("user", "alice", "2026-11-27");
  expect(spent.costNanoUsd).toBe(3 * 150_100_000);
  expect(spent.costNanoUsd).toBeLessThanOrEqual(500_000_000);
  // Every hold was settled: nothing is left counting against her.
  expect(await h.store.usage.held("user", "alice", "2026-11-27")).toBe(0);
  const failed = [];
  for (const s of SESSIONS) failed.push(...(await h.store.tasks.ofSession(`console:${s}`)).filter((t) => t.status === "failed"));
  expect(failed).toHaveLength(2);
  expect(failed[0]!.error).toMatch(
    /^You've used \$0\.0000 of model time today, and calls still running may use \$0\.6\d{3} more; that reaches the daily limit of \$0\.5000 per user \(USER_DAILY_USD\)\. It resets at 00:00 on Sat 28 Nov \(UTC\), in 4 h 0 min\.$/,
  );
});
