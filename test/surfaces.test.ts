// What the banner says is up, with its address, and the variable that turns on what is off.
import { expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { httpSurfaces } from "../src/surfaces.js";

it("names every HTTP surface with its address and says which variable turns on what is off", () => {
  expect(httpSurfaces(loadConfig({}), { http: 8787, metrics: null })).toEqual([
    ["Web chat", "http://127.0.0.1:8787/   (no API tokens yet: set HTTP_API_TOKENS)"],
    ["HTTP API", "http://127.0.0.1:8787/v1/   (no API tokens yet: set HTTP_API_TOKENS)"],
    ["Admin", "http://127.0.0.1:8787/admin   (off: set ADMIN_TOKENS)"],
    ["Metrics", "http://127.0.0.1:8787/metrics"],
    ["Health", "http://127.0.0.1:8787/healthz, http://127.0.0.1:8787/readyz"],
  ]);
});

it("shows a wildcard listen address as localhost, metrics on their own port and behind their token", () => {
  const config = loadConfig({ HTTP_HOST: "0.0.0.0", HTTP_API_TOKENS: "t:alice", ADMIN_TOKENS: "a", METRICS_PORT: "9464", METRICS_TOKEN: "m" });
  expect(Object.fromEntries(httpSurfaces(config, { http: 8080, metrics: 9464 }))).toEqual({
    "Web chat": "http://localhost:8080/",
    "HTTP API": "http://localhost:8080/v1/",
    Admin: "http://localhost:8080/admin",
    Metrics: "http://localhost:9464/metrics   (needs METRICS_TOKEN)",
    Health: "http://localhost:8080/healthz, http://localhost:8080/readyz",
  });
});
