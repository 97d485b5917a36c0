// Tasks and requests over the HTTP API as the design defines them: a task's expiry and metadata given with its
// first message, the end of a task past its expiry (410, approvals withdrawn), approvals that name the request they
// paused, and GET /v1/requests/{id}. Real server, runtime and SDK against the strict fake; the gateway's clock is
// moved by hand.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import type { Clock } from "../../../src/runtime/deps.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import type { Harness, HarnessOptions } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";
import { transferTool } from "../../helpers/tools.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = undefined!;
});

/** A clock that stands still until the test moves it. */
function handClock(iso: string): Clock & { advance(ms: number): void } {
  let t = Date.parse(iso);
  return { now: () => t, advance: (ms) => void (t += ms) };
}

async function boot(options: HarnessOptions = {}): Promise<string> {
  let base: string;
  ({ h, api, base } = await startApi(options));
  return base;
}

type Body = Record<string, unknown>;
const json = async (r: Response) => (await r.json()) as Body;
const get = (base: string, path: string, token = "tok-alice") => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
const MINUTE = 60_000;
const START = "2030-01-01T00:00:00Z";

describe("a task's expiry and metadata", () => {
  it("are given with the task's first message, kept, and returned by GET /v1/tasks/{id}", async () => {
    const clock = handClock(START);
    const base = await boot({ clock });
    const metadata = { ticket: "T-42", customer: { id: 7, tier: "gold" }, tags: ["billing", "urgent"], note: "ação ✓" };
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    const first = await json(await post(base, "/v1/messages", message("plan a trip", { expires_at: "2030-01-01T02:30:00+02:00", metadata })));
    expect(first).toMatchObject({ status: "waiting_user", text: "Where to?" });

    clock.advance(10 * MINUTE);
    h.fake.script(reply(toolUse("complete", { result: "Rome" })), text("Rome it is."));
    const second = await post(base, "/v1/messages", message("Rome", { task_id: first.task_id }));
    expect(await json(second)).toMatchObject({ status: "completed", text: "Rome it is." });

    const task = await json(await get(base, `/v1/tasks/${String(first.task_id)}`));
    expect(task).toMatchObject({ status: "completed", expires_at: "2030-01-01T00:30:00.000Z", metadata });
    // A task started without them has neither.
    h.fake.script(text("Hi."));
    const plain = await json(await post(base, "/v1/messages", message("hello")));
    expect(await json(await get(base, `/v1/tasks/${String(plain.task_id)}`))).toMatchObject({ expires_at: null, metadata: null });
  });

  it("a message after the expiry gets 410, ends the task as expired, and the next message starts a new task", async () => {
    const clock = handClock(START);
    const base = await boot({ clock });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    const first = await json(await post(base, "/v1/messages", message("plan a trip", { expires_at: "2030-01-01T00:30:00Z" })));
    const calls = h.fake.calls.length;

    clock.advance(31 * MINUTE);
    const late = await post(base, "/v1/messages", message("Rome", { session_id: first.session_id }));
    expect(late.status).toBe(410);
    const gone = await json(late);
    expect(gone).toEqual({
      type: "error",
      error: {
        type: "task_expired_error",
        message: `task ${String(first.task_id)} expired at 2030-01-01T00:30:00.000Z and has ended; send a message without task_id to start a new task`,
      },
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      task_id: first.task_id,
    });
    expect(h.fake.calls).toHaveLength(calls);
    expect(await json(await get(base, `/v1/tasks/${String(first.task_id)}`))).toMatchObject({ status: "expired", error: "the task expired", stack: [] });
    // The request that found the task expired can be read back: failed, saying why.
    expect(await json(await get(base, `/v1/requests/${String(gone.request_id)}`))).toMatchObject({
      status: "failed",
      error_code: "expired",
      task_id: first.task_id,
      task_status: "expired",
      messages: [{ agent: "switchboard", kind: "error", text: expect.stringMatching(/^This task expired at 2030-01-01T00:30:00\.000Z/) }],
    });
    // The expired task is gone for good: its id gets 410 again, without anything stored or run.
    const again = await post(base, "/v1/messages", message("Rome, please", { task_id: first.task_id }));
    expect(again.status).toBe(410);
    expect((await h.store.requests.ofSession(`http:${String(first.session_id)}`)).length).toBe(2);

    h.fake.script(text("A new start. Where to?"));
    const fresh = await json(await post(base, "/v1/messages", message("plan another trip", { session_id: first.session_id })));
    expect(fresh).toMatchObject({ status: "completed", text: "A new start. Where to?" });
    expect(fresh.task_id).not.toBe(first.task_id);
  });

  /** A transfer that waits for approval in a task that expires at 00:05. */
  async function transferWaiting() {
    const clock = handClock(START);
    const runs: string[] = [];
    const base = await boot({ clock, tools: [transferTool(runs)] });
    h.fake.script(reply(toolUse("transfer", { amount: 5 })));
    const asked = await json(await post(base, "/v1/messages", message("send 5", { expires_at: "2030-01-01T00:05:00Z" })));
    const [pending] = asked.pending_approvals as Array<{ approval_id: string; request_id: string; task_id: string }>;
    return { clock, runs, base, asked, pending: pending! };
  }

  it("a task that expires while waiting for approval withdraws it: a late decision gets 410 and the tool never runs", async () => {
    const { clock, runs, base, asked, pending } = await transferWaiting();
    expect(pending).toMatchObject({ request_id: asked.request_id, task_id: asked.task_id });

    clock.advance(6 * MINUTE);
    const late = await post(base, `/v1/approvals/${pending.approval_id}`, { decision: "approve" });
    expect(late.status).toBe(410);
    expect(await json(late)).toMatchObject({ error: { type: "task_expired_error" }, task_id: asked.task_id });
    await h.gateway.idle();
    expect(runs).toEqual([]);
    expect(await h.store.approvals.get(pending.approval_id)).toMatchObject({ status: "withdrawn", decidedBy: "task-expired" });
    expect(await json(await get(base, `/v1/tasks/${String(asked.task_id)}`))).toMatchObject({ status: "expired", pending_approvals: [] });
    // The conversation shows the approval as withdrawn, so a client offers no buttons for it any more.
    const history = await json(await get(base, `/v1/sessions/${String(asked.session_id)}/messages`));
    const prompt = (history.messages as Array<{ approval?: { status: string } }>).find((m) => m.approval);
    expect(prompt?.approval?.status).toBe("withdrawn");
    // Deciding again is as late.
    expect((await post(base, `/v1/approvals/${pending.approval_id}`, { decision: "deny" })).status).toBe(410);
  });

  it("a message to a task that expired while waiting for approval ends it and withdraws the approval", async () => {
    const { clock, runs, base, asked, pending } = await transferWaiting();
    clock.advance(5 * MINUTE); // expires_at itself is already too late
    expect((await post(base, "/v1/messages", message("are you there?", { task_id: asked.task_id }))).status).toBe(410);
    expect((await h.store.approvals.get(pending.approval_id))?.status).toBe("withdrawn");
    expect((await post(base, `/v1/approvals/${pending.approval_id}`, { decision: "approve" })).status).toBe(410);
    await h.gateway.idle();
    expect(runs).toEqual([]);
  });

  it("over SSE, the expired answer is the stream's error event", async () => {
    const clock = handClock(START);
    const base = await boot({ clock });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "ask" })), text("Which one?"));
    const waiting = await json(await post(base, "/v1/messages", message("plan", { expires_at: "2030-01-01T00:01:00Z" })));
    clock.advance(2 * MINUTE);
    const streamed = await post(base, "/v1/messages", message("this one", { task_id: waiting.task_id }), "tok-alice", { accept: "text/event-stream" });
    const body = await streamed.text();
    expect(body).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"task_expired_error"/);
    expect(body).not.toContain("event: done");
  });

  it("a retried request keeps its 410", async () => {
    const clock = handClock(START);
    const base = await boot({ clock });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    const first = await json(await post(base, "/v1/messages", message("plan", { expires_at: "2030-01-01T00:10:00Z" })));
    clock.advance(11 * MINUTE);
    const key = { "idempotency-key": "late-answer-1" };
    const a = await post(base, "/v1/messages", message("Rome", { task_id: first.task_id }), "tok-alice", key);
    const b = await post(base, "/v1/messages", message("Rome", { task_id: first.task_id }), "tok-alice", key);
    expect([a.status, b.status]).toEqual([410, 410]);
    expect(await json(b)).toEqual(await json(a));
  });

  it("cannot be given to a task already under way", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    const first = await json(await post(base, "/v1/messages", message("plan")));
    const withTask = await post(base, "/v1/messages", message("Rome", { task_id: first.task_id, metadata: { a: 1 } }));
    expect(withTask.status).toBe(400);
    expect(((await json(withTask)).error as { message: string }).message).toBe(
      "expires_at and metadata are given with a task's first message; leave out task_id to start a new task",
    );
    const inSession = await post(base, "/v1/messages", message("Rome", { session_id: first.session_id, expires_at: "2999-01-01T00:00:00Z" }));
    expect(inSession.status).toBe(409);
    expect(((await json(inSession)).error as { message: string }).message).toMatch(new RegExp(`^task ${String(first.task_id)} is still under way in this session`));
    expect(h.fake.calls).toHaveLength(2);
  });

  it("a message with them that reaches a task begun meanwhile (a race past the 409) fails without touching that task", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    const first = await json(await post(base, "/v1/messages", message("plan")));
    const key = `http:${String(first.session_id)}`;
    // As if it had passed the API's check just before the first message's task began.
    const submitted = await h.gateway.submit({
      sessionKey: key,
      messageId: "raced",
      userId: "http:alice",
      text: "Rome",
      taskOptions: { expiresAt: null, metadataJson: '{"a":1}' },
    });
    expect(submitted.status).toBe("accepted");
    await h.gateway.idle();
    const request = await h.store.requests.get((submitted as { requestId: string }).requestId);
    expect(request).toMatchObject({
      status: "failed",
      errorCode: "task_under_way",
      error: expect.stringMatching(`^Sorry, this message sets an expiry or metadata for a new task, but task ${String(first.task_id)} is still under way`),
    });
    expect(await h.store.tasks.get(String(first.task_id))).toMatchObject({ status: "waiting_user", metadata: null });
    expect(h.fake.calls).toHaveLength(2);
  });
});

