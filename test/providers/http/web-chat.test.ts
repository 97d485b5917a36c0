// The web chat page in a real browser: headless Chromium driven by playwright-core. Skipped, with a
// message, on machines without Chromium (`apt-get install chromium`, or set CHROMIUM_PATH).
import type { Page } from "playwright-core";
import { browserPerFile, CHROMIUM } from "../../helpers/browser.js";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { randomIds } from "../../../src/runtime/deps.js";
import { HttpProvider } from "../../../providers/http/server.js";
import { holdStream, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../../helpers/harness.js";
import { transferTool } from "../../helpers/tools.js";
import { png, pngBombHeader } from "../../helpers/files.js";
import type { ReceivedFile } from "../../../src/files/types.js";
import type { InboundMessage } from "../../../src/gateway/types.js";
import { scheduledRunText } from "../../../src/gateway/scheduler.js";
import { runExternalId } from "../../../src/schedules/run-id.js";

const web = browserPerFile("web chat browser test");

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await web.closePage();
  await api?.stop();
  await h?.close();
  // A CSP or Trusted Types violation, a failed request or a script error is a bug in the page even when the test passed.
  web.checkErrors();
});

const FILES = { ...skillFile("interview", "Ask."), ...agentFile("trip-planner", "Plan.") };

/** The API on the harness (with `tokens`) and its page, loaded. */
async function load(viewport?: { width: number; height: number }, tools = [transferTool([])], tokens: Record<string, string> = { "tok-web": "webuser" }): Promise<Page> {
  h = await startHarness({ files: FILES, ids: randomIds, tools });
  api = new HttpProvider(h.gateway, { host: "127.0.0.1", port: 0, auth: { tokens }, log: silentLogger() });
  await api.start();
  const page = await web.page(viewport ? { viewport } : {});
  await page.goto(`http://127.0.0.1:${api.port()}/`);
  return page;
}

/** The API on the harness, and a page that has entered its token. */
async function open(viewport?: { width: number; height: number }, tools = [transferTool([])]): Promise<Page> {
  const page = await load(viewport, tools);
  await page.fill("#token", "tok-web");
  await page.dispatchEvent("#token", "change");
  await page.locator("#catalog", { hasText: "interview" }).waitFor();
  return page;
}

async function say(page: Page, words: string) {
  await page.fill("#text", words);
  await page.click("form button");
}

/** Who said what, leaving out the gateway's own remarks ("Interview skill finished."), which are configurable. */
const whoSaid = (page: Page) =>
  page
    .locator("#log .msg:not(.welcome):not(.notice:not(.approval))")
    .evaluateAll((els) => els.map((e) => `${e.querySelector(".who")!.textContent}: ${e.querySelector(".body")!.textContent!.trim()}`));

