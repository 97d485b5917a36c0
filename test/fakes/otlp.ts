// An in-process fake of an OpenTelemetry Collector's OTLP/HTTP traces endpoint (POST /v1/traces).
//
// Follows the OTLP specification, "OTLP/HTTP" (https://opentelemetry.io/docs/specs/otlp/#otlphttp,
// docs/specification.md of open-telemetry/opentelemetry-proto v1.11.0), and the messages in
// otlp/trace.proto. Tests point the REAL exporters at it (`OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url`,
// or `new OTLPTraceExporter({ url: receiver.tracesUrl })`) and assert on the decoded spans.
//
// Strict where the spec is: binary protobuf or OTLP/JSON only (else 415, worded as the Collector
// words it), optionally gzip; a body that does not decode is a 400 with a google.rpc.Status in the
// request's encoding (what decodes, and how strictly: otlp/decode.ts); over 64 MiB, before or after
// gunzip, is a 413. Success is 200 with an empty ExportTraceServiceResponse (`{}` in JSON). Other
// paths are 404 and other methods 405, as on the Collector.
//
//   const receiver = await OtlpReceiver.start();
//   const exporter = new OTLPTraceExporter({ url: receiver.tracesUrl });
//   … record spans, await provider.forceFlush() (or await receiver.waitFor(…) when the code under test exports on its own schedule) …
//   expect(receiver.children(receiver.byName("turn")).map((s) => s.name), receiver.tree()).toEqual(["llm"]);

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BadData, BODY_LIMIT, decodeExport, inflate, JSON_TYPE, PROTOBUF, rpcStatusBody, successBody, TooLarge, type ReceivedSpan } from "./otlp/decode.js";

export type { AttributeValue, Attributes, ReceivedSpan } from "./otlp/decode.js";

/** One accepted POST. */
export interface ReceivedExport {
  /** The media type, without parameters: application/x-protobuf or application/json. */
  contentType: string;
  spans: number;
  gzip: boolean;
}

interface Waiter {
  predicate: (spans: ReceivedSpan[]) => boolean;
  resolve: (spans: ReceivedSpan[]) => void;
  reject: (err: Error) => void;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly exports: ReceivedExport[] = [];
  readonly tracesUrl: string;
  private readonly waiters = new Set<Waiter>();

  private constructor(
    readonly url: string,
    private readonly server: ReturnType<typeof createServer>,
  ) {
    this.tracesUrl = `${url}/v1/traces`;
  }

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const receiver = new OtlpReceiver(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, server);
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      receiver.handle(req, res).catch((err: unknown) => reply(res, 500, "text/plain", `500 ${String(err)}`));
    });
    return receiver;
  }

  /** Resolves when `predicate(spans)` holds, checked now and after every accepted export; rejects after `timeoutMs` listing the span names received. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`waitFor: the condition did not hold within ${timeoutMs} ms; received ${this.names()}`));
      }, timeoutMs);
      const waiter: Waiter = {
        predicate,
        resolve: (spans) => (clearTimeout(timer), resolve(spans)),
        reject: (err) => (clearTimeout(timer), reject(err)),
      };
      this.waiters.add(waiter);
      this.check();
    });
  }

  /** The spans whose parent is `span`, in order of start time. */
  children(span: ReceivedSpan): ReceivedSpan[] {
    return byStart(this.spans.filter((s) => s.traceId === span.traceId && s.parentSpanId === span.spanId));
  }

  /** The one span named `name`; throws, listing what was received, when there is none or more than one. */
  byName(name: string): ReceivedSpan {
    const found = this.spans.filter((s) => s.name === name);
    if (found.length === 1) return found[0]!;
    throw new Error(`${found.length === 0 ? "no span" : `${found.length} spans`} named "${name}"; received ${this.names()}`);
  }

  /** One span name per line, indented two spaces per depth, siblings by start time; spans whose parent never arrived are roots marked "(orphan)". */
  tree(traceId?: string): string {
    const spans = this.spans.filter((s) => traceId === undefined || s.traceId === traceId);
    const ids = new Set(spans.map((s) => `${s.traceId}/${s.spanId}`));
    const lines: string[] = [];
    const walk = (span: ReceivedSpan, depth: number): void => {
      const orphan = depth === 0 && span.parentSpanId !== null ? " (orphan)" : "";
      lines.push(`${"  ".repeat(depth)}${span.name}${orphan}`);
      for (const child of this.children(span)) walk(child, depth + 1);
    };
    for (const root of byStart(spans.filter((s) => s.parentSpanId === null || !ids.has(`${s.traceId}/${s.parentSpanId}`)))) walk(root, 0);
    return lines.join("\n");
  }

  async close(): Promise<void> {
    for (const waiter of this.waiters) waiter.reject(new Error(`waitFor: the receiver closed; received ${this.names()}`));
    this.waiters.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections(); // the exporters keep connections alive
    await closed;
  }

  private names(): string {
    return this.spans.length === 0 ? "no spans" : `${this.spans.length} spans: ${this.spans.map((s) => s.name).join(", ")}`;
  }

  private check(): void {
    for (const waiter of this.waiters) {
      let holds: boolean;
      try {
        holds = waiter.predicate(this.spans);
      } catch (err) {
        this.waiters.delete(waiter);
        waiter.reject(err as Error);
        continue;
      }
      if (holds) {
        this.waiters.delete(waiter);
        waiter.resolve(this.spans);
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? "/", this.url).pathname !== "/v1/traces") return reply(res, 404, "text/plain", "404 page not found");
    if (req.method !== "POST") return reply(res, 405, "text/plain", "405 method not allowed, supported: [POST]");
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (contentType !== PROTOBUF && contentType !== JSON_TYPE) {
      return reply(res, 415, "text/plain", `415 unsupported media type, supported: [${JSON_TYPE}, ${PROTOBUF}]`);
    }
    const encoding = contentType === PROTOBUF ? "protobuf" : "json";
    const contentEncoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
    let spans: ReceivedSpan[];
    try {
      spans = decodeExport(inflate(await readBody(req), contentEncoding), encoding);
    } catch (err) {
      if (err instanceof TooLarge) return reply(res, 413, contentType, rpcStatusBody(encoding, 413, err.message));
      if (err instanceof BadData) return reply(res, 400, contentType, rpcStatusBody(encoding, 400, err.message));
      throw err;
    }
    this.spans.push(...spans);
    this.exports.push({ contentType, spans: spans.length, gzip: contentEncoding === "gzip" });
    reply(res, 200, contentType, successBody(encoding));
    this.check();
  }
}

function byStart(spans: ReceivedSpan[]): ReceivedSpan[] {
  return [...spans].sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : a.startTimeUnixNano > b.startTimeUnixNano ? 1 : 0));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new TooLarge("the request body exceeds 64 MiB");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function reply(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) }).end(body);
}