describe("requests and the approvals they paused", () => {
  it("GET /v1/requests/{id} shows the owner a request's state, its replies and the approvals its turn asked for", async () => {
    const runs: string[] = [];
    const base = await boot({ tools: [transferTool(runs)] });
    h.fake.script(reply(toolUse("transfer", { amount: 5 })));
    const asked = await json(await post(base, "/v1/messages", message("send 5")));
    const view = await json(await get(base, `/v1/requests/${String(asked.request_id)}`));
    const [pending] = asked.pending_approvals as Array<{ approval_id: string }>;
    expect(view).toMatchObject({
      request_id: asked.request_id,
      session_id: asked.session_id,
      task_id: asked.task_id,
      kind: "message",
      status: "done",
      error: null,
      error_code: null,
      task_status: "waiting_approval",
      approvals: [{ approval_id: pending!.approval_id, tool: "transfer", status: "pending", request_id: asked.request_id, task_id: asked.task_id }],
      usage: { inputTokens: expect.any(Number), costUsd: expect.any(Number) },
    });
    expect((view.messages as Array<{ approval_id?: string }>).map((m) => m.approval_id)).toEqual([pending!.approval_id]);
    // The task's view names the paused request too.
    const task = await json(await get(base, `/v1/tasks/${String(asked.task_id)}`));
    expect(task.pending_approvals).toEqual([expect.objectContaining({ approval_id: pending!.approval_id, request_id: asked.request_id })]);

    // The decision's own request (the resume) is addressable as well, and shows the paused one done.
    h.fake.script(text("Sent."));
    const decided = await json(await post(base, `/v1/approvals/${pending!.approval_id}`, { decision: "approve" }));
    await h.gateway.idle();
    expect(await json(await get(base, `/v1/requests/${String(decided.request_id)}`))).toMatchObject({ kind: "approval", status: "done", task_status: "completed" });
    expect(await json(await get(base, `/v1/requests/${String(asked.request_id)}`))).toMatchObject({ approvals: [{ status: "approved" }] });
  });

  it("another user's request is as unknown as a made-up id: 404, never 403", async () => {
    const base = await boot();
    h.fake.script(text("hi"));
    const mine = await json(await post(base, "/v1/messages", message("hello")));
    const theirs = await get(base, `/v1/requests/${String(mine.request_id)}`, "tok-bob");
    const unknown = await get(base, `/v1/requests/${randomUUID()}`, "tok-bob");
    expect([theirs.status, unknown.status]).toEqual([404, 404]);
    expect(((await json(theirs)).error as { type: string }).type).toBe("not_found_error");
  });
});
