// The daily quotas and flood control in the terminal chat: the real console provider (`npm run chat -- --jsonl`'s
// code) on piped streams, the real gateway and runtime, the strict fake Messages API, and a clock moved by hand. The
// user reads which limit was reached and when it resets in their zone, once; the next day (at their midnight) the chat
// goes on. Over USER_MESSAGES_PER_MINUTE they read how long to wait, once, until the bucket refills.
import { PassThrough } from "node:stream";
import { afterEach, expect, it } from "vitest";
import { startConsole, type ConsoleChat } from "../../../providers/console/console.js";
import { text } from "../../fakes/anthropic/server.js";
import { startHarness, type Harness, type HarnessOptions } from "../../helpers/harness.js";

let h: Harness;
let chat: ConsoleChat;
afterEach(async () => {
  chat?.stop();
  await h?.close();
});

// Friday 27 November 2026, 20:00 UTC: 21:00 in Berlin, whose midnight is 23:00 UTC.
const START = Date.UTC(2026, 10, 27, 20, 0);

async function boot(options: (clock: () => number) => HarnessOptions) {
  let now = START;
  h = await startHarness(options(() => now));
  h.fake.fallback(() => text("ok"));
  // Each line the chat reads is submitted to the gateway once: resolves the wait of `say`.
  let submitted: (() => void) | null = null;
  const submit = h.gateway.submit.bind(h.gateway);
  h.gateway.submit = async (m) => {
    const result = await submit(m);
    submitted?.();
    return result;
  };
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: unknown[] = [];
  let buffer = "";
  output.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, at)));
      buffer = buffer.slice(at + 1);
    }
  });
  chat = startConsole(h.gateway, { jsonl: true, exitOnEnd: true, input, output, session: "t", user: "alice" });
  /** Sends a line and returns what the chat wrote in reply once the gateway has handled it. */
  const say = async (words: string): Promise<unknown[]> => {
    const before = lines.length;
    const entered = new Promise<void>((resolve) => (submitted = resolve));
    input.write(`${JSON.stringify({ text: words })}\n`);
    await entered;
    await h.gateway.idle();
    return lines.slice(before).map((l) => ({ ...(l as object), id: undefined }));
  };
  return { say, advanceTo: (t: number) => void (now = t) };
}

// Replies carry their outbox id; a notice from the door has none.
const said = (text: string) => ({ type: "message", agent: "switchboard", depth: 0, text, id: undefined });
const ok = { type: "message", agent: "main", depth: 1, text: "ok", id: undefined };

it("tells the user once which daily limit was reached and when it resets at their midnight, and goes on the next day", async () => {
  const { say, advanceTo } = await boot((now) => ({
    clock: { now },
    quotas: { settings: { userDailyMessages: 1 }, now, zoneOf: async (user) => (user === "console:alice" ? "Europe/Berlin" : null) },
  }));
  expect(await say("one")).toEqual([ok]);
  expect(await say("two")).toEqual([
    said("You've sent 1 message today, the daily limit (USER_DAILY_MESSAGES), so I can't take more. It resets at 00:00 on Sat 28 Nov (Europe/Berlin), in 3 h 0 min."),
  ]);
  // Told once: the next refusal the same day is silent.
  advanceTo(START + 2 * 3_600_000);
  expect(await say("three")).toEqual([]);
  // 23:00 UTC is midnight in Berlin: a new day.
  advanceTo(Date.UTC(2026, 10, 27, 23, 0));
  expect(await say("four")).toEqual([ok]);
  expect(h.fake.accepted()).toHaveLength(2);
});

it("answers a message over USER_MESSAGES_PER_MINUTE with how long to wait, once, and takes messages again once it refills", async () => {
  const { say, advanceTo } = await boot((now) => ({ clock: { now }, userMessagesPerMinute: 1 }));
  expect(await say("one")).toEqual([ok]);
  expect(await say("two")).toEqual([
    said("You're sending messages faster than I can take them (at most 1 a minute), so I'm dropping some. Wait 60 s and send your message again."),
  ]);
  advanceTo(START + 30_000);
  expect(await say("three")).toEqual([]);
  advanceTo(START + 90_000);
  expect(await say("four")).toEqual([ok]);
  expect(h.fake.accepted()).toHaveLength(2);
});
