// The daily quotas and flood control as a person at the web chat meets them, in headless Chromium: the refusal says
// which limit and when it resets (once, in the conversation), the next day the chat goes on; a message sent too fast
// is answered with how long to wait. Skipped, with a message, on machines without Chromium.
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { HttpProvider } from "../../../providers/http/server.js";
import { silentLogger } from "../../../src/log.js";
import { randomIds } from "../../../src/runtime/deps.js";
import { text } from "../../fakes/anthropic/server.js";
import { browserPerFile, CHROMIUM } from "../../helpers/browser.js";
import { skillFile, startHarness, type Harness, type HarnessOptions } from "../../helpers/harness.js";

const web = browserPerFile("web chat quota test", /status of 429/);

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await web.closePage();
  await api?.stop();
  await h?.close();
  // The 429s are the test's own doing (the browser reports each as a failed resource); anything else is a bug.
  web.checkErrors();
});

// Friday 27 November 2026, 20:00 UTC.
const START = Date.UTC(2026, 10, 27, 20, 0);

async function open(options: HarnessOptions): Promise<Page> {
  h = await startHarness({ files: skillFile("interview", "Ask."), ids: randomIds, ...options });
  api = new HttpProvider(h.gateway, { host: "127.0.0.1", port: 0, auth: { tokens: new Map([["tok-web", "webuser"]]) }, log: silentLogger() });
  await api.start();
  const page = await web.page();
  await page.goto(`http://127.0.0.1:${api.port()}/`);
  await page.fill("#token", "tok-web");
  await page.dispatchEvent("#token", "change");
  await page.locator("#catalog", { hasText: "interview" }).waitFor();
  return page;
}

async function say(page: Page, words: string) {
  await page.fill("#text", words);
  await page.click("form button");
}

const shown = (page: Page) => page.locator("#log .msg:not(.welcome) .body").evaluateAll((els) => els.map((e) => e.textContent!.trim()));

describe.skipIf(!CHROMIUM)("limits in the web chat", () => {
  it("says once which daily limit was reached and when it resets, and chats again after midnight", async () => {
    let now = START;
    const page = await open({ clock: { now: () => now }, quotas: { settings: { userDailyMessages: 1 }, now: () => now } });
    h.fake.fallback(() => text("Hello from the bot."));
    await say(page, "one");
    await page.locator("#log .msg", { hasText: "Hello from the bot." }).waitFor();
    now = START + 30 * 60_000;
    await say(page, "two");
    const refusal = page.locator("#log .msg.error", { hasText: "USER_DAILY_MESSAGES" });
    await refusal.waitFor();
    expect((await refusal.textContent())!).toContain(
      "You've sent 1 message today, the daily limit (USER_DAILY_MESSAGES), so I can't take more. It resets at 00:00 on Sat 28 Nov (UTC), in 3 h 30 min.",
    );
    await page.locator("#text:enabled").waitFor();
    // Said once: the stream's error event carries the same words and is not shown again.
    expect((await shown(page)).filter((t) => t.includes("USER_DAILY_MESSAGES"))).toHaveLength(1);

    now = Date.UTC(2026, 10, 28, 0, 0);
    await say(page, "three");
    await page.locator("#log .msg", { hasText: "Hello from the bot." }).nth(1).waitFor();
    expect(h.fake.accepted()).toHaveLength(2);
  });

  it("answers a message sent faster than USER_MESSAGES_PER_MINUTE with how long to wait", async () => {
    const page = await open({ clock: { now: () => START }, userMessagesPerMinute: 1 });
    h.fake.fallback(() => text("Hello from the bot."));
    await say(page, "one");
    await page.locator("#log .msg", { hasText: "Hello from the bot." }).waitFor();
    await say(page, "two");
    const refusal = page.locator("#log .msg.error", { hasText: "faster than I can take them" });
    await refusal.waitFor();
    expect((await refusal.textContent())!).toContain("(at most 1 a minute), so I'm dropping some. Wait 60 s and send your message again.");
    expect(h.fake.accepted()).toHaveLength(1);
  });
});
