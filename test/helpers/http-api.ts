// The HTTP API on the test harness: the real HttpProvider on a free port, bearer tokens for two users, and
// an optional JWT key set. Shared by the API's own tests and the security suite.
import { createLocalJWKSet } from "jose";
import { afterEach } from "vitest";
import type { FileLimits } from "../../src/files/limits.js";
import type { FileSource } from "../../src/files/types.js";
import { silentLogger } from "../../src/log.js";
import { randomIds, type Timers } from "../../src/runtime/deps.js";
import type { UserCapLimits } from "../../providers/http/caps.js";
import { HttpProvider } from "../../providers/http/server.js";
import { skillFile, startHarness, type Harness, type HarnessOptions } from "./harness.js";

export const TOKENS = new Map([
  ["tok-alice", "alice"],
  ["tok-bob", "bob"],
]);

export interface ApiExtra {
  keySet?: Parameters<typeof createLocalJWKSet>[0];
  timers?: Timers;
  tokens?: Map<string, string>;
  caps?: UserCapLimits;
  now?: () => number;
  fileLimits?: FileLimits;
  files?: FileSource;
}

export async function startApi(options: HarnessOptions = {}, extra: ApiExtra = {}): Promise<{ h: Harness; api: HttpProvider; base: string }> {
  const h = await startHarness({ files: skillFile("interview", "Ask."), ids: randomIds, ...options });
  const api = new HttpProvider(h.gateway, {
    host: "127.0.0.1",
    port: 0,
    auth: {
      tokens: extra.tokens ?? TOKENS,
      ...(extra.keySet
        ? {
            jwt: { jwksUrl: "http://unused.invalid/jwks", audience: "switchboard", issuer: "https://idp.test", userClaims: ["oid", "sub"] },
            keySet: createLocalJWKSet(extra.keySet),
          }
        : {}),
    },
    log: silentLogger(),
    ...(extra.timers ? { timers: extra.timers, keepaliveMs: 15_000 } : {}),
    ...(extra.caps ? { caps: extra.caps } : {}),
    ...(extra.now ? { now: extra.now } : {}),
    ...(extra.fileLimits ? { fileLimits: extra.fileLimits } : {}),
    ...(extra.files ? { files: extra.files } : {}),
  });
  await api.start();
  return { h, api, base: `http://127.0.0.1:${api.port()}` };
}

export function post(base: string, path: string, body: unknown, token = "tok-alice", headers: Record<string, string> = {}) {
  return fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const message = (content: string, extra: Record<string, unknown> = {}) => ({ items: [{ content_type: "text", content }], ...extra });

/** startApi for the tests of a file: whatever a test started is stopped after it. */
export function apiPerTest(): (options?: HarnessOptions, extra?: ApiExtra) => Promise<{ h: Harness; api: HttpProvider; base: string }> {
  let running: { h: Harness; api: HttpProvider } | null = null;
  afterEach(async () => {
    await running?.api.stop();
    await running?.h.close();
    running = null;
  });
  return async (options, extra) => (running = await startApi(options, extra));
}
