// The admin page in a real browser: headless Chromium driven by playwright-core, like the web chat's test (and
// skipped, with a message, on machines without Chromium, except in CI).
import type { Page } from "playwright-core";
import { browserPerFile, CHROMIUM } from "../../helpers/browser.js";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { randomIds } from "../../../src/runtime/deps.js";
import { HttpProvider } from "../../../providers/http/server.js";
import { reply, toolUse } from "../../fakes/anthropic/server.js";
import { seedWaitingApproval } from "../../admin/seed.js";
import { startHarness, type Harness } from "../../helpers/harness.js";
import { TOKENS } from "../../helpers/http-api.js";
import { bankTools } from "../../helpers/tools.js";

const ADMIN = "adm-0123456789abcdef";
const XSS = "<img src=x onerror=window.__pwned=1>";
const HOSTILE_KEY = `console:${XSS}`;
const HOUR = 3_600_000;

const web = browserPerFile("admin page browser test");

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await web.closePage();
  await api?.stop();
  await h?.close();
  // A CSP or Trusted Types violation, a failed request or a script error is a bug in the page even when the test passed.
  web.checkErrors();
});

/**
 * The gateway with an approval that has waited two hours in a session whose key is markup (its tool input too),
 * and a page on /admin.
 */
async function open(options: { viewport?: { width: number; height: number }; admin?: boolean } = {}): Promise<Page> {
  h = await startHarness({ tools: bankTools().list, ids: randomIds });
  await seedWaitingApproval(h.dbFile, { sessionKey: HOSTILE_KEY, at: Date.now() - 2 * HOUR, id: "old", skill: true, input: { amount: 900, note: XSS } });
  api = new HttpProvider(h.gateway, {
    host: "127.0.0.1",
    port: 0,
    auth: { tokens: TOKENS },
    log: silentLogger(),
    admin: { tokens: new Map(options.admin === false ? [] : [[ADMIN, "ops"]]), stuckAfterMs: 5 * 60_000 },
  });
  await api.start();
  const page = await web.page(options.viewport ? { viewport: options.viewport } : {});
  await page.goto(`http://127.0.0.1:${api.port()}/admin`);
  return page;
}

async function login(page: Page, token = ADMIN) {
  await page.fill("#token", token);
  await page.click("#login button");
}

async function expectNothingRan(page: Page) {
  expect(await page.evaluate("window.__pwned")).toBeUndefined();
  expect(await page.locator("main img, main [onerror]").count()).toBe(0);
}

describe.skipIf(!CHROMIUM)("admin page in headless Chromium", () => {
  it("shows a stuck approval, a new approval live, and a session's detail; markup in keys and inputs stays text", async () => {
    const page = await open();
    await login(page);
    await page.locator("#status", { hasText: "live" }).waitFor();
    const stuck = page.locator("#stuck");
    await stuck.getByText(HOSTILE_KEY).first().waitFor();
    expect(await stuck.locator("h2").textContent()).toBe("Stuck for over 5m");
    expect(await stuck.textContent()).toContain("transfer");
    expect(await stuck.textContent()).toContain(`{"amount":900,"note":"${XSS}"}`);
    expect(await page.locator("#counts").textContent()).toMatch(/1Active stacks0Queued1Pending approvals0Undeliverable1Outbox backlog/);
    expect(await page.evaluate("sessionStorage.getItem('sb.admin.token')")).toBe(ADMIN);
    await expectNothingRan(page);

    // A new approval appears without a reload.
    h.fake.script(reply(toolUse("transfer", { amount: 7 })));
    await h.send("send Carol 7", { session: "carol", user: "carol" });
    await page.locator("#approvals").getByText("console:carol").waitFor();
    await page.locator("#counts", { hasText: "2Pending approvals" }).waitFor();
    expect(await page.locator("#stuck").getByText("console:carol").count()).toBe(0);

    await page.locator("#sessions").getByRole("button", { name: HOSTILE_KEY }).click();
    const detail = page.locator("#detail");
    await detail.getByText("task_old").waitFor();
    const text = (await detail.textContent())!;
    expect(text).toContain(HOSTILE_KEY);
    expect(text).toContain("Interview skill");
    expect(text).toContain("needs approval");
    expect(text).toMatch(/Pending approvals.*transfer/);
    // Each approval names the request whose turn it paused.
    expect(text).toMatch(/Paused request.*req_old/);
    expect(text).toContain("Last errors");
    await expectNothingRan(page);
    // Read-only: the only buttons open or close views.
    const buttons = await page.locator("main button").evaluateAll((els) => els.map((e) => e.textContent));
    expect(buttons.every((b) => b === "Close" || b!.startsWith("console:"))).toBe(true);
    await page.screenshot({ path: "/tmp/switchboard-admin.png", fullPage: true });
  });

  it("says it is reconnecting when the stream drops, and is live again when the server is back", async () => {
    const page = await open();
    await login(page);
    await page.locator("#status", { hasText: "live" }).waitFor();
    const port = api.port()!;
    await api.stop();
    await page.locator("#status", { hasText: "reconnecting…" }).waitFor();
    // Back on the same address before the page's first retry (1 s), with something new to show.
    h.fake.script(reply(toolUse("transfer", { amount: 7 })));
    await h.send("send Carol 7", { session: "carol", user: "carol" });
    api = new HttpProvider(h.gateway, {
      host: "127.0.0.1",
      port,
      auth: { tokens: TOKENS },
      log: silentLogger(),
      admin: { tokens: new Map([[ADMIN, "ops"]]), stuckAfterMs: 5 * 60_000 },
    });
    await api.start();
    await page.locator("#approvals").getByText("console:carol").waitFor();
    await page.locator("#status", { hasText: "live" }).waitFor();
    // The browser logs the stream that was cut off itself; that one is expected.
    expect(web.errors.splice(0)).toEqual([expect.stringContaining("net::ERR_INCOMPLETE_CHUNKED_ENCODING")]);
  });

  it("fits a 390 px wide phone: tables become cards, nothing scrolls sideways", async () => {
    const page = await open({ viewport: { width: 390, height: 844 } });
    h.fake.script(reply(toolUse("transfer", { amount: 7, note: "x".repeat(400) })));
    await h.send("send Carol 7", { session: `carol-${"long".repeat(30)}`, user: "carol" });
    await login(page);
    await page.locator("#approvals").getByText("xxxxxxxx").waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.locator("#sessions").getByRole("button", { name: HOSTILE_KEY }).click();
    await page.locator("#detail").getByText("task_old").waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    const size = await page.evaluate("parseFloat(getComputedStyle(document.querySelector('#approvals td')).fontSize)");
    expect(size).toBeGreaterThanOrEqual(14);
    await page.screenshot({ path: "/tmp/switchboard-admin-phone.png", fullPage: true });
  });

  it("refuses an HTTP API token, and says how to turn the view on when it is off", async () => {
    const page = await open();
    await login(page, "tok-alice");
    await page.locator("#status", { hasText: "token refused" }).waitFor();
    expect(await page.locator("#notice").textContent()).toContain("ADMIN_TOKENS");
    expect(await page.locator("#sessions td").count()).toBe(0);
    // The browser logs the refused request itself; that one is expected.
    expect(web.errors.splice(0)).toEqual([expect.stringContaining("401")]);
    await web.closePage();
    await api.stop();
    await h.close();

    const off = await open({ admin: false });
    expect(await off.locator("h2").textContent()).toBe("The admin view is off");
    expect(await off.locator("main").textContent()).toContain("ADMIN_TOKENS=");
  });
});
