// What the web chat reads besides POST /v1/messages: the conversation so far (GET /v1/sessions/{id}/messages),
// the skills and agents on offer (GET /v1/catalog), and its own files under /assets — each with hostile input.
import { createHash, randomUUID } from "node:crypto";
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { agentFile, skillFile, type Harness, type HarnessOptions } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";
import { transferTool } from "../../helpers/tools.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
});

async function boot(options: HarnessOptions = {}) {
  let base: string;
  ({ h, api, base } = await startApi(options));
  return base;
}

const get = (base: string, path: string, token: string | null = "tok-alice") => fetch(base + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
const errorOf = async (r: Response) => [r.status, ((await r.json()) as { error: { message: string } }).error.message] as const;

/** A GET with the path exactly as written: fetch() would resolve `..` and decode before sending. */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

type Entry = { role: string; text: string; agent?: string; kind?: string; approval_id?: string; approval?: { status: string; tool: string } };
/** Who said what, leaving out the gateway's own remarks ("Interview skill finished."), which are configurable. */
const said = (messages: Entry[]) => messages.filter((m) => m.agent !== "switchboard").map((m) => `${m.role}/${m.agent ?? "-"}: ${m.text}`);

describe("GET /v1/sessions/{id}/messages", () => {
  it("returns what the user wrote and every reply in order, approvals with their state now", async () => {
    const base = await boot({ tools: [transferTool([])] });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), text("Where to?"));
    const first = (await (await post(base, "/v1/messages", message("plan a trip"))).json()) as { session_id: string };
    const sid = first.session_id;
    h.fake.script(reply(toolUse("complete", { result: "Rome" })), reply(toolUse("transfer", { amount: 5 })));
    const asked = (await (await post(base, "/v1/messages", message("Rome", { session_id: sid }))).json()) as { pending_approvals: Array<{ approval_id: string }> };
    const approvalId = asked.pending_approvals[0]!.approval_id;

    const pending = (await (await get(base, `/v1/sessions/${sid}/messages`)).json()) as { session_id: string; messages: Entry[]; has_more: boolean };
    expect(pending.session_id).toBe(sid);
    expect(pending.has_more).toBe(false);
    expect(said(pending.messages)).toEqual([
      "user/-: plan a trip",
      "assistant/skill:interview: Where to?",
      "user/-: Rome",
      expect.stringMatching(/^assistant\/main: .*transfer/s),
    ]);
    expect(pending.messages.at(-1)).toMatchObject({ kind: "notice", approval_id: approvalId, approval: { status: "pending", tool: "transfer" } });

    h.fake.script(text("Booked and paid."));
    expect((await post(base, `/v1/approvals/${approvalId}`, { decision: "approve" })).status).toBe(200);
    await h.gateway.idle();
    const after = (await (await get(base, `/v1/sessions/${sid}/messages`)).json()) as { messages: Entry[] };
    // The decision's resume is the gateway's bookkeeping, not something the user wrote: only its reply shows.
    expect(said(after.messages).slice(3)).toEqual([expect.stringMatching(/transfer/), "assistant/main: Booked and paid."]);
    expect(after.messages.find((m) => m.approval_id === approvalId)!.approval).toMatchObject({ status: "approved" });
    expect(after.messages.filter((m) => m.role === "user").map((m) => m.text)).toEqual(["plan a trip", "Rome"]);
  });

  it("keeps the newest `limit` entries and says older ones exist", async () => {
    const base = await boot();
    h.fake.script(text("one"));
    const { session_id: sid } = (await (await post(base, "/v1/messages", message("first"))).json()) as { session_id: string };
    h.fake.script(text("two"));
    await post(base, "/v1/messages", message("second", { session_id: sid }));
    const page = (await (await get(base, `/v1/sessions/${sid}/messages?limit=3`)).json()) as { messages: Entry[]; has_more: boolean };
    expect(page.messages.map((m) => m.text)).toEqual(["one", "second", "two"]);
    expect(page.has_more).toBe(true);
    const all = (await (await get(base, `/v1/sessions/${sid}/messages?limit=4`)).json()) as { messages: Entry[]; has_more: boolean };
    expect([all.messages.length, all.has_more]).toEqual([4, false]);
  });

  it("401 without a token, 400 on a bad id, 404 for an unknown session, 403 for another user's", async () => {
    const base = await boot();
    h.fake.script(text("hi"));
    const { session_id: sid } = (await (await post(base, "/v1/messages", message("hello"))).json()) as { session_id: string };
    expect((await get(base, `/v1/sessions/${sid}/messages`, null)).status).toBe(401);
    expect(await errorOf(await get(base, "/v1/sessions/not-a-uuid/messages"))).toEqual([400, "session_id must be a UUID"]);
    expect(await errorOf(await get(base, "/v1/sessions/%2e%2e%2fx/messages"))).toEqual([400, "session_id must be a UUID"]);
    const unknown = randomUUID();
    expect(await errorOf(await get(base, `/v1/sessions/${unknown}/messages`))).toEqual([404, `no session ${unknown}`]);
    expect(await errorOf(await get(base, `/v1/sessions/${sid}/messages`, "tok-bob"))).toEqual([403, "this session belongs to another user"]);
  });

  it("refuses odd limits with 400 naming the parameter and its range", async () => {
    const base = await boot();
    h.fake.script(text("hi"));
    const { session_id: sid } = (await (await post(base, "/v1/messages", message("hello"))).json()) as { session_id: string };
    for (const limit of ["0", "-1", "1001", "99999999999999999999", "abc", "1e3", "1.5", "", "%205", "0x10", "%2B5", "07", "5&limit=6", "NaN", "Infinity"]) {
      const [status, text] = await errorOf(await get(base, `/v1/sessions/${sid}/messages?limit=${limit}`));
      expect([limit, status]).toEqual([limit, 400]);
      expect(text).toMatch(/^limit must be (a whole number from 1 to 1000, got ".*"|given once)$/);
    }
    expect((await get(base, `/v1/sessions/${sid}/messages?limit=1000`)).status).toBe(200);
  });
});

