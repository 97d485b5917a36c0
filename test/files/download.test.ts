// Platform file downloads (src/files/download.ts) against a real HTTP server: the size is refused from the
// Content-Length before reading, enforced while streaming when the header is missing or lies, failures retried
// with backoff on the injected timers, and an HTML page recognised instead of being taken for the file.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { download } from "../../src/files/download.js";
import { systemTimers } from "../../src/runtime/deps.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, hit: number) => void): Promise<{ url: string; hits: () => number; sent: () => number }> {
  let hits = 0;
  let sent = 0;
  server = createServer((req, res) => {
    const write = res.write.bind(res);
    res.write = ((chunk: Buffer, ...rest: never[]) => ((sent += chunk.length), write(chunk, ...rest))) as typeof res.write;
    handler(req, res, ++hits);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/file`, hits: () => hits, sent: () => sent };
}

const MB = 1024 * 1024;
const options = (url: string) => ({ url, maxBytes: MB, timers: systemTimers, backoffMs: 1 });

describe("download", () => {
  it("refuses a file whose Content-Length is over the limit without reading its body", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-length": 30 * MB, "content-type": "image/png" });
      res.flushHeaders();
      // The body never comes: a client that waited for it would hang here.
    });
    expect(await download(options(s.url))).toEqual({ ok: false, problem: "too_large", size: 30 * MB });
  });

  it("stops reading a body without Content-Length once it passes the limit", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      // Chunked, endless: 64 KB at a time until the client goes away.
      const chunk = Buffer.alloc(64 * 1024, 1);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      res.on("close", () => res.destroy());
      pump();
    });
    expect(await download(options(s.url))).toEqual({ ok: false, problem: "too_large", size: null });
    expect(s.sent()).toBeLessThan(64 * MB);
  });

  it("retries a dropped connection and a 503, then reads the file", async () => {
    const flaky = await serve((req, res, hit) => {
      if (hit === 1) return void req.socket.destroy();
      if (hit === 2) return void res.writeHead(503).end();
      res.writeHead(200, { "content-type": "text/csv" }).end("a,b\n");
    });
    const got = await download(options(flaky.url));
    expect(got).toMatchObject({ ok: true, contentType: "text/csv" });
    expect(got.ok && got.bytes.toString()).toBe("a,b\n");
    expect(flaky.hits()).toBe(3);
  });

  it("gives up after the last try, and never retries a 404", async () => {
    const missing = await serve((_req, res) => void res.writeHead(404).end());
    expect(await download(options(missing.url))).toEqual({ ok: false, problem: "failed", status: 404, detail: "HTTP 404" });
    expect(missing.hits()).toBe(1);
  });

  it("recognises an HTML page (a sign-in page) where a file was expected", async () => {
    const s = await serve((_req, res) => void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!DOCTYPE html><title>Sign in</title>"));
    expect(await download(options(s.url))).toEqual({ ok: false, problem: "html", status: 200 });
  });
});
