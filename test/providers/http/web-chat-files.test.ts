// Files an agent sends, in the web chat page in a real browser (headless Chromium driven by playwright-core): an
// image appears inline, any other file as a download button that fetches it with the user's token; both are there
// again after a reload (from the conversation's history). Skipped, with a message, on machines without Chromium.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { storedFiles } from "../../../src/gateway/file-source.js";
import { silentLogger } from "../../../src/log.js";
import { randomIds } from "../../../src/runtime/deps.js";
import type { ToolContext } from "../../../src/runtime/tools/tool.js";
import { HttpProvider } from "../../../providers/http/server.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { browserPerFile, CHROMIUM } from "../../helpers/browser.js";
import { png } from "../../helpers/files.js";
import { skillFile, startHarness, type Harness } from "../../helpers/harness.js";
import { testWorkspace, type TestWorkspace } from "../../helpers/workspace.js";

const web = browserPerFile("web chat file test");

let h: Harness;
let api: HttpProvider;
let ws: TestWorkspace;
afterEach(async () => {
  await web.closePage();
  await api?.stop();
  await h?.close();
  web.checkErrors();
});

async function open(): Promise<Page> {
  h = await startHarness({ files: skillFile("interview", "Ask."), ids: randomIds, sendFile: { workspaceFor: (ctx: ToolContext) => ws.workspaceFor(ctx) } });
  ws = testWorkspace(h.root, "web");
  api = new HttpProvider(h.gateway, { host: "127.0.0.1", port: 0, auth: { tokens: { "tok-web": "webuser" } }, log: silentLogger(), files: storedFiles(h.store) });
  await api.start();
  const page = await web.page({ acceptDownloads: true });
  await page.goto(`http://127.0.0.1:${api.port()}/`);
  await page.fill("#token", "tok-web");
  await page.dispatchEvent("#token", "change");
  await page.locator("#catalog", { hasText: "interview" }).waitFor();
  return page;
}

describe.skipIf(!CHROMIUM)("files from agents in the web chat", () => {
  it("shows a sent image inline and another file as a download, and both again after a reload", async () => {
    const page = await open();
    const chart = await png(160, 90);
    // The agent made it in its workspace (as a plotting script would).
    writeFileSync(join(ws.dir, "chart.png"), chart);
    h.fake.script(
      reply(
        toolUse("send_file", { filename: "chart.png", path: "chart.png", caption: "Sales by month" }),
        toolUse("send_file", { filename: "sales.csv", content: "month,total\nJan,3\n" }),
      ),
      text("Both are above."),
    );
    await page.fill("#text", "chart and table please");
    await page.click("form button");
    await page.locator(".msg .body", { hasText: "Both are above." }).waitFor();
    const image = page.locator(".msg.file img.file");
    await image.waitFor();
    // Loaded from the blob the page fetched with the token: its real width.
    await expect.poll(() => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(160);
    expect(await page.locator(".msg.file", { has: page.locator("img.file") }).textContent()).toContain("Sales by month");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("button:has-text('sales.csv')")]);
    expect(download.suggestedFilename()).toBe("sales.csv");
    expect(readFileSync((await download.path())!, "utf8")).toBe("month,total\nJan,3\n");

    await page.reload();
    await page.locator(".msg .body", { hasText: "Both are above." }).waitFor();
    await page.locator(".msg.file img.file").waitFor();
    expect(await page.locator(".msg.file button").allTextContents()).toEqual(["⬇ chart.png", "⬇ sales.csv"]);
  });
});