describe.skipIf(!CHROMIUM)("web chat in headless Chromium", () => {
  it("welcomes, lists skills and agents, chats with the stack under readable names, and approves a pending tool after a reload", async () => {
    const runs: string[] = [];
    const page = await open(undefined, [transferTool(runs)]);
    const welcome = (await page.locator(".welcome").textContent())!;
    expect(welcome).toContain("the server's HTTP_API_TOKENS (token:user pairs in its .env)");
    expect(welcome).toContain("interview: The interview skill for tests.");
    expect(welcome).toContain("trip-planner: The trip-planner agent for tests.");
    h.fake.script(
      reply(toolUse("use_skill", { name: "interview", message: "plan" })),
      text("Where to?"),
      reply(toolUse("complete", { result: "Rome" })),
      reply(toolUse("transfer", { amount: 5 })),
    );
    await say(page, "plan a trip");
    await page.getByText("Where to?").waitFor();
    expect(await page.locator(".msg .who").last().textContent()).toBe("Interview skill");
    await page.locator("#status", { hasText: "ready" }).waitFor();
    await say(page, "Rome");
    await page.getByRole("button", { name: "Approve" }).waitFor();
    await page.locator("#status", { hasText: "ready" }).waitFor();

    // The conversation comes back from the server, the approval still decidable.
    await page.reload();
    await page.getByRole("button", { name: "Approve" }).waitFor();
    expect(await whoSaid(page)).toEqual([
      "You: plan a trip",
      "Interview skill: Where to?",
      "You: Rome",
      expect.stringMatching(/^Switchboard needs your approval: 🔐 main wants to run transfer/),
    ]);
    h.fake.script(text("Booked and **paid**."));
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Booked and paid.").waitFor();
    expect(runs).toEqual(["sent"]);

    await page.reload();
    await page.getByText("Booked and paid.").waitFor();
    expect((await whoSaid(page)).slice(3)).toEqual([expect.stringMatching(/transfer/), "Switchboard: Booked and paid."]);
    expect(await page.locator(".approval .decided").textContent()).toBe("(approved)");
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await page.screenshot({ path: "/tmp/switchboard-web-chat.png" });
  });

  it("shows the reply as it is written, says it is thinking until the turn is done, and names a child at work", async () => {
    const page = await open();
    const childHold = holdStream(0);
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "ask" })), { ...text("Which city?"), stream: childHold.stream });
    await say(page, "plan");
    await childHold.paused;
    await page.locator("#status", { hasText: "Interview skill is working…" }).waitFor();
    await page.locator(".msg.placeholder", { hasText: "Interview skill is working…" }).waitFor();
    childHold.release();
    await page.getByText("Which city?").waitFor();
    await page.locator("#status", { hasText: "ready" }).waitFor();

    const hold = holdStream(2);
    h.fake.script(reply(toolUse("complete", { result: "Lisbon" })), { ...text("Lisbon is lovely in **May**."), stream: hold.stream });
    await say(page, "Lisbon");
    await hold.paused; // two words written, the model still writing
    await page.locator(".msg.writing", { hasText: "Lisbon is" }).waitFor();
    expect(await page.locator("#status").textContent()).toBe("thinking…");
    expect(await page.locator(".msg.placeholder").count()).toBe(0);
    expect(await page.getByText("lovely").count()).toBe(0);
    hold.release();
    await page.locator(".msg:not(.writing) strong", { hasText: "May" }).waitFor();
    await page.locator("#status", { hasText: "ready" }).waitFor();
    expect(await page.locator(".msg", { hasText: "Lisbon is lovely in May." }).count()).toBe(1);
  });

  it("marks a scheduled job's run and its replies “scheduled”, showing the instruction without the model's marker", async () => {
    const page = await open();
    h.fake.script(text("Hello."), text("Time for tea!"));
    await say(page, "hi");
    await page.getByText("Hello.").waitFor();
    await page.locator("#status", { hasText: "ready" }).waitFor();
    // The run as the scheduler submits it: the owner's request, with the run's id and the marked instruction.
    const session = String(await page.evaluate('localStorage.getItem("sb.session")'));
    const due = Date.parse("2026-11-27T10:01:00Z");
    const job = { id: "sch_tea", instruction: "Remind me to make tea", timezone: "UTC" };
    await h.gateway.submit({ sessionKey: `http:${session}`, messageId: runExternalId(job.id, due), userId: "webuser", text: scheduledRunText(job, due) });
    await h.gateway.idle();
    await page.reload();
    await page.getByText("Time for tea!").waitFor();
    expect(await whoSaid(page)).toEqual(["You: hi", "Switchboard: Hello.", "You scheduled: Remind me to make tea", "Switchboard scheduled: Time for tea!"]);
    expect(await page.locator(".msg.scheduled .mark").first().getAttribute("title")).toMatch(/^Job sch_tea, due /);
    expect(await page.locator(".msg:not(.scheduled) .mark").count()).toBe(0);
  });

  it("renders Markdown from the model but never runs what it smuggles in, live and after a reload", async () => {
    const page = await open();
    const hostile = [
      "**bold** and a [safe link](https://example.com/docs).",
      '<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=1">',
      "[x](javascript:window.__pwned=1) ![pic](javascript:window.__pwned=1)",
    ].join("\n\n");
    h.fake.script(reply(toolUse("use_agent", { name: "trip-planner", message: "go" })), text(hostile));
    await say(page, "<b>not bold</b> [not a link](https://example.com)");
    for (const pass of ["live", "reloaded"]) {
      const bot = page.locator(".msg", { has: page.locator(".who", { hasText: "Trip planner agent" }) });
      await bot.locator("strong", { hasText: "bold" }).waitFor();
      await page.locator("#status", { hasText: "ready" }).waitFor();
      expect([pass, await page.evaluate("window.__pwned")]).toEqual([pass, undefined]);
      expect([pass, await page.locator("#log script, #log img, #log [onerror]").count()]).toEqual([pass, 0]);
      expect(await page.locator('#log a[href^="javascript" i]').count()).toBe(0);
      const safe = bot.getByRole("link", { name: "safe link" });
      expect([await safe.getAttribute("rel"), await safe.getAttribute("target")]).toEqual(["noopener noreferrer", "_blank"]);
      // Raw HTML from the model is shown as the text it is.
      expect(await bot.textContent()).toContain("<script>window.__pwned=1</script>");
      // The user's own words stay plain text.
      const mine = page.locator(".msg.me");
      expect(await mine.textContent()).toBe("You<b>not bold</b> [not a link](https://example.com)");
      expect(await mine.locator("b, a").count()).toBe(0);
      if (pass === "live") await page.reload();
    }
  });

  it("on a server with no API tokens, says so and names the variables to set, instead of refusing every token", async () => {
    const page = await load(undefined, [], {});
    const welcome = (await page.locator(".welcome").textContent())!;
    expect(welcome).toContain("This server does not accept any API token yet");
    expect(welcome).toContain("HTTP_API_TOKENS");
    expect(welcome).toContain("HTTP_JWT_JWKS_URL with HTTP_JWT_AUDIENCE and HTTP_JWT_ISSUER");
    expect(await page.locator("#status").textContent()).toBe("no API tokens set");
    expect(await page.locator("#token").isDisabled()).toBe(true);
    expect(await page.locator("#text").isDisabled()).toBe(true);
    expect(await page.locator("#log").textContent()).not.toContain("invalid token");
    // A program calling the API hears the same.
    const r = await fetch(`http://127.0.0.1:${api.port()}/v1/catalog`, { headers: { authorization: "Bearer guess" } });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/^this server accepts no API tokens yet: whoever runs it sets HTTP_API_TOKENS/);
  });

  it("takes back what it said about a wrong or missing token once a token works", async () => {
    const page = await load();
    await say(page, "hello?");
    await page.getByText("Enter your API token first (top of the page).").waitFor();
    await page.fill("#token", "tok-wrong");
    await page.dispatchEvent("#token", "change");
    await page.locator("#catalog", { hasText: "That token did not work: invalid token" }).waitFor();
    await say(page, "hello?");
    await page.locator(".msg.error", { hasText: "That token did not work: invalid token" }).waitFor();

    h.fake.script(text("Hello!"));
    await page.fill("#token", "tok-web");
    await page.dispatchEvent("#token", "change");
    await page.locator("#catalog", { hasText: "interview" }).waitFor();
    expect(await page.locator("#log").textContent()).not.toMatch(/did not work|Enter your API token first/);
    await say(page, "hello?");
    await page.getByText("Hello!").waitFor();
    // The first try never left the page (no token): only the refused one and the answered one are in the log.
    expect(await whoSaid(page)).toEqual(["You: hello?", "You: hello?", "Switchboard: Hello!"]);
    // The refused requests are the test's own doing (the browser reports each 401 as a failed resource).
    expect(web.errors.splice(0).filter((e) => !/status of 401/.test(e))).toEqual([]);
  });

  it("fits a 390 px wide phone: no horizontal scroll, the token field does not squeeze the header", async () => {
    const page = await open({ width: 390, height: 844 });
    h.fake.script(text(`Here:\n\n\`\`\`\n${"x".repeat(300)}\n\`\`\`\n\nhttps://example.com/${"very-long-path-".repeat(20)}`));
    await say(page, "y".repeat(200));
    await page.locator("pre").waitFor();
    await page.locator("#status", { hasText: "ready" }).waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    const box = async (selector: string) => (await page.locator(selector).boundingBox())!;
    expect((await box("#status")).width).toBeGreaterThan(40);
    expect((await box("#token")).width).toBeGreaterThan(200);
    for (const selector of ["form button", "pre", ".msg.me", "#new"]) {
      const b = await box(selector);
      expect([selector, b.x + b.width <= 390]).toEqual([selector, true]);
    }
    await page.screenshot({ path: "/tmp/switchboard-web-chat-phone.png" });
  });
});

