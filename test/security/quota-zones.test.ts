// The day a user's quotas count, as createApp wires it: the zone the user set with /timezone, else DEFAULT_TIMEZONE,
// else UTC. Through the composition root with its real store, gateway and model client against the strict fake
// Messages API, on a faked Date (the app reads the system clock): USER_DAILY_MESSAGES=1, and each refusal names the
// reset at that user's midnight.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import { startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";

let app: App | undefined;
let fake: FakeAnthropic;
let dir: string;
beforeEach(async () => {
  fake = await startFakeAnthropic();
  fake.fallback(() => text("ok"));
  dir = mkdtempSync(join(tmpdir(), "switchboard-quota-zones-"));
  // Friday 27 November 2026, 20:00 UTC: 05:00 on Saturday in Tokyo, 15:00 on Friday in New York.
  vi.useFakeTimers({ toFake: ["Date"], now: Date.UTC(2026, 10, 27, 20, 0) });
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  vi.useRealTimers();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(extra: Record<string, string>): Promise<App> {
  const env = {
    ANTHROPIC_API_KEY: "k",
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_MAX_RETRIES: "0",
    DATA_DIR: join(dir, "data"),
    SKILLS_DIR: join(dir, "s"),
    AGENTS_DIR: join(dir, "a"),
    USER_DAILY_MESSAGES: "1",
    ...extra,
  };
  app = await createApp(loadConfig(env), silentLogger());
  return app;
}

/** What `user` read in reply to `words`, in their own chat. */
async function say(a: App, user: string, words: string): Promise<string[]> {
  const result = await a.gateway.submit({ sessionKey: `console:${user}`, messageId: `${user}-${words}`, userId: `console:${user}`, text: words });
  if (result.status !== "accepted") throw new Error(`not accepted: ${result.status}`);
  await a.gateway.whenDone(result.requestId);
  return (await a.store.outbox.ofRequest(result.requestId)).map((m) => m.text);
}

const refusal = (reset: string) => [`You've sent 1 message today, the daily limit (USER_DAILY_MESSAGES), so I can't take more. It resets at ${reset}.`];

it("counts the day of a user who set /timezone in their zone, and of one who did not in DEFAULT_TIMEZONE", async () => {
  const a = await start({ DEFAULT_TIMEZONE: "America/New_York" });
  expect(await say(a, "kenji", "/timezone Asia/Tokyo")).toEqual([expect.stringContaining("Asia/Tokyo")]);
  expect(await say(a, "kenji", "one")).toEqual(["ok"]);
  expect(await say(a, "kenji", "two")).toEqual(refusal("00:00 on Sun 29 Nov (Asia/Tokyo), in 19 h 0 min"));
  expect(await say(a, "nora", "one")).toEqual(["ok"]);
  expect(await say(a, "nora", "two")).toEqual(refusal("00:00 on Sat 28 Nov (America/New_York), in 9 h 0 min"));
  // Tokyo's midnight (15:00 UTC on Saturday) starts Kenji's new day; Nora's began at New York's (05:00 UTC).
  vi.setSystemTime(Date.UTC(2026, 10, 28, 15, 0));
  expect(await say(a, "kenji", "three")).toEqual(["ok"]);
  expect(await say(a, "nora", "three")).toEqual(["ok"]);
  expect(fake.accepted()).toHaveLength(4);
});

it("counts in UTC when neither the user nor DEFAULT_TIMEZONE names a zone", async () => {
  const a = await start({});
  expect(await say(a, "uma", "one")).toEqual(["ok"]);
  expect(await say(a, "uma", "two")).toEqual(refusal("00:00 on Sat 28 Nov (UTC), in 4 h 0 min"));
  vi.setSystemTime(Date.UTC(2026, 10, 27, 23, 59));
  expect(await say(a, "uma", "three")).toEqual([]);
  vi.setSystemTime(Date.UTC(2026, 10, 28, 0, 0));
  expect(await say(a, "uma", "four")).toEqual(["ok"]);
});
