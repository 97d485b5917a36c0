import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { systemTimers, type Timers } from "../../src/runtime/deps.js";
import { TokenSet } from "../../src/secret-tokens.js";
import type { AdminReads, ServerView } from "../../src/gateway/index.js";
import { streamSnapshots } from "./admin-stream.js";
import { HttpError } from "./request.js";
import { ASSET_HEADERS } from "./web/assets.js";
import { ADMIN_PAGE_HEADERS, loadAdminPage, type AdminPage } from "./web/admin-page.js";

// /admin: the operator's read-only view. The page and its files need no token (they hold no data); everything
// under /admin/api needs an admin token (ADMIN_TOKENS), which is never an HTTP API token, nor the other way round.

export interface AdminSettings {
  /** Admin tokens and the name each stands for; empty: the admin view is off. */
  tokens: ReadonlyMap<string, string>;
  /** Work not moving for this long is stuck. */
  stuckAfterMs: number;
  /** This process's MCP servers (each replica connects its own), for /admin/api/mcp. */
  mcp?: () => readonly ServerView[];
}

export interface AdminDeps {
  reads: AdminReads;
  log: Logger;
  timers?: Timers;
  keepaliveMs?: number;
  coalesceMs?: number;
  now?: () => number;
}

const MAX_KEY = 512;
const SESSIONS = 50;

export class AdminRoutes {
  private readonly tokens: TokenSet<string>;
  private readonly web: AdminPage;
  private readonly now: () => number;

  constructor(
    private readonly settings: AdminSettings,
    private readonly deps: AdminDeps,
  ) {
    this.tokens = new TokenSet(settings.tokens);
    this.web = loadAdminPage();
    this.now = deps.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.tokens.size > 0;
  }

  /** Every path that is /admin or under it; errors are thrown as HttpError for the server to answer. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    if (path === "/admin" || path === "/admin/") {
      if (req.method !== "GET" && req.method !== "HEAD") throw readOnly(req.method);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...ADMIN_PAGE_HEADERS }).end(this.enabled ? this.web.page : this.web.off);
      return;
    }
    const asset = this.web.assets.get(path);
    if (asset) {
      if (req.method !== "GET" && req.method !== "HEAD") throw readOnly(req.method);
      return void res.writeHead(200, { "content-type": asset.type, ...ASSET_HEADERS }).end(asset.body);
    }
    if (!path.startsWith("/admin/api/")) throw new HttpError(404, "not_found_error", `no route for ${req.method} ${path}`);
    if (!this.enabled) throw new HttpError(404, "not_found_error", "the admin view is off: set ADMIN_TOKENS");
    const route = this.route(path.slice("/admin/api/".length), url.searchParams);
    if (!route) throw new HttpError(404, "not_found_error", `no route for ${req.method} ${path}`);
    if (req.method !== "GET") throw readOnly(req.method);
    this.authenticate(req.headers.authorization);
    await route(res);
  }

  private route(rest: string, query: URLSearchParams): ((res: ServerResponse) => Promise<void>) | null {
    const { reads } = this.deps;
    switch (rest) {
      case "sessions":
        return async (res) => json(res, await reads.sessions({ limit: limitOf(query) }));
      case "approvals":
        return async (res) => json(res, await reads.approvals({ now: this.now() }));
      case "usage":
        return async (res) => json(res, await reads.usage({ now: this.now(), limit: limitOf(query) }));
      case "stuck":
        return async (res) => json(res, await reads.stuck({ olderThanMs: this.settings.stuckAfterMs, now: this.now() }));
      case "mcp":
        return async (res) => json(res, { servers: this.settings.mcp?.() ?? [] });
      case "events":
        return async (res) =>
          streamSnapshots(res, {
            reads,
            snapshot: () => reads.snapshot({ limit: SESSIONS, stuckAfterMs: this.settings.stuckAfterMs, now: this.now() }),
            timers: this.deps.timers ?? systemTimers,
            log: this.deps.log,
            keepaliveMs: this.deps.keepaliveMs ?? 15_000,
            coalesceMs: this.deps.coalesceMs ?? 250,
          });
    }
    if (!rest.startsWith("sessions/")) return null;
    return async (res) => {
      const key = sessionKeyOf(rest.slice("sessions/".length));
      const view = await reads.session(key, { now: this.now() });
      if (!view) throw new HttpError(404, "not_found_error", "no such session");
      json(res, view);
    };
  }

  private authenticate(header: string | undefined): void {
    const token = TokenSet.bearer(header);
    if (token === null) throw new HttpError(401, "authentication_error", "missing admin token: send Authorization: Bearer <token> with a token from ADMIN_TOKENS");
    if (this.tokens.match(token) === null)
      throw new HttpError(401, "authentication_error", "invalid admin token (admin tokens are those in ADMIN_TOKENS, not HTTP API tokens)");
  }
}

/** `sessions/<key>`: the key URL-encoded (encodeURIComponent), at most 512 characters once decoded. */
function sessionKeyOf(encoded: string): string {
  if (encoded === "") throw new HttpError(400, "invalid_request_error", "the path needs a session key: /admin/api/sessions/<url-encoded key>");
  // Checked before decoding too: an encoded key is at most three times as long as the key.
  if (encoded.length > MAX_KEY * 3) throw new HttpError(400, "invalid_request_error", `the session key is longer than ${MAX_KEY} characters`);
  let key: string;
  try {
    key = decodeURIComponent(encoded);
  } catch {
    throw new HttpError(400, "invalid_request_error", "the session key in the path is not valid URL encoding (encode it with encodeURIComponent)");
  }
  if (key.length > MAX_KEY) throw new HttpError(400, "invalid_request_error", `the session key is longer than ${MAX_KEY} characters`);
  return key;
}

function limitOf(query: URLSearchParams): number {
  const text = query.get("limit");
  if (text === null) return SESSIONS;
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > 500) throw new HttpError(400, "invalid_request_error", "limit must be a whole number from 1 to 500");
  return limit;
}

function readOnly(method: string | undefined): HttpError {
  return new HttpError(405, "invalid_request_error", `the admin view is read-only: ${method ?? "this method"} is not allowed, only GET`);
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store", "x-content-type-options": "nosniff" }).end(JSON.stringify(body));
}
