// The admin API (/admin/api/*) on the real HTTP server: admin tokens only, read-only JSON views, and the live
// stream of snapshots, its coalescing timer driven by hand.
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalItem, SessionDetail, SessionRow, Snapshot, StuckView } from "../../../src/admin/report.js";
import { silentLogger } from "../../../src/log.js";
import { randomIds } from "../../../src/runtime/deps.js";
import { HttpProvider } from "../../../providers/http/server.js";
import { reply, toolUse } from "../../fakes/anthropic/server.js";
import { seedWaitingApproval } from "../../admin/seed.js";
import { startHarness, type Harness } from "../../helpers/harness.js";
import { TOKENS } from "../../helpers/http-api.js";
import { manualTimeouts } from "../../helpers/timers.js";
import { bankTools } from "../../helpers/tools.js";

const ADMIN = "adm-0123456789abcdef";
const OLD = "telegram:-100123:topic:7";
const HOUR = 3_600_000;

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = undefined!;
});

/** alice's transfer waits for approval in console:t (now); another has waited in a Telegram topic for two hours. */
async function boot(admin: Map<string, string> = new Map([[ADMIN, "ops"]]), timers = manualTimeouts().timers) {
  h = await startHarness({ tools: bankTools().list, ids: randomIds });
  await seedWaitingApproval(h.dbFile, { sessionKey: OLD, at: Date.now() - 2 * HOUR, id: "old", skill: true });
  h.fake.script(reply(toolUse("transfer", { amount: 50 })));
  await h.send("send Bob 50");
  api = new HttpProvider(h.gateway, {
    host: "127.0.0.1",
    port: 0,
    auth: { tokens: TOKENS },
    log: silentLogger(),
    timers,
    keepaliveMs: 15_000,
    admin: { tokens: admin, stuckAfterMs: 5 * 60_000 },
  });
  await api.start();
  return `http://127.0.0.1:${api.port()}`;
}

