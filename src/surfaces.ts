import type { Config } from "./config.js";

/** One thing a running gateway offers, for the banner: a name and where it is (or what it says now). */
export type Surface = [name: string, where: string];

/** An address a browser can open: a wildcard listen address is reached as localhost from here. */
function base(host: string, port: number): string {
  const shown = host === "0.0.0.0" || host === "::" || host === "" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

/**
 * What the HTTP side serves, with its address and, where something is off, the variable that turns it on: the web
 * chat and the API (HTTP_API_TOKENS or JWT), /admin (ADMIN_TOKENS), /metrics (on HTTP_PORT or METRICS_PORT) and the
 * health checks.
 */
export function httpSurfaces(config: Config, ports: { http: number; metrics: number | null }): Surface[] {
  const http = base(config.HTTP_HOST, ports.http);
  const apiOpen = config.HTTP_API_TOKENS.size > 0 || config.HTTP_JWT_JWKS_URL !== undefined;
  const noTokens = apiOpen ? "" : "   (no API tokens yet: set HTTP_API_TOKENS)";
  const metrics = `${ports.metrics === null ? http : base(config.HTTP_HOST, ports.metrics)}/metrics${config.METRICS_TOKEN ? "   (needs METRICS_TOKEN)" : ""}`;
  return [
    ["Web chat", `${http}/${noTokens}`],
    ["HTTP API", `${http}/v1/${noTokens}`],
    ["Admin", `${http}/admin${config.ADMIN_TOKENS.size > 0 ? "" : "   (off: set ADMIN_TOKENS)"}`],
    ["Metrics", metrics],
    ["Health", `${http}/healthz, ${http}/readyz`],
  ];
}
