// Headless Chromium for the browser tests (playwright-core driving Debian's chromium). Skipped, with a message, on
// machines without it; in CI (.ci/run installs it) a missing browser is a failure, not a skip.
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";

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
