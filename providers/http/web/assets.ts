import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { webPage, type PageSettings } from "./page.js";

// The web chat's files, read once when the provider is made: the page, its script and style, and the two
// libraries it renders replies with, served from their installed packages (no CDN, no build step).

export interface WebAsset {
  type: string;
  body: Buffer;
  /** Subresource Integrity value the page pins the file with. */
  integrity: string;
  /** Part of the URL the page uses, so a long cache never serves an old file after an upgrade. */
  version: string;
}

export interface WebChat {
  page: string;
  /** By exact URL path; anything else under /assets is a 404. */
  assets: ReadonlyMap<string, WebAsset>;
}

/**
 * The page runs only its own files: no inline script or style (a reply that slipped past the sanitiser still
 * could not run), DOM writes of HTML only through DOMPurify's Trusted Types policy, no framing (an Approve button
 * under a decoy is clickjacking), nothing loaded from elsewhere, no URL leaked in referrers.
 */
export const PAGE_HEADERS = {
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    // Previews of attached images and images agents send: object URLs of bytes the page fetched itself.
    "img-src blob:",
    "require-trusted-types-for 'script'",
    "trusted-types dompurify",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; "),
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

export const ASSET_HEADERS = {
  "cache-control": "public, max-age=31536000, immutable",
  "x-content-type-options": "nosniff",
  "cross-origin-resource-policy": "same-origin",
};

const JS = "text/javascript; charset=utf-8";

export function loadWebChat(settings: PageSettings = { apiOff: false }): WebChat {
  const require = createRequire(import.meta.url);
  const here = dirname(fileURLToPath(import.meta.url));
  const files: Array<[string, string, string]> = [
    ["/assets/marked.js", JS, fromPackage(require, "marked", "marked/package.json", "lib/marked.umd.js")],
    ["/assets/purify.js", JS, fromPackage(require, "dompurify", "dompurify/purify.min.js", "")],
    ["/assets/chat.js", JS, join(here, "chat.js")],
    ["/assets/chat.css", "text/css; charset=utf-8", join(here, "chat.css")],
  ];
  const assets = new Map<string, WebAsset>();
  for (const [path, type, file] of files) {
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch (error) {
      throw new Error(`the web chat cannot read ${file} (for ${path}): ${error instanceof Error ? error.message : String(error)}; reinstall with npm ci`, {
        cause: error,
      });
    }
    const sha = createHash("sha384").update(body).digest("base64");
    assets.set(path, { type, body, integrity: `sha384-${sha}`, version: createHash("sha256").update(body).digest("hex").slice(0, 12) });
  }
  return { page: webPage((path) => assets.get(path)!, settings), assets };
}

/** A file of an installed package; `entry` is what the package lets us resolve, `file` is relative to its folder. */
function fromPackage(require: NodeJS.Require, name: string, entry: string, file: string): string {
  let resolved: string;
  try {
    resolved = require.resolve(entry);
  } catch {
    throw new Error(`the web chat needs the ${name} package (${entry}), which is not installed; run npm ci`);
  }
  return file ? join(dirname(resolved), file) : resolved;
}
