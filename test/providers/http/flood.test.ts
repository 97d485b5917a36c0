// The HTTP API under flood control (USER_MESSAGES_PER_MINUTE): a program is told every time, with a 429 in the API's
// error shape and a Retry-After header, so a client can back off; nothing over the limit is stored.
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

it("answers 429 rate_limit_error with Retry-After to every message over the limit, and takes the next once it refills", async () => {
  let now = 1_700_000_000_000;
  const started = await startApi({ userMessagesPerMinute: 1, clock: { now: () => now } });
  ({ h, api } = started);
  h.fake.fallback(() => text("ok"));
  expect((await post(started.base, "/v1/messages", message("one"))).status).toBe(200);
  for (const wait of ["60", "45"]) {
    const res = await post(started.base, "/v1/messages", message("again"));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe(wait);
    const body = (await res.json()) as { type: string; error: { type: string; message: string; limit: unknown } };
    expect(body).toMatchObject({ type: "error", error: { type: "rate_limit_error", limit: { setting: "USER_MESSAGES_PER_MINUTE", max: 1 } } });
    expect(body.error.message).toMatch(/at most 1 a minute/);
    now += 15_000;
  }
  // Another user is not held back by alice's limit.
  expect((await post(started.base, "/v1/messages", message("hi"), "tok-bob")).status).toBe(200);
  now += 30_000;
  expect((await post(started.base, "/v1/messages", message("later"))).status).toBe(200);
  expect(h.fake.accepted()).toHaveLength(3);
});

it("answers a streamed message over the limit with the same 429 before any stream opens", async () => {
  const now = 1_700_000_000_000;
  const started = await startApi({ userMessagesPerMinute: 1, clock: { now: () => now } });
  ({ h, api } = started);
  h.fake.fallback(() => text("ok"));
  const sse = { accept: "text/event-stream" };
  const first = await post(started.base, "/v1/messages", message("one"), "tok-alice", sse);
  expect(await first.text()).toContain("event: done");
  const res = await post(started.base, "/v1/messages", message("again"), "tok-alice", sse);
  expect([res.status, res.headers.get("content-type"), res.headers.get("retry-after")]).toEqual([429, "application/json", "60"]);
  expect(await res.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error", limit: { setting: "USER_MESSAGES_PER_MINUTE" }, retry_after_seconds: 60 } });
  expect(h.fake.accepted()).toHaveLength(1);
});