const SVG = "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'><rect width='4' height='4'/></svg>";

/** Hands the page a file the way a drop or a paste does (a DataTransfer built in the page; DOM code as a string). */
function dispatchFile(page: Page, how: "drop" | "paste", name: string, type: string, base64: string) {
  const args = JSON.stringify({ how, name, type, base64 });
  return page.evaluate(`(({ how, name, type, base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], name, { type }));
    if (how === "paste") document.getElementById("text").dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    else document.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
  })(${args})`);
}

/** The page with its token in, and what the API hands the gateway (read from gateway.submit). */
async function openCapturing(): Promise<{ page: Page; submitted: InboundMessage[] }> {
  const page = await open();
  const submitted: InboundMessage[] = [];
  const submit = h.gateway.submit.bind(h.gateway);
  h.gateway.submit = (m) => (submitted.push(m), submit(m));
  h.fake.fallback(() => text("seen"));
  return { page, submitted };
}

describe.skipIf(!CHROMIUM)("web chat files in headless Chromium", () => {
  it("attaches, drops and pastes files, previews only raster images, and sends them with the text", async () => {
    const { page, submitted } = await openCapturing();
    const chart = await png(40, 30);
    await page.setInputFiles("#files", [
      { name: "chart.png", mimeType: "image/png", buffer: chart },
      { name: "drawing.svg", mimeType: "image/svg+xml", buffer: Buffer.from(SVG) },
    ]);
    await dispatchFile(page, "drop", "notes.txt", "text/plain", Buffer.from("dropped\n").toString("base64"));
    await dispatchFile(page, "paste", "image.png", "image/png", (await png(8, 8)).toString("base64"));
    const chips = page.locator("#attachments .chip");
    await expect.poll(() => chips.count()).toBe(4);
    expect((await chips.locator(".name").allTextContents()).map((t) => t.replace(/ \(.*\)$/, ""))).toEqual(["chart.png", "drawing.svg", "notes.txt", "image.png"]);
    // Two previews (the PNGs); the SVG is a name only, never an image on the page.
    expect(await page.locator("#attachments img").count()).toBe(2);
    // One removed before sending.
    await chips.nth(3).locator("button").click();
    await page.fill("#text", "what do these show?");
    await page.click("form button:has-text('Send')");
    await page.getByText("seen").waitFor();
    expect(await page.locator("#attachments").isHidden()).toBe(true);
    const sent = submitted[0]!;
    expect(sent.text).toBe("what do these show?");
    expect((sent.files as ReceivedFile[]).map((f) => [f.name, f.kind])).toEqual([
      ["chart.png", "image"],
      ["drawing.svg", "text"],
      ["notes.txt", "text"],
    ]);
    expect(await page.locator(".msg.me .body").last().textContent()).toBe("what do these show?\n📎 chart.png\n📎 drawing.svg\n📎 notes.txt");
  });

  it("shows the API's refusal naming the file", async () => {
    const { page } = await openCapturing();
    // A PNG header claiming a 20,000×20,000 image: refused from its header.
    await page.setInputFiles("#files", [{ name: "huge.png", mimeType: "image/png", buffer: pngBombHeader() }]);
    await page.click("form button:has-text('Send')");
    await page.locator(".msg.error").waitFor();
    expect(await page.locator(".msg.error .body").textContent()).toBe(
      'part 1: "huge.png" is 20000×20000 pixels, more than the 100 megapixels I open; send a smaller image.',
    );
    // The browser reports the refused request itself; that is the answer, not a fault of the page.
    web.errors.splice(0, web.errors.length, ...web.errors.filter((e) => !e.includes("status of 400")));
  });
});