const get = (base: string, path: string, token: string | null = ADMIN) => fetch(base + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
async function errorOf(r: Response) {
  const body = (await r.json()) as { type: string; error: { type: string; message: string }; request_id: string };
  expect(body.type).toBe("error");
  expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  return [r.status, body.error.type, body.error.message];
}

/** Server-Sent Events as raw blocks ("event: snapshot\ndata: …", ": keepalive"), one at a time. */
function blocks(r: Response) {
  const reader = r.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return async function next(): Promise<string> {
    for (;;) {
      const at = buffer.indexOf("\n\n");
      if (at >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        return block;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended");
      buffer += decoder.decode(value, { stream: true });
    }
  };
}
function snapshotOf(block: string): Snapshot {
  const m = /^event: snapshot\ndata: (.*)$/.exec(block);
  if (!m) throw new Error(`not a snapshot: ${block}`);
  return JSON.parse(m[1]!) as Snapshot;
}

describe("admin API", () => {
  it("401 without a token, with a wrong one and with an HTTP API token; admin tokens are no API tokens", async () => {
    const base = await boot();
    expect(await errorOf(await get(base, "/admin/api/sessions", null))).toEqual([401, "authentication_error", expect.stringContaining("missing admin token")]);
    expect(await errorOf(await get(base, "/admin/api/sessions", "adm-wrong"))).toEqual([401, "authentication_error", expect.stringContaining("invalid admin token")]);
    expect(await errorOf(await get(base, "/admin/api/events", "tok-alice"))).toEqual([401, "authentication_error", expect.stringContaining("not HTTP API tokens")]);
    expect(await errorOf(await get(base, `/admin/api/sessions/${encodeURIComponent(OLD)}`, "tok-alice"))).toEqual([401, "authentication_error", expect.any(String)]);
    expect((await get(base, "/v1/catalog", ADMIN)).status).toBe(401);
    expect((await get(base, "/v1/catalog", "tok-alice")).status).toBe(200);
    expect((await get(base, "/admin/api/approvals", ADMIN)).status).toBe(200);
  });

  it("when ADMIN_TOKENS is empty the API is a 404 saying so, and the page says how to turn it on", async () => {
    const base = await boot(new Map());
    for (const path of ["/admin/api/sessions", "/admin/api/events", "/admin/api/sessions/x"]) {
      const r = await get(base, path, ADMIN);
      expect(await r.json()).toEqual({
        type: "error",
        error: { type: "not_found_error", message: "the admin view is off: set ADMIN_TOKENS" },
        request_id: expect.any(String),
      });
      expect(r.status).toBe(404);
    }
    const page = await get(base, "/admin", null);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("The admin view is off");
    expect(html).toContain("ADMIN_TOKENS=");
    expect(html).not.toContain("<script");
  });

  it("serves the page shell and its files without a token, under a strict policy, with no data in them", async () => {
    const base = await boot();
    const page = await get(base, "/admin", null);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).toContain("trusted-types 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const html = await page.text();
    expect(html).not.toContain(OLD);
    expect(html).not.toMatch(/<script>|<style>| on\w+=/);
    const src = /<script defer src="(\/admin\/assets\/admin\.js)\?v=\w+" integrity="sha384-[\w+/=]+"><\/script>/.exec(html);
    expect(src).not.toBeNull();
    const js = await get(base, "/admin/assets/admin.js", null);
    expect([js.status, js.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect((await get(base, "/admin/assets/admin.css", null)).headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect((await get(base, "/admin/assets/other.js", null)).status).toBe(404);
    expect((await get(base, "/admin/api/nope")).status).toBe(404);
    const post = await fetch(`${base}/admin/api/sessions`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` } });
    expect(await errorOf(post)).toEqual([405, "invalid_request_error", expect.stringContaining("read-only")]);
  });

  it("answers sessions, one session, approvals and stuck work as JSON", async () => {
    const base = await boot();
    const { sessions } = (await (await get(base, "/admin/api/sessions")).json()) as { sessions: SessionRow[] };
    expect(sessions.map((s) => [s.key, s.status, s.stack, s.pendingApprovals])).toEqual([
      ["console:t", "waiting_approval", ["main"], 1],
      [OLD, "waiting_approval", ["main", "skill:interview"], 1],
    ]);
    expect(((await (await get(base, "/admin/api/sessions?limit=1")).json()) as { sessions: SessionRow[] }).sessions).toHaveLength(1);

    const detail = (await (await get(base, `/admin/api/sessions/${encodeURIComponent(OLD)}`)).json()) as SessionDetail;
    expect(detail.session).toMatchObject({ key: OLD, provider: "telegram", owner: "telegram:1001" });
    expect(detail.frames.map((f) => f.agent)).toEqual(["main", "skill:interview"]);
    expect(detail.task).toMatchObject({ id: "task_old", status: "waiting_approval", costUsd: 0 });
    expect(detail.approvals).toEqual([
      expect.objectContaining({ id: "ap_old", tool: "transfer", agent: "skill:interview", input: '{"amount":900}', requestId: "req_old", taskId: "task_old" }),
    ]);
    expect(detail.errors).toEqual([]);

    const { approvals } = (await (await get(base, "/admin/api/approvals")).json()) as { approvals: ApprovalItem[] };
    expect(approvals.map((a) => [a.sessionKey, a.tool])).toEqual([
      [OLD, "transfer"],
      ["console:t", "transfer"],
    ]);
    expect(approvals[0]!.ageMs).toBeGreaterThanOrEqual(2 * HOUR);

    const stuck = (await (await get(base, "/admin/api/stuck")).json()) as StuckView;
    expect(stuck.olderThanMs).toBe(5 * 60_000);
    expect(stuck.approvals.map((a) => a.id)).toEqual(["ap_old"]);
    expect(stuck.outbound.map((o) => o.id)).toEqual(["out_old"]);
  });

  it("400 for a key too long or badly encoded and a bad limit, 404 for an unknown session, never a 500", async () => {
    const base = await boot();
    const at = (path: string) => get(base, path).then(errorOf);
    expect(await at(`/admin/api/sessions/${"k".repeat(513)}`)).toEqual([400, "invalid_request_error", "the session key is longer than 512 characters"]);
    expect(await at(`/admin/api/sessions/${"%F0%9F%92%A5".repeat(600)}`)).toEqual([400, "invalid_request_error", "the session key is longer than 512 characters"]);
    expect(await at("/admin/api/sessions/%E0%A4%A")).toEqual([400, "invalid_request_error", expect.stringContaining("not valid URL encoding")]);
    expect(await at("/admin/api/sessions/%ZZ")).toEqual([400, "invalid_request_error", expect.stringContaining("not valid URL encoding")]);
    expect(await at("/admin/api/sessions?limit=0")).toEqual([400, "invalid_request_error", "limit must be a whole number from 1 to 500"]);
    expect(await at(`/admin/api/sessions/${encodeURIComponent('console:<img src=x onerror="alert(1)">\x1b[2J')}`)).toEqual([404, "not_found_error", "no such session"]);
    expect((await get(base, `/admin/api/sessions/${"k".repeat(512)}`)).status).toBe(404);
  });

  it("streams a snapshot at once and a fresh one after a burst of changes, one refresh per window; stops on disconnect", async () => {
    const clock = manualTimeouts();
    const base = await boot(undefined, clock.timers);
    // Count the stream's subscriptions to the store's changes.
    const watch = h.store.feed.watch.bind(h.store.feed);
    let unsubscribed!: () => void;
    const gone = new Promise<void>((resolve) => (unsubscribed = resolve));
    h.store.feed.watch = (listener) => {
      const stop = watch(listener);
      return () => {
        stop();
        unsubscribed();
      };
    };
    const abort = new AbortController();
    const r = await fetch(`${base}/admin/api/events`, { headers: { authorization: `Bearer ${ADMIN}` }, signal: abort.signal });
    expect([r.status, r.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
    const next = blocks(r);
    const first = snapshotOf(await next());
    expect(first.counts).toMatchObject({ activeStacks: 2, pendingApprovals: 2 });
    expect(first.stuck.approvals.map((a) => a.id)).toEqual(["ap_old"]);
    expect(first.approvals).toHaveLength(2);
    expect(first.sessions).toHaveLength(2);

    // A whole turn (request stored, steps committed, replies, done) is one burst: one refresh scheduled.
    h.fake.script(reply(toolUse("transfer", { amount: 7 })));
    await h.send("send Carol 7", { session: "carol", user: "carol" });
    expect(clock.count(250)).toBe(1);
    clock.fire(250);
    const second = snapshotOf(await next());
    expect(second.counts).toMatchObject({ activeStacks: 3, pendingApprovals: 3 });
    expect(second.approvals.map((a) => a.sessionKey)).toContain("console:carol");
    expect(clock.count(250)).toBe(0);

    clock.fire(15_000);
    expect(await next()).toBe(": keepalive");
    expect(clock.count(15_000)).toBe(1);

    abort.abort();
    await gone;
    expect([clock.count(250), clock.count(15_000)]).toEqual([0, 0]);
    await h.store.feed.announce({ kind: "stack", sessionKey: "console:t", event: { type: "push", agent: "main", depth: 1 } });
    expect(clock.count(250)).toBe(0);
  });
});
