// Headless Chromium for the browser tests (playwright-core driving Debian's chromium). Skipped, with a message, on
// machines without it; in CI (.ci/run installs it) a missing browser is a failure, not a skip.
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";

export const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p): p is string => !!p && existsSync(p));

/** Throws in CI and warns elsewhere when Chromium is missing; `what` names the test for the message. */
export function requireChromium(what: string): void {
  if (!CHROMIUM && process.env.CI) throw new Error(`CI must run the ${what}: install chromium or set CHROMIUM_PATH`);
  if (!CHROMIUM) console.warn(`${what} skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)`);
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM!,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/**
 * One Chromium for a test file and a fresh browser context per page. Every page's script errors and console errors
 * (a CSP or Trusted Types violation, a failed request) are collected in `errors`: `checkErrors()` at each test's end
 * fails on any of them, except those `expected` matches (what the file provokes on purpose, e.g. its own 429s).
 */
export function browserPerFile(what: string, expected?: RegExp) {
  requireChromium(what);
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  const errors: string[] = [];
  beforeAll(async () => {
    if (CHROMIUM) browser = await launchChromium();
  });
  afterAll(async () => browser?.close());
  return {
    errors,
    async page(options: BrowserContextOptions = {}): Promise<Page> {
      context = await browser!.newContext(options);
      const page = await context.newPage();
      page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
      page.on("console", (m) => void (m.type() === "error" && errors.push(`console: ${m.text()} ${m.location().url}`)));
      return page;
    },
    async closePage(): Promise<void> {
      await context?.close();
      context = undefined;
    },
    checkErrors(): void {
      expect(errors.splice(0).filter((e) => !expected?.test(e))).toEqual([]);
    },
  };
}
