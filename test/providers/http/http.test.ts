// The HTTP API end to end: real node:http server, real runtime, real Anthropic SDK against the strict fake,
// JWTs signed with locally generated keys.
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { HttpProvider } from "../../../providers/http/server.js";
import { reply, text, toolUse, type FakeReply } from "../../fakes/anthropic/server.js";
import { deferred } from "../../helpers/deferred.js";
import { manualTimeouts } from "../../helpers/timers.js";
import type { Harness, HarnessOptions } from "../../helpers/harness.js";
import { message, post, startApi, type ApiExtra } from "../../helpers/http-api.js";
import { transferTool } from "../../helpers/tools.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = undefined!;
});

async function boot(options: HarnessOptions = {}, extra: ApiExtra = {}) {
  let base: string;
  ({ h, api, base } = await startApi(options, extra));
  return base;
}

describe("POST /v1/messages", () => {
  it("starts a task, continues it, and answers with ids, status, agent and text", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    const first = await post(base, "/v1/messages", message("plan a trip"));
    expect(first.status).toBe(200);
    const a = (await first.json()) as Record<string, unknown>;
    expect(a).toMatchObject({ status: "waiting_user", agent: "skill:interview", text: "Where to?" });
    for (const id of ["session_id", "task_id", "request_id"]) expect(a[id]).toMatch(/^[0-9a-f-]{36}$/);

    h.fake.script(reply(toolUse("complete", { result: "Rome" })), text("Rome it is."));
    const second = (await (await post(base, "/v1/messages", message("Rome", { task_id: a.task_id }))).json()) as Record<string, unknown>;
    expect(second).toMatchObject({ session_id: a.session_id, task_id: a.task_id, status: "completed", agent: "main", text: "Rome it is." });

    const task = (await (await fetch(`${base}/v1/tasks/${String(a.task_id)}`, { headers: { authorization: "Bearer tok-alice" } })).json()) as Record<string, unknown>;
    expect(task).toMatchObject({ task_id: a.task_id, status: "completed", owner: "http:alice", stack: [] });
    const said = (task.history as Array<{ agent?: string; role?: string; text?: string }>).filter((m) => m.role === "user");
    expect(said.map((m) => `${m.agent}: ${m.text}`)).toEqual(["main: plan a trip", "skill:interview: plan", "skill:interview: Rome"]);
    const session = (await (await fetch(`${base}/v1/sessions/${String(a.session_id)}`, { headers: { authorization: "Bearer tok-alice" } })).json()) as {
      tasks: unknown[];
    };
    expect(session.tasks).toHaveLength(1);
  });

  it("401 without or with a bad token, 403 for another user's task, 404 for an unknown one", async () => {
    const base = await boot();
    h.fake.script(text("hi"));
    const mine = (await (await post(base, "/v1/messages", message("hello"))).json()) as { task_id: string };
    expect((await fetch(`${base}/v1/messages`, { method: "POST", body: "{}" })).status).toBe(401);
    expect((await post(base, "/v1/messages", message("x"), "nope")).status).toBe(401);
    const other = await post(base, "/v1/messages", message("let me in", { task_id: mine.task_id }), "tok-bob");
    expect(other.status).toBe(403);
    expect(((await other.json()) as { error: { message: string } }).error.message).toBe("this task belongs to another user");
    expect((await post(base, "/v1/messages", message("x", { task_id: randomUUID() }))).status).toBe(404);
    expect((await fetch(`${base}/v1/tasks/${mine.task_id}`, { headers: { authorization: "Bearer tok-bob" } })).status).toBe(403);
  });

  it("400 naming the field for malformed bodies, 413 over 1 MB", async () => {
    const base = await boot();
    const errorOf = async (r: Response) => [r.status, ((await r.json()) as { error: { message: string } }).error.message];
    expect(await errorOf(await post(base, "/v1/messages", "{nope"))).toEqual([400, "the body is not valid JSON"]);
    expect(await errorOf(await post(base, "/v1/messages", { items: [] }))).toEqual([400, "items must hold at least one item"]);
    expect(await errorOf(await post(base, "/v1/messages", { items: [{ content_type: "image", content: "x" }] }))).toEqual([
      400,
      'items[0].content_type must be "text" or a MIME type such as image/png',
    ]);
    expect(await errorOf(await post(base, "/v1/messages", message("x", { session_id: "not-a-uuid" })))).toEqual([400, "session_id must be a UUID"]);
    expect((await post(base, "/v1/messages", message("x".repeat(1024 * 1024 + 10)))).status).toBe(413);
    expect(h.fake.calls).toHaveLength(0);
  });

  it("serialises two requests on the same task: the second waits, never interleaved", async () => {
    const base = await boot();
    h.fake.script(text("first answer"));
    const start = (await (await post(base, "/v1/messages", message("start"))).json()) as { task_id: string; session_id: string };
    const release = deferred<FakeReply>();
    const firstIn = deferred<void>();
    h.fake.script(
      () => {
        firstIn.resolve();
        return release.promise;
      },
      (req) => {
        // The second message reaches the model only after the first finished, with it in the history.
        expect(JSON.stringify(req.messages)).toContain("reply one");
        return text("reply two");
      },
    );
    const one = post(base, "/v1/messages", message("one", { session_id: start.session_id }));
    await firstIn.promise;
    const two = post(base, "/v1/messages", message("two", { session_id: start.session_id }));
    release.resolve(text("reply one"));
    const [a, b] = await Promise.all([one, two]);
    expect(((await a.json()) as { text: string }).text).toBe("reply one");
    expect(((await b.json()) as { text: string }).text).toBe("reply two");
  });

  it("a corrupt stored state row gives a 5xx with a request id, and other sessions carry on", async () => {
    const base = await boot({ dbFile: `/tmp/switchboard-http-${randomUUID()}.db` });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q?"));
    const first = (await (await post(base, "/v1/messages", message("go"))).json()) as { session_id: string };
    const db = new Database(h.dbFile);
    db.prepare("UPDATE frames SET data = '{}'").run();
    db.close();
    h.runtime.stacks.invalidate(`http:${first.session_id}`);
    const broken = await post(base, "/v1/messages", message("answer", { session_id: first.session_id }));
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({ error: { type: "internal_error" }, request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    h.fake.script(text("fine"));
    expect((await post(base, "/v1/messages", message("hello"))).status).toBe(200);
  });

  it("streams events over SSE with a keepalive, and a client that leaves does not cancel the task", async () => {
    const clock = manualTimeouts();
    const base = await boot({}, { timers: clock.timers });
    const release = deferred<FakeReply>();
    const childAsked = deferred<void>();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), () => {
      childAsked.resolve();
      return release.promise;
    });
    const res = await post(base, "/v1/messages", message("plan"), "tok-alice", { accept: "text/event-stream" });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = "";
    const until = async (needle: string) => {
      while (!received.includes(needle)) received += decoder.decode((await reader.read()).value ?? new Uint8Array(), { stream: true });
    };
    await childAsked.promise;
    await until("event: stack");
    clock.fire(15_000); // 15 s pass on the fake clock: the keepalive is due
    await until(": keepalive");
    release.resolve(text("Where to?"));
    await until("event: done");
    expect(received).toContain('event: stack\ndata: {"type":"push","agent":"skill:interview","depth":2}');
    expect(received).toContain('event: message\ndata: {"agent":"skill:interview","depth":2,"text":"Where to?","kind":"message"}');
    expect(received).toMatch(/event: done\ndata: \{"session_id":"[0-9a-f-]{36}","task_id":"[0-9a-f-]{36}"/);

    // Leave in the middle of the next turn: the task still finishes.
    const slow = deferred<FakeReply>();
    const slowIn = deferred<void>();
    h.fake.script(() => {
      slowIn.resolve();
      return slow.promise;
    });
    const controller = new AbortController();
    const sessionId = /"session_id":"([^"]+)"/.exec(received)![1]!;
    void post(base, "/v1/messages", message("Rome", { session_id: sessionId }), "tok-alice", { accept: "text/event-stream" }).then((r) => r.body?.cancel());
    await slowIn.promise;
    controller.abort();
    slow.resolve(reply(toolUse("complete", { result: "Rome" })));
    h.fake.script(text("Rome it is."));
    await h.gateway.idle();
    expect((await h.store.tasks.ofSession(`http:${sessionId}`))[0]!.status).toBe("completed");
  });
});