describe("GET /v1/catalog", () => {
  it("needs a token and lists only the skills and agents that can be used now", async () => {
    const base = await boot({
      files: { ...skillFile("interview", "Ask."), ...skillFile("vault", "Secret.", "env: [VAULT_TOKEN]\n"), ...agentFile("trip-planner", "Plan.") },
    });
    expect((await get(base, "/v1/catalog", null)).status).toBe(401);
    expect((await get(base, "/v1/catalog", "nope")).status).toBe(401);
    const catalog = await get(base, "/v1/catalog");
    expect(catalog.status).toBe(200);
    expect(await catalog.json()).toEqual({
      skills: [{ name: "interview", description: "The interview skill for tests." }],
      agents: [{ name: "trip-planner", description: "The trip-planner agent for tests." }],
    });
  });
});

describe("the web chat's files", () => {
  const ASSETS = { "/assets/marked.js": "text/javascript", "/assets/purify.js": "text/javascript", "/assets/chat.js": "text/javascript", "/assets/chat.css": "text/css" };

  it("serves the script, style and libraries without a token, cached long, pinned by hash in the page", async () => {
    const base = await boot();
    const page = await fetch(base + "/");
    const html = await page.text();
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(html).not.toMatch(/<script>|<style>/);
    for (const [path, type] of Object.entries(ASSETS)) {
      const res = await fetch(base + path);
      expect([path, res.status, res.headers.get("content-type")]).toEqual([path, 200, `${type}; charset=utf-8`]);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("cache-control")).toContain("max-age=31536000");
      const body = Buffer.from(await res.arrayBuffer());
      const integrity = `sha384-${createHash("sha384").update(body).digest("base64")}`;
      expect(html).toMatch(new RegExp(`"${path}\\?v=[0-9a-f]{12}" integrity="${integrity.replace(/[+/]/g, "\\$&")}"`));
    }
    expect(await (await fetch(base + "/assets/marked.js")).text()).toContain("marked v18");
    expect(await (await fetch(base + "/assets/purify.js")).text()).toContain("DOMPurify");
  });

  it("answers 404 to anything but those exact paths: traversal, encodings, other methods", async () => {
    const base = await boot();
    const attempts = [
      "/assets/../package.json",
      "/assets/%2e%2e/package.json",
      "/assets/%2E%2E/%2E%2E/package.json",
      "/assets/..%2fpackage.json",
      "/assets/%2e%2e%2fpackage.json",
      "/assets/..%5cpackage.json",
      "/assets/chat.js/../../package.json",
      "/assets/../node_modules/marked/package.json",
      "/assets/marked.js%00.json",
      "/assets/MARKED.JS",
      "/assets/",
      "/assets",
      "/assets/chat.ts",
      "/assets/assets.ts",
      "/package.json",
    ];
    for (const path of attempts) {
      const res = await rawGet(base, path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body).not.toContain('"switchboard"');
    }
    const posted = await fetch(base + "/assets/chat.js", { method: "POST" });
    expect(posted.status).toBe(404);
  });
});
