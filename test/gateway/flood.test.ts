// Flood control at the door (USER_MESSAGES_PER_MINUTE): a token bucket per user, judged by the runtime's clock (moved
// by hand here). A message over the limit is refused before it is stored or reaches a model; the sender is told once,
// then nothing until their bucket is full again; in a group each member has their own bucket.
import { afterEach, expect, it } from "vitest";
import { text } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => h.close());

const GROUP = "telegram:-1001234";
const ALICE = "telegram:1001";
const BOB = "telegram:1002";
const CAROL = "telegram:1003";

async function group(perMinute: number) {
  let now = 1_700_000_000_000;
  h = await startHarness({ userMessagesPerMinute: perMinute, clock: { now: () => now } });
  h.fake.fallback(() => text("ok"));
  let n = 0;
  const say = async (userId: string, words = "hi", messageId = `m${++n}`) => {
    const result = await h.gateway.submit({ sessionKey: GROUP, messageId, userId, text: words });
    await h.gateway.idle();
    return result;
  };
  return { say, advance: (ms: number) => void (now += ms) };
}

it("in a group each member has their own allowance: one flooding member is told once, then dropped; the others go on", async () => {
  const { say, advance } = await group(3);
  for (let i = 0; i < 3; i++) expect((await say(ALICE)).status).toBe("accepted");
  const over = await say(ALICE, "hi", "m-over");
  expect(over).toMatchObject({ status: "limited", quiet: false, retryAfterMs: 20_000, perMinute: 3 });
  expect(over.status === "limited" && over.text).toMatch(/at most 3 a minute.*Wait 20 s/);
  // Told once: the next ones are refused quietly.
  expect(await say(ALICE)).toMatchObject({ status: "limited", quiet: true });
  advance(10_000);
  expect(await say(ALICE)).toMatchObject({ status: "limited", quiet: true, retryAfterMs: 10_000 });
  // The group is not limited: Bob and Carol each have a whole allowance of their own.
  for (const member of [BOB, CAROL]) for (let i = 0; i < 3; i++) expect((await say(member)).status).toBe("accepted");
  // Nothing over the limit reached the model: one call per accepted message.
  expect(h.fake.accepted()).toHaveLength(9);

  // 20 s after the first refusal one message refills: the refused one, sent again, is new to the store (it was
  // never stored), and goes through.
  advance(10_000);
  expect((await say(ALICE, "hi", "m-over")).status).toBe("accepted");
  expect(await say(ALICE)).toMatchObject({ status: "limited", quiet: true });
  expect(h.fake.accepted()).toHaveLength(10);
});

it("once the allowance is full again the sender would be told again; /cancel is never held back", async () => {
  const { say, advance } = await group(2);
  await say(ALICE);
  await say(ALICE);
  expect(await say(ALICE)).toMatchObject({ status: "limited", quiet: false });
  expect(await say(ALICE)).toMatchObject({ status: "limited", quiet: true });
  expect((await say(ALICE, "/cancel")).status).not.toBe("limited");
  advance(60_000);
  await say(ALICE);
  await say(ALICE);
  expect(await say(ALICE)).toMatchObject({ status: "limited", quiet: false });
});

it("a message delivered again is a duplicate before the flood limit: it takes no token and its files are never fetched", async () => {
  const { say } = await group(1);
  expect((await say(ALICE, "hi", "m-once")).status).toBe("accepted");
  let fetched = 0;
  const again = await h.gateway.submit({
    sessionKey: GROUP,
    messageId: "m-once",
    userId: ALICE,
    text: "hi",
    fetchFiles: async () => (fetched++, []),
  });
  expect(again.status).toBe("duplicate");
  expect(fetched).toBe(0);
  // Over the limit now, and still nothing is fetched for a message that is refused.
  expect((await h.gateway.submit({ sessionKey: GROUP, messageId: "m-new", userId: ALICE, text: "hi", fetchFiles: async () => (fetched++, []) })).status).toBe("limited");
  expect(fetched).toBe(0);
});
