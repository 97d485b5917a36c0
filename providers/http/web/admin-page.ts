import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PAGE_HEADERS, type WebAsset } from "./assets.js";

// The admin page (/admin): a static shell with no data in it; its script asks for the admin token and reads the
// API under /admin/api. Like the web chat it runs only its own files, pinned by hash.

export interface AdminPage {
  /** The page when ADMIN_TOKENS is set. */
  page: string;
  /** The page when it is not: says how to turn the admin view on, runs nothing. */
  off: string;
  /** By exact URL path. */
  assets: ReadonlyMap<string, WebAsset>;
}

/**
 * The web chat's policy, with no Trusted Types policy at all: the admin page never writes HTML (everything is
 * textContent), so any innerHTML, even of a constant, is refused by the browser.
 */
export const ADMIN_PAGE_HEADERS = {
  ...PAGE_HEADERS,
  "content-security-policy": PAGE_HEADERS["content-security-policy"].replace("trusted-types dompurify", "trusted-types 'none'"),
  // The page itself holds nothing secret, but what it shows must not linger in shared caches.
  "cache-control": "no-store",
};

export function loadAdminPage(): AdminPage {
  const here = dirname(fileURLToPath(import.meta.url));
  const files: Array<[string, string, string]> = [
    ["/admin/assets/admin.js", "text/javascript; charset=utf-8", join(here, "admin.js")],
    ["/admin/assets/admin.css", "text/css; charset=utf-8", join(here, "admin.css")],
  ];
  const assets = new Map<string, WebAsset>();
  for (const [path, type, file] of files) {
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch (error) {
      throw new Error(`the admin page cannot read ${file} (for ${path}): ${error instanceof Error ? error.message : String(error)}; reinstall Switchboard`, {
        cause: error,
      });
    }
    const sha = createHash("sha384").update(body).digest("base64");
    assets.set(path, { type, body, integrity: `sha384-${sha}`, version: createHash("sha256").update(body).digest("hex").slice(0, 12) });
  }
  const src = (path: string) => `${path}?v=${assets.get(path)!.version}" integrity="${assets.get(path)!.integrity}`;
  const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Switchboard admin</title>
<link rel="stylesheet" href="${src("/admin/assets/admin.css")}">`;
  const page = `${head}
<script defer src="${src("/admin/assets/admin.js")}"></script>
</head>
<body>
<header>
  <strong class="brand">Switchboard admin</strong>
  <span id="status" role="status" aria-live="polite">not connected</span>
  <form id="login"><input id="token" placeholder="Admin token" type="password" autocomplete="off" aria-label="Admin token"><button>Connect</button></form>
</header>
<main>
  <p id="notice" hidden></p>
  <section id="counts" aria-label="Counts"></section>
  <section id="stuck" class="stuck" hidden><h2>Stuck</h2><div class="body"></div></section>
  <section id="approvals"><h2>Pending approvals</h2><div class="body"></div></section>
  <section id="sessions"><h2>Recent sessions</h2><div class="body"></div></section>
  <section id="usage"><h2>Use today, per user</h2><div class="body"></div></section>
  <section id="mcp" hidden><h2>MCP servers (this replica)</h2><div class="body"></div></section>
  <section id="detail" hidden><h2>Session</h2><div class="body"></div></section>
</main>
</body>
</html>
`;
  const off = `${head}
</head>
<body>
<header><strong class="brand">Switchboard admin</strong><span id="status">off</span></header>
<main>
  <section class="off">
    <h2>The admin view is off</h2>
    <p>To turn it on, set <code>ADMIN_TOKENS</code> in the gateway's environment (or its <code>.env</code>) to one or more
    comma-separated tokens, each optionally with a name: <code>ADMIN_TOKENS=long-random-token:alice</code>. Then restart
    the gateway and open this page again.</p>
    <p>Admin tokens are not HTTP API tokens: the page and its API under <code>/admin/api</code> accept only admin tokens.</p>
  </section>
</main>
</body>
</html>
`;
  return { page, off, assets };
}
