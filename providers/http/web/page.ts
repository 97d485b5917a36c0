import type { WebAsset } from "./assets.js";

export interface PageSettings {
  /** The server accepts no token at all (no HTTP_API_TOKENS, no JWT): the page says how to set them up. */
  apiOff: boolean;
}

/** The web chat at `/`: markup only; the script and style are files under /assets, pinned by hash. */
export function webPage(asset: (path: string) => WebAsset, settings: PageSettings = { apiOff: false }): string {
  const src = (path: string) => `${path}?v=${asset(path).version}" integrity="${asset(path).integrity}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard</title>
<link rel="stylesheet" href="${src("/assets/chat.css")}">
<script defer src="${src("/assets/marked.js")}"></script>
<script defer src="${src("/assets/purify.js")}"></script>
<script defer src="${src("/assets/chat.js")}"></script>
</head>
<body${settings.apiOff ? ' data-api="off"' : ""}>
<header>
  <strong class="brand">Switchboard</strong>
  <span id="status" role="status" aria-live="polite">ready</span>
  <input id="token" placeholder="API token" type="password" autocomplete="off" aria-label="API token">
  <button id="new" type="button" title="Start a new conversation">New chat</button>
</header>
<main id="log" aria-live="polite"></main>
<div id="attachments" aria-live="polite" hidden></div>
<form id="form"><label id="attach" title="Attach files (or drop them here, or paste an image)"><input id="files" type="file" multiple aria-label="Attach files"><span aria-hidden="true">📎</span></label><input id="text" placeholder="Message" autocomplete="off" aria-label="Message"><button>Send</button></form>
</body>
</html>
`;
}
