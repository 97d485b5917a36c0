// Hostile input to the HTTP API's task fields and routes: metadata that is not an object, too big or nested to blow
// the stack; expiries that are past, unparseable or not strings; malformed ids in bodies and paths; tasks of other
// sessions and requests of other users. Every one is a 4xx naming what was wrong, nothing is stored or run for it,
// and the server keeps answering.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpProvider } from "../../providers/http/server.js";
import { METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from "../../providers/http/task-options.js";
import { text } from "../fakes/anthropic/server.js";
import type { Harness } from "../helpers/harness.js";
import { message, post, startApi } from "../helpers/http-api.js";

let h: Harness | undefined;
let api: HttpProvider | undefined;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = api = undefined;
});

const NOW = Date.parse("2030-01-01T00:00:00Z");

async function boot(): Promise<string> {
  const started = await startApi({ clock: { now: () => NOW } });
  ({ h, api } = started);
  return started.base;
}

const refusal = async (r: Response) => [r.status, ((await r.json()) as { error: { message: string } }).error.message] as const;
const get = (base: string, path: string, token = "tok-alice") => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });

/** `{"a":{"a":…1…}}` nested `levels` deep, as raw JSON text (no JavaScript value this deep is ever built here). */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** Nothing of a refused request was stored, and the model was never called. */
async function nothingStored(): Promise<void> {
  expect(h!.fake.calls).toHaveLength(0);
  expect(await h!.store.requests.unfinished()).toEqual([]);
  expect((await h!.store.operations.recentSessions(10)).length).toBe(0);
}

