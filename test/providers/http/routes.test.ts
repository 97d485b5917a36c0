// The HTTP API's routes as a table: a pattern's parameters, and 404 for an unknown path and for a known path with
// another method, before any token is checked.
import { describe, expect, it } from "vitest";
import { Router, type Route } from "../../../providers/http/router.js";
import { apiPerTest } from "../../helpers/http-api.js";

const table: Route<string>[] = [
  { method: "GET", path: "/healthz", auth: "none", handler: "health" },
  { method: "*", path: "/admin/*", auth: "admin", handler: "admin" },
  { method: "GET", path: "/v1/memories", auth: "user", handler: "list" },
  { method: "DELETE", path: "/v1/memories", auth: "user", handler: "forget all" },
  { method: "DELETE", path: "/v1/memories/:id", auth: "user", handler: "forget" },
  { method: "GET", path: "/v1/sessions/:id/messages", auth: "user", handler: "history" },
  { method: "GET", path: "/assets/chat.js", auth: "none", handler: "asset" },
];
const router = new Router(table);
const startApi = apiPerTest();

describe("the router", () => {
  it("finds a route by method and path, with its parameters as sent", () => {
    const found = router.match("GET", "/v1/sessions/a%2Fb/messages");
    expect(found).toMatchObject({ kind: "found", route: { handler: "history" }, params: { id: "a%2Fb" } });
    expect(router.match("DELETE", "/v1/memories/mem_1")).toMatchObject({ route: { handler: "forget" }, params: { id: "mem_1" } });
    expect(router.match("DELETE", "/v1/memories")).toMatchObject({ route: { handler: "forget all" }, params: {} });
  });

  it("matches a /* route's own path and everything under it, any method for *", () => {
    for (const path of ["/admin", "/admin/", "/admin/api/sessions"]) expect(router.match("POST", path)).toMatchObject({ route: { handler: "admin" } });
    expect(router.match("GET", "/administrator")).toEqual({ kind: "none" });
  });

  it("answers nothing for unknown paths, empty parameters and the open routes' other methods", () => {
    expect(router.match("GET", "/v1/sessions//messages")).toEqual({ kind: "none" });
    expect(router.match("GET", "/v1/memories/a/b")).toEqual({ kind: "none" });
    expect(router.match("POST", "/healthz")).toEqual({ kind: "none" });
    expect(router.match("POST", "/assets/chat.js")).toEqual({ kind: "none" });
    expect(router.match("GET", "/assets/chat.js.map")).toEqual({ kind: "none" });
    expect(router.match("PUT", "/v1/memories")).toEqual({ kind: "none" });
    expect(router.match("GET", "/v1/memories/mem_1")).toEqual({ kind: "none" });
  });
});

describe("the HTTP API", () => {
  it("answers 404 for unknown paths and other methods, without asking for a token", async () => {
    const { base } = await startApi();
    expect((await fetch(`${base}/v1/nothing`)).status).toBe(404);
    const res = await fetch(`${base}/v1/messages`, { method: "GET" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: unknown }).error).toEqual({ type: "not_found_error", message: "no route for GET /v1/messages" });
    expect((await fetch(`${base}/healthz`, { method: "DELETE" })).status).toBe(404);
    expect((await fetch(`${base}/`, { method: "POST" })).status).toBe(404);
  });
});