describe("JWT", () => {
  it("accepts a valid token and takes the user from oid, rejects expired and wrong-audience tokens", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" };
    const base = await boot({}, { keySet: { keys: [jwk] } });
    const sign = (claims: Record<string, unknown>, audience = "switchboard", expires = "5m") =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer("https://idp.test")
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(expires)
        .sign(privateKey);
    h.fake.script(text("hello carol"));
    const ok = await post(base, "/v1/messages", message("hi"), await sign({ oid: "carol", sub: "x" }));
    expect(ok.status).toBe(200);
    const task = (await ok.json()) as { task_id: string };
    expect((await h.store.tasks.get(task.task_id))?.ownerId).toBe("jwt:https://idp.test:carol");
    const expired = await new SignJWT({ sub: "dave" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer("https://idp.test")
      .setAudience("switchboard")
      .setIssuedAt(1_600_000_000)
      .setExpirationTime(1_600_000_100)
      .sign(privateKey);
    expect((await post(base, "/v1/messages", message("hi"), expired)).status).toBe(401);
    expect((await post(base, "/v1/messages", message("hi"), await sign({ sub: "dave" }, "someone-else"))).status).toBe(401);
  });
});

describe("approvals over HTTP", () => {
  it("announces the approval, decides by POST once, refuses others and repeats", async () => {
    const runs: string[] = [];
    const transfer = transferTool(runs);
    const base = await boot({ tools: [transfer] });
    h.fake.script(reply(toolUse("transfer", { amount: 5 })));
    const asked = (await (await post(base, "/v1/messages", message("send 5"))).json()) as {
      status: string;
      pending_approvals: Array<{ approval_id: string; tool: string }>;
    };
    expect(asked.status).toBe("waiting_approval");
    const [pending] = asked.pending_approvals;
    expect(pending).toMatchObject({ tool: "transfer", approval_id: expect.stringMatching(/^ap_[0-9a-f]{10}$/) });
    const decide = (token: string, decision = "approve") => post(base, `/v1/approvals/${pending!.approval_id}`, { decision }, token);
    expect((await decide("tok-bob")).status).toBe(403);
    h.fake.script(text("Sent."));
    const [a, b] = await Promise.all([decide("tok-alice"), decide("tok-alice", "deny")]);
    expect([a.status, b.status].sort((x, y) => x - y)).toEqual([200, 409]);
    await h.gateway.idle();
    expect(runs.length).toBeLessThanOrEqual(1);
    expect((await post(base, "/v1/approvals/ap_0000000000", { decision: "approve" })).status).toBe(404);
    expect((await post(base, `/v1/approvals/${pending!.approval_id}`, { decision: "maybe" })).status).toBe(400);
  });

  it("POST /v1/tasks/{id}/cancel stops a running task", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q?"));
    const started = (await (await post(base, "/v1/messages", message("go"))).json()) as { task_id: string };
    const cancelled = await post(base, `/v1/tasks/${started.task_id}/cancel`, {});
    expect(await cancelled.json()).toEqual({ task_id: started.task_id, status: "cancelled" });
    expect((await post(base, `/v1/tasks/${started.task_id}/cancel`, {})).status).toBe(409);
  });
});

describe("the web chat page", () => {
  it("is served at / without auth", async () => {
    const base = await boot();
    const page = await fetch(base + "/");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain("<title>Switchboard</title>");
  });
});
