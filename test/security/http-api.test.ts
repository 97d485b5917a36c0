// The HTTP API's door, attacked the way the review did: token look-ups on a plain object, session squatting,
// identities that cross doors, broken idempotency, a full disk, unknown routes and a taken port. Real server,
// real runtime, real Anthropic SDK against the strict fake.
import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpProvider } from "../../providers/http/server.js";
import { randomIds } from "../../src/runtime/deps.js";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic, type FakeReply } from "../fakes/anthropic/server.js";
import { deferred, heldStep } from "../helpers/deferred.js";
import type { Harness, HarnessOptions } from "../helpers/harness.js";
import { message, post, startApi, type ApiExtra } from "../helpers/http-api.js";
import { transferTool } from "../helpers/tools.js";
import { run } from "../integration/child-process.js";
import { failCommits } from "../helpers/steps.js";

let h: Harness | undefined;
let api: HttpProvider | undefined;
let fake: FakeAnthropic | undefined;
let dir = "";
afterEach(async () => {
  await api?.stop();
  await h?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = api = fake = undefined;
  dir = "";
});

async function boot(options: HarnessOptions = {}, extra: ApiExtra = {}): Promise<{ h: Harness; base: string }> {
  const started = await startApi(options, extra);
  ({ h, api } = started);
  return { h: started.h, base: started.base };
}

const json = async (r: Response) => (await r.json()) as Record<string, unknown>;
const get = (base: string, path: string, token: string) => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });

describe("bearer tokens", () => {
  const names = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf", "__defineGetter__"];

  it.each([
    ["no tokens configured", new Map<string, string>()],
    ["tokens configured", undefined],
  ])("refuses Object.prototype names as tokens (%s)", async (_label, tokens) => {
    const { h, base } = await boot({}, tokens ? { tokens } : {});
    for (const name of names) {
      const r = await post(base, "/v1/messages", message("hi"), name);
      expect(r.status, name).toBe(401);
    }
    expect(h.fake.calls).toHaveLength(0);
  });

  it("answers 404 for unknown routes before asking for a token, 401 for known ones without one", async () => {
    const { base } = await boot();
    for (const path of ["/admin", "/v1/nothing", "/v1/tasks", "/.env", "/v1/messages/extra"]) {
      expect((await fetch(base + path)).status, path).toBe(404);
    }
    expect((await fetch(base + "/v1/tasks/x")).status).toBe(401);
    expect((await fetch(base + "/v1/messages", { method: "POST", body: "{}" })).status).toBe(401);
  });
});

