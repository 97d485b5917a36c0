// The daily quotas through the HTTP API: a message over USER_DAILY_MESSAGES starts no task; the program reads the
// refusal (which limit, when it resets) in the answer every time, the first as the reply, the later ones as the
// request's error; another user is not held back.
import { afterEach, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import { text } from "../../fakes/anthropic/server.js";
import type { Harness } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api.stop();
  await h.close();
});

it("refuses alice's message over the daily limit with the limit and its reset, and answers bob", async () => {
  const now = Date.UTC(2026, 10, 27, 20, 0);
  const started = await startApi({ quotas: { settings: { userDailyMessages: 1 }, now: () => now } });
  ({ h, api } = started);
  h.fake.fallback(() => text("ok"));
  expect((await post(started.base, "/v1/messages", message("one"))).status).toBe(200);
  const first = await post(started.base, "/v1/messages", message("two"));
  const firstBody = JSON.stringify(await first.json());
  expect(firstBody).toContain("the daily limit (USER_DAILY_MESSAGES)");
  expect(firstBody).toContain("It resets at 00:00 on Sat 28 Nov (UTC), in 4 h 0 min.");
  expect(first.status).toBe(200);
  expect(firstBody).toContain('"status":"failed"');
  // A program is told every time, not once.
  const second = await post(started.base, "/v1/messages", message("three"));
  expect(JSON.stringify(await second.json())).toContain("You've sent 1 message today, the daily limit (USER_DAILY_MESSAGES)");
  expect((await post(started.base, "/v1/messages", message("hi"), "tok-bob")).status).toBe(200);
  expect(h.fake.accepted()).toHaveLength(2);
});
