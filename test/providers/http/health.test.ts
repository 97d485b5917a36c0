// The health checks a load balancer polls: answered without authentication, and /readyz says what is not ready.
import { afterEach, expect, it } from "vitest";
import { HttpProvider } from "../../../providers/http/server.js";
import { silentLogger } from "../../../src/log.js";
import { startHarness, type Harness } from "../../helpers/harness.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api.stop();
  await h.close();
});

async function start(readiness?: () => Record<string, string | null>): Promise<string> {
  h = await startHarness();
  api = new HttpProvider(h.gateway, {
    host: "127.0.0.1",
    port: 0,
    auth: { tokens: new Map([["tok-alice", "alice"]]) },
    log: silentLogger(),
    ...(readiness ? { readiness } : {}),
  });
  await api.start();
  return `http://127.0.0.1:${api.port()}`;
}

it("/healthz and /readyz answer without a token; ready names each check", async () => {
  const base = await start(() => ({ telegram: null }));
  expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: "ok" });
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: "ready", checks: { database: "ok", telegram: "ok" } });
  // Everything else still needs a token.
  expect((await fetch(`${base}/v1/sessions/00000000-0000-4000-8000-000000000000`)).status).toBe(401);
});

it("/readyz is 503 naming the database when it does not answer, and a provider that did not start", async () => {
  const base = await start(() => ({ slack: "could not start: invalid_auth" }));
  h.store.ping = () => Promise.reject(new Error("connection refused"));
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(503);
  expect(await ready.json()).toEqual({
    status: "not_ready",
    checks: { database: "not reachable: connection refused", slack: "could not start: invalid_auth" },
  });
  // Alive all the same: the process runs, so the orchestrator does not restart it for this.
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
});

it("other methods and odd paths near the health checks get the API's ordinary answers, and the server keeps serving", async () => {
  const base = await start();
  expect((await fetch(`${base}/healthz`, { method: "POST", body: "x" })).status).toBe(404);
  expect((await fetch(`${base}/readyz/../v1/sessions/00000000-0000-4000-8000-000000000000`)).status).toBe(401);
  expect((await fetch(`${base}/readyz?verbose=%00%ff`)).status).toBe(200);
  expect((await fetch(`${base}/healthz/`)).status).toBe(404);
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
});
