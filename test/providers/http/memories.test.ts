// GET /v1/memories and DELETE /v1/memories[/{id}]: a caller sees and deletes only their own memories, and cannot
// tell another user's memory id from an unknown one.
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import type { Harness } from "../../helpers/harness.js";
import { startApi } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
});

const A1 = "0b7c6f0e-8a51-4a43-9d6e-1f2a3b4c5d6e";
const A2 = "mem_a2";
const B1 = "mem_b1";

/** The API with `http:alice` (tok-alice) remembering two facts and `http:bob` (tok-bob) one. */
async function boot(): Promise<string> {
  let base: string;
  ({ h, api, base } = await startApi());
  await h.store.memories.save("http:alice", {
    add: [
      { id: A1, text: "Name is Alice", kind: "identity" },
      { id: A2, text: "Prefers window seats" },
    ],
  });
  await h.store.memories.save("http:bob", { add: [{ id: B1, text: "Allergic to peanuts", kind: "health" }] });
  return base;
}

const call = (base: string, method: string, path: string, token: string | null = "tok-alice") =>
  fetch(base + path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });

/** A request with the path exactly as written: fetch() would resolve `..` and normalise escapes before sending. */
function raw(base: string, method: string, path: string, token = "tok-alice"): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

type Listed = { memories: Array<{ id: string; text: string; kind: string | null; created_at: string; updated_at: string }> };
const listed = async (base: string, token = "tok-alice") => ((await (await call(base, "GET", "/v1/memories", token)).json()) as Listed).memories;

describe("GET /v1/memories", () => {
  it("lists the caller's memories only, oldest first", async () => {
    const base = await boot();
    const res = await call(base, "GET", "/v1/memories");
    expect(res.status).toBe(200);
    const body = (await res.json()) as Listed;
    expect(body.memories).toEqual([
      { id: A1, text: "Name is Alice", kind: "identity", created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), updated_at: expect.any(String) },
      { id: A2, text: "Prefers window seats", kind: null, created_at: expect.any(String), updated_at: expect.any(String) },
    ]);
    expect(await listed(base, "tok-bob")).toEqual([expect.objectContaining({ id: B1, text: "Allergic to peanuts" })]);
  });

  it("is an empty list for a user the bot knows nothing about", async () => {
    const base = await boot();
    await h.store.memories.delete("http:alice");
    expect(await (await call(base, "GET", "/v1/memories")).json()).toEqual({ memories: [] });
  });

  it("needs a token: 401 without one, for every memory route", async () => {
    const base = await boot();
    for (const [method, path] of [
      ["GET", "/v1/memories"],
      ["DELETE", "/v1/memories"],
      ["DELETE", `/v1/memories/${A1}`],
    ] as const) {
      const res = await call(base, method, path, null);
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    expect((await call(base, "GET", "/v1/memories", "tok-nobody")).status).toBe(401);
    expect(await h.store.memories.list("http:alice")).toHaveLength(2);
  });
});

describe("DELETE /v1/memories/{id}", () => {
  it("deletes the caller's memory: 204, then it is gone and a second delete is 404", async () => {
    const base = await boot();
    const res = await call(base, "DELETE", `/v1/memories/${A1}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await listed(base)).map((m) => m.id)).toEqual([A2]);
    expect((await call(base, "DELETE", `/v1/memories/${A1}`)).status).toBe(404);
  });

  it("answers another user's id exactly like an unknown one (404) and leaves it alone", async () => {
    const base = await boot();
    const theirs = await call(base, "DELETE", `/v1/memories/${B1}`);
    const unknown = await call(base, "DELETE", "/v1/memories/mem_zz");
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    const message = (r: unknown) => (r as { error: { type: string; message: string } }).error;
    expect(message(await theirs.json())).toEqual({ type: "not_found_error", message: `no memory ${B1}` });
    expect(message(await unknown.json())).toEqual({ type: "not_found_error", message: "no memory mem_zz" });
    expect(await h.store.memories.list("http:bob")).toHaveLength(1);
  });

  it("rejects ids that no memory can have with 400, before the store is asked", async () => {
    const base = await boot();
    for (const id of ["a%20b", "-leading-dash", ".hidden", "x".repeat(129), "%00", "a'--", "%E2%9C%93", "mem_a2;drop"]) {
      const res = await raw(base, "DELETE", `/v1/memories/${id}`);
      expect(res.status, id).toBe(400);
      expect(JSON.parse(res.body).error.type, id).toBe("invalid_request_error");
    }
    expect((await raw(base, "DELETE", `/v1/memories/${"x".repeat(128)}`)).status).toBe(404);
    // A dot segment is resolved by the URL parser: it names no memory route at all.
    expect((await raw(base, "DELETE", "/v1/memories/%2e%2e")).status).toBe(404);
    expect(await h.store.memories.list("http:alice")).toHaveLength(2);
  });
});

describe("DELETE /v1/memories", () => {
  it("deletes all of the caller's memories and says how many; other users' stay", async () => {
    const base = await boot();
    const res = await call(base, "DELETE", "/v1/memories");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ deleted: 2 });
    expect(await listed(base)).toEqual([]);
    expect(await listed(base, "tok-bob")).toHaveLength(1);
    expect(await (await call(base, "DELETE", "/v1/memories")).json()).toEqual({ deleted: 0 });
  });

  it("has no other methods: POST and PUT are 404 like any unknown route", async () => {
    const base = await boot();
    expect((await call(base, "POST", "/v1/memories")).status).toBe(404);
    expect((await call(base, "PUT", `/v1/memories/${A1}`)).status).toBe(404);
    expect((await call(base, "GET", `/v1/memories/${A1}`)).status).toBe(404);
  });
});
