import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import { TokenSet } from "../secret-tokens.js";
import type { Metrics } from "./metrics.js";

export type MetricsHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * GET /metrics in the Prometheus text format. With METRICS_TOKEN set, only `Authorization: Bearer <token>` may
 * read it (compared in constant time); without it, it is open, whatever the API's own tokens are.
 */
export function metricsHandler(metrics: Metrics, token: string | undefined, log: Logger): MetricsHandler {
  const expected = token ? new TokenSet([[token, true]]) : null;
  return async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return void res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("only GET\n");
    if (expected) {
      const presented = TokenSet.bearer(req.headers.authorization);
      if (presented === null || expected.match(presented) === null) {
        res.writeHead(401, { "www-authenticate": 'Bearer realm="metrics"', "content-type": "text/plain" }).end("send Authorization: Bearer <METRICS_TOKEN>\n");
        return;
      }
    }
    try {
      const { contentType, body } = await metrics.render();
      res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" }).end(req.method === "HEAD" ? undefined : body);
    } catch (error) {
      // The gauges read the store: a database that does not answer makes the scrape fail, visibly, not the process.
      log.warn({ err: error }, "could not collect the metrics");
      res.writeHead(503, { "content-type": "text/plain" }).end("the metrics could not be collected (is the database reachable?)\n");
    }
  };
}

/** METRICS_PORT: /metrics on a port of its own (e.g. one only the monitoring network reaches). */
export async function startMetricsServer(host: string, port: number, handler: MetricsHandler, log: Logger): Promise<{ port: number; stop(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== "/metrics") return void res.writeHead(404, { "content-type": "text/plain" }).end("only /metrics here\n");
    void handler(req, res).catch((error: unknown) => {
      log.error({ err: error }, "metrics request failed");
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  server.on("error", (error) => log.error({ err: error }, "metrics server error"));
  const address = server.address();
  const bound = address && typeof address === "object" ? address.port : port;
  log.info({ host, port: bound }, "metrics listening");
  return {
    port: bound,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
