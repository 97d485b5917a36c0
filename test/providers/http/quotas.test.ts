// The daily quotas through the HTTP API: a message over USER_DAILY_MESSAGES starts no task and is answered 429 in the
// API's error shape, naming the limit and when it resets, with Retry-After — every time (a program has no chat to
// remember a notice in); on an SSE stream the same body comes as the `error` event. A task that crosses USER_DAILY_USD
// mid-way is answered the same. Another user is not held back, and the day starts again at the user's midnight.
import { afterEach, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import { PriceTable } from "../../../src/llm/prices.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { agentFile, type Harness } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api.stop();
  await h.close();
});

// Friday 27 November 2026, 20:00 UTC; alice's day ends at midnight UTC, in 4 hours.
const START = Date.UTC(2026, 10, 27, 20, 0);

async function start(settings: { userDailyMessages?: number; userDailyUsd?: number }, files: Record<string, string> = {}) {
  let now = START;
  const clock = { now: () => now };
  const prices = new PriceTable({ "claude-test": { input: 1000, output: 1000, cacheWrite: 1000, cacheRead: 1000 } });
  const started = await startApi({ files, prices, clock, quotas: { settings, now: clock.now } });
  ({ h, api } = started);
  return { base: started.base, advanceTo: (t: number) => void (now = t) };
}

type QuotaBody = {
  type: string;
  error: { type: string; code: string; message: string; limit: unknown; resets_at: string };
  request_id: string;
  session_id: string;
  task_id: string | null;
};

it("answers a message over USER_DAILY_MESSAGES 429 with Retry-After and the limit, every time; bob goes on; a new day at midnight", async () => {
  const { base, advanceTo } = await start({ userDailyMessages: 1 });
  h.fake.fallback(() => text("ok"));
  expect((await post(base, "/v1/messages", message("one"))).status).toBe(200);
  for (const [at, wait] of [
    [START, "14400"],
    [START + 90 * 60_000, "9000"],
  ] as const) {
    advanceTo(at);
    const res = await post(base, "/v1/messages", message("two"));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe(wait);
    const body = (await res.json()) as QuotaBody;
    expect(body).toMatchObject({
      type: "error",
      error: {
        type: "rate_limit_error",
        code: "quota_exceeded",
        limit: { name: "user_daily_messages", setting: "USER_DAILY_MESSAGES" },
        resets_at: "2026-11-28T00:00:00.000Z",
      },
      task_id: null,
    });
    expect(body.error.message).toMatch(
      /^You've sent 1 message today, the daily limit \(USER_DAILY_MESSAGES\), so I can't take more\. It resets at 00:00 on Sat 28 Nov \(UTC\), in (4 h 0|2 h 30) min\.$/,
    );
    // The refused request is stored and readable, failed, saying why.
    const request = (await (await fetch(`${base}/v1/requests/${body.request_id}`, { headers: { authorization: "Bearer tok-alice" } })).json()) as {
      status: string;
      error: string;
    };
    expect(request).toMatchObject({ status: "failed", error: body.error.message });
  }
  expect((await post(base, "/v1/messages", message("hi"), "tok-bob")).status).toBe(200);
  advanceTo(Date.UTC(2026, 10, 28, 0, 0));
  expect((await post(base, "/v1/messages", message("a new day"))).status).toBe(200);
  expect(h.fake.accepted()).toHaveLength(3);
});

it("sends the same body as the SSE stream's error event, after the refusal's message", async () => {
  const { base } = await start({ userDailyMessages: 1 });
  h.fake.fallback(() => text("ok"));
  expect((await post(base, "/v1/messages", message("one"))).status).toBe(200);
  const res = await post(base, "/v1/messages", message("two"), "tok-alice", { accept: "text/event-stream" });
  expect(res.status).toBe(200);
  const events = (await res.text())
    .split("\n\n")
    .filter((chunk) => chunk.startsWith("event: "))
    .map((chunk) => ({ event: /^event: (.*)$/m.exec(chunk)![1], data: JSON.parse(/^data: (.*)$/m.exec(chunk)![1]!) as unknown }));
  expect(events.map((e) => e.event)).toEqual(["message", "error"]);
  expect(events[1]!.data).toMatchObject({ error: { code: "quota_exceeded", limit: { setting: "USER_DAILY_MESSAGES" }, resets_at: "2026-11-28T00:00:00.000Z" } });
  expect((events[0]!.data as { text: string }).text).toBe((events[1]!.data as QuotaBody).error.message);
});

it("answers 429 naming USER_DAILY_USD when a task crosses it mid-way, with the task that ended", async () => {
  const { base } = await start({ userDailyUsd: 1 }, agentFile("scout", "Scout."));
  // 1000 USD per million tokens: 1100 tokens are $1.10.
  h.fake.script({ ...reply(toolUse("use_agent", { name: "scout", message: "look around" })), usage: { input_tokens: 550, output_tokens: 550 } }, text("never asked"));
  const res = await post(base, "/v1/messages", message("go"));
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe("14400");
  const body = (await res.json()) as QuotaBody;
  expect(body.error).toMatchObject({ code: "quota_exceeded", limit: { name: "user_daily_usd", setting: "USER_DAILY_USD" } });
  expect(body.error.message).toMatch(/^You've used \$1\.10 of model time today, the daily limit of \$1\.00 per user \(USER_DAILY_USD\)\./);
  const task = (await (await fetch(`${base}/v1/tasks/${body.task_id}`, { headers: { authorization: "Bearer tok-alice" } })).json()) as { status: string };
  expect(task.status).toBe("failed");
  expect(h.fake.accepted()).toHaveLength(1);
  // The next message is refused at the door, with the same limit.
  const next = await post(base, "/v1/messages", message("again"));
  expect([next.status, ((await next.json()) as QuotaBody).error.limit]).toEqual([429, { name: "user_daily_usd", setting: "USER_DAILY_USD" }]);
});

it("gives a retry with the same Idempotency-Key the same 429, its Retry-After counted again", async () => {
  const { base, advanceTo } = await start({ userDailyMessages: 1 });
  h.fake.fallback(() => text("ok"));
  expect((await post(base, "/v1/messages", message("one"))).status).toBe(200);
  const first = await post(base, "/v1/messages", message("two"), "tok-alice", { "idempotency-key": "k-2" });
  expect([first.status, first.headers.get("retry-after")]).toEqual([429, "14400"]);
  advanceTo(START + 60 * 60_000);
  const retry = await post(base, "/v1/messages", message("two"), "tok-alice", { "idempotency-key": "k-2" });
  expect([retry.status, retry.headers.get("retry-after")]).toEqual([429, "10800"]);
  expect(await retry.json()).toEqual(await first.json());
});