describe("the web chat page", () => {
  it("cannot be framed by another site and loads nothing from elsewhere", async () => {
    const { base } = await boot();
    const page = await fetch(base + "/");
    expect(page.status).toBe(200);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect((await fetch(base + "/nope")).headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("identities carry their source", () => {
  it("a JWT whose subject equals a static-token user's name is another user", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" };
    const { h, base } = await boot({}, { keySet: { keys: [jwk] } });
    h.fake.script(text("hello alice"));
    const mine = await json(await post(base, "/v1/messages", message("hi")));
    const jwt = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer("https://idp.test")
      .setAudience("switchboard")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
    expect((await get(base, `/v1/sessions/${String(mine.session_id)}`, jwt)).status).toBe(403);
    expect((await post(base, "/v1/messages", message("me too", { session_id: mine.session_id }), jwt)).status).toBe(403);
    expect((await h.store.tasks.get(String(mine.task_id)))?.ownerId).toBe("http:alice");
  });

  it("an HTTP user named like a Telegram user id cannot decide that Telegram user's approval", async () => {
    const runs: string[] = [];
    const { h, base } = await boot({ tools: [transferTool(runs)] }, { tokens: new Map([["tok-4242", "4242"]]) });
    h.fake.script(reply(toolUse("transfer", { amount: 5 })));
    await h.gateway.submit({ sessionKey: "telegram:4242", messageId: "1", userId: "telegram:4242", text: "pay" });
    await h.gateway.idle();
    const [approval] = await h.store.approvals.pending("telegram:4242");
    const r = await post(base, `/v1/approvals/${approval!.id}`, { decision: "approve" }, "tok-4242");
    expect(r.status).toBe(403);
    expect((await h.store.approvals.get(approval!.id))?.status).toBe("pending");
    expect(runs).toEqual([]);
  });
});

describe("session ownership", () => {
  it("a second user posting to a brand-new session during its first model call is refused, and sees nothing", async () => {
    const { h, base } = await boot();
    const held = heldStep<FakeReply>();
    h.fake.script(held.step);
    const sessionId = "6f1c0a5e-2b9d-4c1e-9a59-0d5d0c7e6a11";
    const first = post(base, "/v1/messages", message("my secret plan", { session_id: sessionId }));
    await held.entered;
    const squat = await post(base, "/v1/messages", message("show me", { session_id: sessionId }), "tok-bob");
    expect(squat.status).toBe(403);
    expect(JSON.stringify(await squat.json())).not.toContain("secret");
    held.release(text("noted"));
    expect((await json(await first)).text).toBe("noted");
    expect((await h.store.requests.ofSession(`http:${sessionId}`)).map((r) => r.userId)).toEqual(["http:alice"]);
    expect(h.fake.calls).toHaveLength(1);
    expect((await get(base, `/v1/sessions/${sessionId}`, "tok-bob")).status).toBe(403);
  });

  it("the owner is claimed with the first request itself: a racing second user is refused before anything runs", async () => {
    const { h, base } = await boot();
    h.fake.script(text("one"));
    const sessionId = "0b0e54a4-9f73-4b0c-8a53-7c0a8b8e2f10";
    const [a, b] = await Promise.all([
      post(base, "/v1/messages", message("first", { session_id: sessionId })),
      post(base, "/v1/messages", message("second", { session_id: sessionId }), "tok-bob"),
    ]);
    expect([a.status, b.status].sort((x, y) => x - y)).toEqual([200, 403]);
    expect(await h.store.requests.ofSession(`http:${sessionId}`)).toHaveLength(1);
  });
});

describe("Idempotency-Key", () => {
  const key = (k: string) => ({ "idempotency-key": k });

  it("a retry after completion gets the same answer; the model runs once", async () => {
    const { h, base } = await boot();
    h.fake.script(text("only once"));
    const first = await json(await post(base, "/v1/messages", message("hi"), "tok-alice", key("k-1")));
    const again = await post(base, "/v1/messages", message("hi"), "tok-alice", key("k-1"));
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(first);
    expect(first.text).toBe("only once");
    expect(h.fake.calls).toHaveLength(1);
  });

  it("concurrent retries wait for the first and get its answer", async () => {
    const { h, base } = await boot();
    const held = heldStep<FakeReply>();
    h.fake.script(held.step);
    const tries = [1, 2, 3].map(() => post(base, "/v1/messages", message("hi"), "tok-alice", key("k-2")));
    await held.entered;
    held.release(text("answer"));
    const answers = await Promise.all(tries.map(async (t) => json(await t)));
    expect(answers.map((a) => a.text)).toEqual(["answer", "answer", "answer"]);
    expect(new Set(answers.map((a) => a.session_id)).size).toBe(1);
    expect(h.fake.calls).toHaveLength(1);
  });

  it("a first message retried without session_id stays in one session", async () => {
    const { h, base } = await boot();
    h.fake.script(text("hello"));
    const a = await json(await post(base, "/v1/messages", message("start"), "tok-alice", key("k-3")));
    const b = await json(await post(base, "/v1/messages", message("start"), "tok-alice", key("k-3")));
    expect(b.session_id).toBe(a.session_id);
    expect(h.fake.calls).toHaveLength(1);
  });

  it("keys are per user, and a reused key with another body is refused with 422", async () => {
    const { h, base } = await boot();
    h.fake.script(text("for alice"), text("for bob"));
    expect((await json(await post(base, "/v1/messages", message("hi"), "tok-alice", key("same")))).text).toBe("for alice");
    expect((await json(await post(base, "/v1/messages", message("hi"), "tok-bob", key("same")))).text).toBe("for bob");
    const other = await post(base, "/v1/messages", message("something else"), "tok-alice", key("same"));
    expect(other.status).toBe(422);
    expect(h.fake.calls).toHaveLength(2);
  });

  it("a retry after a restart gets the answer the first request got", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-idem-"));
    const options: HarnessOptions = { fake, dbFile: join(dir, "db.sqlite"), ids: randomIds };
    let { h: first, base } = await boot(options);
    fake.script(text("before the restart"));
    const a = await json(await post(base, "/v1/messages", message("hi"), "tok-alice", key("k-4")));
    await api!.stop();
    await first.close(true);
    ({ base } = await boot(options));
    const b = await json(await post(base, "/v1/messages", message("hi"), "tok-alice", key("k-4")));
    expect(b).toEqual(a);
    expect(b.text).toBe("before the restart");
    expect(fake.calls).toHaveLength(1);
  });

  it("a retry of a request cut off by a crash waits for its resumption instead of answering text: null", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-idem-"));
    const options: HarnessOptions = { fake, dbFile: join(dir, "db.sqlite"), ids: randomIds };
    const { h: first, base } = await boot(options);
    const inModel = deferred<void>();
    fake.script(() => {
      inModel.resolve();
      return { hang: true };
    });
    void post(base, "/v1/messages", message("hi"), "tok-alice", key("k-5")).catch(() => {});
    await inModel.promise;
    await api!.stop();
    first.crash();
    await first.close(true);
    const { h: second, base: base2 } = await boot(options);
    fake.script(text("resumed"));
    const retry = post(base2, "/v1/messages", message("hi"), "tok-alice", key("k-5"));
    await second.gateway.recover();
    expect((await json(await retry)).text).toBe("resumed");
  });

  it("a client key equal to the internal id of an approval's resume does not stop the approval from resuming", async () => {
    const runs: string[] = [];
    const { h, base } = await boot({ tools: [transferTool(runs)] });
    h.fake.script(reply(toolUse("transfer", { amount: 1 })));
    const asked = await json(await post(base, "/v1/messages", message("pay")));
    const approvalId = (asked.pending_approvals as Array<{ approval_id: string }>)[0]!.approval_id;
    await post(base, "/v1/messages", message("are you there?", { session_id: asked.session_id }), "tok-alice", key(`approval:${approvalId}`));
    h.fake.script(text("paid"));
    const decided = await post(base, `/v1/approvals/${approvalId}`, { decision: "approve" });
    expect(decided.status).toBe(200);
    const { request_id } = (await decided.json()) as { request_id: string };
    await h.gateway.whenDone(request_id);
    expect(runs).toEqual(["sent"]);
    expect((await h.store.outbox.ofRequest(request_id)).map((m) => m.text)).toEqual(["paid"]);
  });
});

describe("a full disk", () => {
  it("a retry with the same key gets the failure at once, and the failed message never runs later", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-full-"));
    const options: HarnessOptions = { fake, dbFile: join(dir, "db.sqlite"), ids: randomIds };
    const { h: first, base } = await boot(options);
    fake.script(text("cannot be stored"));
    const free = failCommits(first.store, Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }));
    const failed = await post(base, "/v1/messages", message("first"), "tok-alice", key("k-full"));
    expect(failed.status).toBe(500);
    const retry = await post(base, "/v1/messages", message("first"), "tok-alice", key("k-full"));
    expect(retry.status).toBe(500);
    free();
    // Newer messages go through once the disk has room again.
    fake.script(text("second answer"));
    const newer = await json(await post(base, "/v1/messages", message("second"), "tok-alice"));
    expect(newer.text).toBe("second answer");
    await api!.stop();
    await first.close(true);
    const { h: second } = await boot(options);
    const calls = fake.calls.length;
    expect(await second.gateway.recover()).toBe(0);
    await second.gateway.idle();
    expect(fake.calls).toHaveLength(calls);
    const [request] = await second.store.requests.unfinished();
    expect(request).toBeUndefined();

    function key(k: string) {
      return { "idempotency-key": k };
    }
  });
});

describe("startup", () => {
  it("a second gateway on a taken HTTP_PORT prints one line naming HTTP_PORT and exits 1", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    dir = mkdtempSync(join(tmpdir(), "switchboard-port-"));
    try {
      const p = run("src/main.ts", [], {
        DATA_DIR: join(dir, "data"),
        SKILLS_DIR: join(dir, "s"),
        AGENTS_DIR: join(dir, "a"),
        HTTP_PORT: String(port),
        LOG_LEVEL: "error",
      });
      expect(await p.exited).toBe(1);
      const lines = p.stderr.trim().split("\n");
      expect(lines).toEqual([`HTTP_PORT ${port} on 127.0.0.1 is already in use (is another Switchboard running?); stop it or set HTTP_PORT to a free port`]);
    } finally {
      blocker.close();
    }
  });
});