describe("metadata", () => {
  it.each([
    ["an array", [1, 2]],
    ["a string", "ticket T-1"],
    ["a number", 42],
    ["a boolean", true],
  ])("that is %s is refused, naming metadata", async (kind, metadata) => {
    const base = await boot();
    const [status, reason] = await refusal(await post(base, "/v1/messages", message("hi", { metadata })));
    expect(status).toBe(400);
    expect(reason).toMatch(new RegExp(`^metadata must be a JSON object; got ${kind === "a string" ? '"ticket T-1"' : kind}$`));
    await nothingStored();
  });

  it(`over ${METADATA_MAX_BYTES} bytes as JSON is refused with its size, counted in bytes not characters`, async () => {
    const base = await boot();
    const overhead = JSON.stringify({ blob: "" }).length;
    const [status, reason] = await refusal(await post(base, "/v1/messages", message("hi", { metadata: { blob: "x".repeat(METADATA_MAX_BYTES - overhead + 1) } })));
    expect([status, reason]).toEqual([400, `metadata is ${METADATA_MAX_BYTES + 1} bytes as JSON; at most ${METADATA_MAX_BYTES} are allowed`]);
    // Two bytes a character: 8,200 characters are 16,400 bytes.
    const wide = await refusal(await post(base, "/v1/messages", message("hi", { metadata: { blob: "é".repeat(8_200) } })));
    expect(wide).toEqual([400, `metadata is ${16_400 + overhead} bytes as JSON; at most ${METADATA_MAX_BYTES} are allowed`]);
    await nothingStored();
    h!.fake.script(text("ok"));
    const atTheCap = await post(base, "/v1/messages", message("hi", { metadata: { blob: "x".repeat(METADATA_MAX_BYTES - overhead) } }));
    expect(atTheCap.status).toBe(200);
  });

  it("nested far too deep is refused without overflowing the stack, and the server answers on", async () => {
    const base = await boot();
    const body = `{"items":[{"content_type":"text","content":"hi"}],"metadata":${nested(150_000)}}`;
    const [status, reason] = await refusal(await post(base, "/v1/messages", body));
    expect([status, reason]).toEqual([400, `metadata nests objects or arrays more than ${METADATA_MAX_DEPTH} levels deep`]);
    // With an Idempotency-Key too (its fingerprint serialises the body): still a 400, not a 500.
    expect((await post(base, "/v1/messages", body, "tok-alice", { "idempotency-key": "deep-1" })).status).toBe(400);
    await nothingStored();
    h!.fake.script(text("still here"));
    expect((await post(base, "/v1/messages", message("hello"))).status).toBe(200);
  });

  it(`may nest ${METADATA_MAX_DEPTH} levels, not one more`, async () => {
    const base = await boot();
    const at = (levels: number) => `{"items":[{"content_type":"text","content":"hi"}],"metadata":${nested(levels)}}`;
    expect((await post(base, "/v1/messages", at(METADATA_MAX_DEPTH + 1))).status).toBe(400);
    h!.fake.script(text("ok"));
    expect((await post(base, "/v1/messages", at(METADATA_MAX_DEPTH))).status).toBe(200);
  });

  it("keeps keys such as __proto__ and constructor as plain data", async () => {
    const base = await boot();
    h!.fake.script(text("ok"));
    const body = '{"items":[{"content_type":"text","content":"hi"}],"metadata":{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}}';
    const answer = (await (await post(base, "/v1/messages", body)).json()) as { task_id: string };
    const task = await get(base, `/v1/tasks/${answer.task_id}`);
    const raw = await task.text();
    expect(raw).toContain('"metadata":{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}');
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it("null counts as not given", async () => {
    const base = await boot();
    h!.fake.script(text("ok"));
    const answer = (await (await post(base, "/v1/messages", message("hi", { metadata: null, expires_at: null }))).json()) as { task_id: string };
    expect(await (await get(base, `/v1/tasks/${answer.task_id}`)).json()).toMatchObject({ metadata: null, expires_at: null });
  });
});

describe("expires_at", () => {
  it.each([
    ["a time that has passed", "2020-01-01T00:00:00Z", "expires_at must be in the future: 2020-01-01T00:00:00.000Z has passed (it is 2030-01-01T00:00:00.000Z now)"],
    ["the present moment", "2030-01-01T00:00:00Z", "expires_at must be in the future: 2030-01-01T00:00:00.000Z has passed (it is 2030-01-01T00:00:00.000Z now)"],
    ["words", "tomorrow", 'expires_at must be an RFC 3339 date-time with a time zone, such as "2030-01-31T17:00:00Z"; got "tomorrow"'],
    [
      "a day that does not exist",
      "2030-02-30T00:00:00Z",
      'expires_at must be an RFC 3339 date-time with a time zone, such as "2030-01-31T17:00:00Z"; got "2030-02-30T00:00:00Z"',
    ],
    ["a date without a time", "2030-06-01", 'expires_at must be an RFC 3339 date-time with a time zone, such as "2030-01-31T17:00:00Z"; got "2030-06-01"'],
    [
      "a time without a zone",
      "2030-06-01T00:00:00",
      'expires_at must be an RFC 3339 date-time with a time zone, such as "2030-01-31T17:00:00Z"; got "2030-06-01T00:00:00"',
    ],
    ["a number", 1_924_992_000, 'expires_at must be an RFC 3339 date-time with a time zone, such as "2030-01-31T17:00:00Z"; got a number'],
    ["an object", { at: "2031-01-01T00:00:00Z" }, 'expires_at must be an RFC 3339 date-time with a time zone, such as "2030-01-31T17:00:00Z"; got a object'],
  ])("that is %s is refused, naming expires_at", async (_kind, expires_at, reason) => {
    const base = await boot();
    expect(await refusal(await post(base, "/v1/messages", message("hi", { expires_at })))).toEqual([400, reason]);
    await nothingStored();
  });

  it("a huge value is refused with a short message", async () => {
    const base = await boot();
    const [status, reason] = await refusal(await post(base, "/v1/messages", message("hi", { expires_at: `2031-${"9".repeat(500_000)}` })));
    expect(status).toBe(400);
    expect(reason.length).toBeLessThan(200);
  });
});

describe("ids", () => {
  it.each([["nope"], ["../tasks"], [""], [42], [{ id: randomUUID() }]])("a malformed task_id in the body (%j) is 400", async (task_id) => {
    const base = await boot();
    expect(await refusal(await post(base, "/v1/messages", message("hi", { task_id })))).toEqual([400, "task_id must be a UUID"]);
    await nothingStored();
  });

  it.each([["nope"], ["..%2F..%2Fadmin"], ["1'%20OR%20'1'='1"], [`${randomUUID()}x`]])("a malformed task id in the path (%s) is 400 for GET and cancel", async (id) => {
    const base = await boot();
    const [status, reason] = await refusal(await get(base, `/v1/tasks/${id}`));
    expect(status).toBe(400);
    expect(reason).toMatch(/^the task id in the path must be a UUID; got /);
    expect((await post(base, `/v1/tasks/${id}/cancel`, {})).status).toBe(400);
  });

  it.each([["nope"], ["%00"], [randomUUID().slice(0, 35)]])("a malformed request id in the path (%s) is 400", async (id) => {
    const base = await boot();
    const [status, reason] = await refusal(await get(base, `/v1/requests/${id}`));
    expect(status).toBe(400);
    expect(reason).toMatch(/^the request id in the path must be a UUID; got /);
  });

  it("a task of another session is refused: 400 with another session_id of the same user, 403 for another user's", async () => {
    const base = await boot();
    h!.fake.script(text("one"), text("two"));
    const a = (await (await post(base, "/v1/messages", message("first"))).json()) as { session_id: string; task_id: string };
    const b = (await (await post(base, "/v1/messages", message("second"))).json()) as { session_id: string; task_id: string };
    expect(await refusal(await post(base, "/v1/messages", message("mix", { session_id: b.session_id, task_id: a.task_id })))).toEqual([
      400,
      "task_id belongs to another session_id",
    ]);
    expect((await post(base, "/v1/messages", message("mine now", { task_id: a.task_id }), "tok-bob")).status).toBe(403);
    expect(h!.fake.calls).toHaveLength(2);
  });

  it("a task or request of a chat platform's session is not reachable through the API", async () => {
    const base = await boot();
    h!.fake.script(text("hello from the chat"));
    await h!.gateway.submit({ sessionKey: "telegram:4242", messageId: "1", userId: "http:alice", text: "hi" });
    await h!.gateway.idle();
    const [task] = await h!.store.tasks.ofSession("telegram:4242");
    const [request] = await h!.store.requests.ofSession("telegram:4242");
    expect((await get(base, `/v1/tasks/${task!.id}`)).status).toBe(404);
    expect((await get(base, `/v1/requests/${request!.id}`)).status).toBe(404);
  });
});
