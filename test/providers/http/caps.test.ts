// Per-user caps on what an HTTP API user costs the server, through the real API: sessions owned, responses held
// open, bytes stored. Over a cap: 429 with a JSON body naming the cap and its setting, and nothing stored.
import { afterEach, describe, expect, it } from "vitest";
import type { UserCapLimits } from "../../../providers/http/caps.js";
import type { HttpProvider } from "../../../providers/http/server.js";
import { text, type FakeReply } from "../../fakes/anthropic/server.js";
import { deferred } from "../../helpers/deferred.js";
import type { Harness } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = undefined!;
});

const NO_CAPS: UserCapLimits = { sessions: 0, streams: 0, storedBytes: 0 };

async function boot(caps: Partial<UserCapLimits>, now?: () => number) {
  let base: string;
  ({ h, api, base } = await startApi({}, { caps: { ...NO_CAPS, ...caps }, ...(now ? { now } : {}) }));
  return base;
}

type ErrorBody = { type: string; error: { type: string; message: string; limit?: Record<string, unknown> }; request_id: string };

describe("per-user caps", () => {
  it("one token opening session after session gets 429 at HTTP_SESSIONS_PER_USER_MAX; its sessions still answer, other users are not affected", async () => {
    const base = await boot({ sessions: 3 });
    h.fake.fallback(() => text("ok"));
    const opened: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post(base, "/v1/messages", message(`chat ${i}`));
      expect(res.status).toBe(200);
      opened.push(((await res.json()) as { session_id: string }).session_id);
    }
    const calls = h.fake.calls.length;
    const refused = await post(base, "/v1/messages", message("one more"));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as ErrorBody;
    expect(body).toMatchObject({
      type: "error",
      error: { type: "rate_limit_error", limit: { name: "sessions_per_user", setting: "HTTP_SESSIONS_PER_USER_MAX", max: 3, current: 3 } },
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(body.error.message).toContain("you have 3 sessions, the most allowed (HTTP_SESSIONS_PER_USER_MAX=3)");
    // Refused before anything was stored or asked of the model.
    expect(h.fake.calls.length).toBe(calls);
    expect(await h.store.userData.footprint("http:alice")).toMatchObject({ sessions: 3 });
    // An unknown session_id would be a new session too; a known one goes on.
    expect((await post(base, "/v1/messages", message("x", { session_id: "6f1c1d9e-8b44-4f57-9a47-3c4b1f0e2a11" }))).status).toBe(429);
    expect((await post(base, "/v1/messages", message("go on", { session_id: opened[0] }))).status).toBe(200);
    expect((await post(base, "/v1/messages", message("hello"), "tok-bob")).status).toBe(200);
  });

  it("requests racing for the last session places get exactly as many as are left", async () => {
    const base = await boot({ sessions: 2 });
    h.fake.fallback(() => text("ok"));
    const statuses = (await Promise.all(Array.from({ length: 6 }, (_, i) => post(base, "/v1/messages", message(`race ${i}`))))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(4);
    expect((await h.store.userData.footprint("http:alice")).sessions).toBe(2);
  });

  it("a session's event streams count against HTTP_STREAMS_PER_USER_MAX like any held response", async () => {
    const base = await boot({ streams: 2 });
    h.fake.script(text("hello"));
    const sessionId = String(((await (await post(base, "/v1/messages", message("hi"))).json()) as { session_id: string }).session_id);
    const listen = () => fetch(`${base}/v1/sessions/${sessionId}/events`, { headers: { authorization: "Bearer tok-alice" } });
    const open = [await listen(), await listen()];
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    const refused = await listen();
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorBody).error).toMatchObject({
      type: "rate_limit_error",
      limit: { name: "streams_per_user", setting: "HTTP_STREAMS_PER_USER_MAX", max: 2, current: 2 },
    });
    for (const r of open) await r.body!.cancel();
  });

  it("responses held open are capped by HTTP_STREAMS_PER_USER_MAX, streamed or waited for; a finished one frees its place", async () => {
    const base = await boot({ streams: 2 });
    const answers = [deferred<FakeReply>(), deferred<FakeReply>()];
    const reached = [deferred<void>(), deferred<void>()];
    h.fake.script(
      () => (reached[0]!.resolve(), answers[0]!.promise),
      () => (reached[1]!.resolve(), answers[1]!.promise),
    );
    const streamed = post(base, "/v1/messages", message("first"), "tok-alice", { accept: "text/event-stream" });
    const waiting = post(base, "/v1/messages", message("second"));
    await Promise.all(reached.map((r) => r.promise));

    for (const accept of ["text/event-stream", "application/json"]) {
      const refused = await post(base, "/v1/messages", message("third"), "tok-alice", { accept });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as ErrorBody).error).toMatchObject({
        type: "rate_limit_error",
        message: expect.stringContaining("HTTP_STREAMS_PER_USER_MAX=2"),
        limit: { name: "streams_per_user", setting: "HTTP_STREAMS_PER_USER_MAX", max: 2, current: 2 },
      });
    }
    expect(h.fake.calls).toHaveLength(2);
    // Another user has places of their own.
    h.fake.script(text("hi bob"));
    expect((await post(base, "/v1/messages", message("hi"), "tok-bob")).status).toBe(200);

    answers[1]!.resolve(text("second answer"));
    expect((await waiting).status).toBe(200);
    h.fake.script(text("third answer"));
    expect((await post(base, "/v1/messages", message("third"))).status).toBe(200);
    answers[0]!.resolve(text("first answer"));
    expect(await (await streamed).text()).toContain("event: done");
  });

  it("bytes stored for a user are capped by HTTP_STORED_BYTES_PER_USER_MAX, counted from what the store holds", async () => {
    let now = 1_000_000;
    const base = await boot({ storedBytes: 2_000 }, () => now);
    h.fake.fallback(() => text("noted"));
    const first = await post(base, "/v1/messages", message("x".repeat(1_200)));
    expect(first.status).toBe(200);
    const { session_id } = (await first.json()) as { session_id: string };
    // Counted at once on this replica, before the store is read again: 1 200 + 900 > 2 000.
    const over = await post(base, "/v1/messages", message("y".repeat(900), { session_id }));
    expect(over.status).toBe(429);
    expect(((await over.json()) as ErrorBody).error).toMatchObject({
      type: "rate_limit_error",
      message: expect.stringContaining("HTTP_STORED_BYTES_PER_USER_MAX=2000"),
      limit: { name: "stored_bytes_per_user", setting: "HTTP_STORED_BYTES_PER_USER_MAX", max: 2_000, current: 1_200 },
    });
    // Read again from the store after a while: what the session's log really holds (the message in its JSON, the reply).
    now += 10_000;
    const stored = (await h.store.userData.footprint("http:alice")).bytes;
    expect(stored).toBeGreaterThan(1_200);
    const again = await post(base, "/v1/messages", message("z".repeat(2_000 - stored + 1), { session_id }));
    expect(again.status).toBe(429);
    expect(((await again.json()) as ErrorBody).error.limit).toMatchObject({ current: stored });
    expect((await post(base, "/v1/messages", message("ok", { session_id }))).status).toBe(200);
  });
});
