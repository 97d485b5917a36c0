// The web chat page in a real browser: headless Chromium driven by playwright-core. Skipped, with a
// message, on machines without Chromium (`apt-get install chromium`, or set CHROMIUM_PATH).
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { randomIds } from "../../../src/runtime/deps.js";
import { HttpProvider } from "../../../providers/http/server.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../../helpers/harness.js";
import { transferTool } from "../../helpers/tools.js";

const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p): p is string => !!p && existsSync(p));
// CI installs Chromium (.ci/run): there a missing browser is a failure, not a skip.
if (!CHROMIUM && process.env.CI) throw new Error("CI must run the web chat browser test: install chromium or set CHROMIUM_PATH");
if (!CHROMIUM) console.warn("web chat browser test skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)");

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
});

describe.skipIf(!CHROMIUM)("web chat in headless Chromium", () => {
  it("chats with the stack, shows who speaks and the depth, and approves a pending tool", async () => {
    const runs: string[] = [];
    const transfer = transferTool(runs);
    h = await startHarness({ files: skillFile("interview", "Ask."), ids: randomIds, tools: [transfer] });
    api = new HttpProvider(h.gateway, { host: "127.0.0.1", port: 0, auth: { tokens: { "tok-web": "webuser" } }, log: silentLogger() });
    await api.start();
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "plan" })),
      text("Where to?"),
      reply(toolUse("complete", { result: "Rome" })),
      reply(toolUse("transfer", { amount: 5 })),
      text("Booked and paid."),
    );
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({
      executablePath: CHROMIUM!,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${api.port()}/`);
      await page.fill("#token", "tok-web");
      await page.dispatchEvent("#token", "change");
      await page.fill("#text", "plan a trip");
      await page.click("form button");
      await page.getByText("Where to?").waitFor();
      expect(await page.locator(".msg .who").last().textContent()).toBe("skill:interview · depth 2");
      await page.fill("#text", "Rome");
      await page.click("form button");
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByText("Booked and paid.").waitFor();
      expect(runs).toEqual(["sent"]);
      await page.screenshot({ path: "/tmp/switchboard-web-chat.png" });
    } finally {
      await browser.close();
    }
  });
});
