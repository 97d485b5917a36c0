// Drives the REAL OpenTelemetry exporters (OTLP/HTTP protobuf and JSON, plain and gzip) against the
// OTLP receiver fake and checks that every recorded detail comes back decoded exactly; then the
// spec's failure answers (415, 400 with a google.rpc.Status, 404, 405) to hand-made requests.

import { fileURLToPath } from "node:url";
import { context, SpanKind, SpanStatusCode, trace, type HrTime, type Span, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import protobuf from "protobufjs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OtlpReceiver } from "./otlp.js";

let receiver: OtlpReceiver;
let provider: BasicTracerProvider | undefined;

beforeEach(async () => {
  receiver = await OtlpReceiver.start();
});
afterEach(async () => {
  await provider?.shutdown();
  provider = undefined;
  await receiver.close();
});

// Times past 2^53 ns with odd nanoseconds, so a lossy int64 path would show.
const T0 = 1_767_225_600;
const at = (ms: number, ns = 7): HrTime => [T0 + Math.floor(ms / 1000), (ms % 1000) * 1_000_000 + ns];
const nanos = ([s, ns]: HrTime) => BigInt(s) * 1_000_000_000n + BigInt(ns);

function tracerFor(exporter: SpanExporter): Tracer {
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "switchboard-test", "deployment.environment.name": "test" }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return provider.getTracer("switchboard.otlp-fake", "1.2.3");
}

/** turn → llm → tool, plus a span in another trace that llm links to; ended innermost first. */
function recordTree(tracer: Tracer): Record<"linked" | "turn" | "llm" | "tool", Span> {
  const linked = tracer.startSpan("linked", { startTime: at(0) });
  linked.end(at(1));
  const turn = tracer.startSpan("turn", {
    kind: SpanKind.SERVER,
    startTime: at(10),
    attributes: { "chat.id": "c-1", "turn.index": 42, "turn.score": 0.25, "turn.final": true, "turn.tags": ["a", "b"], "turn.sizes": [1, 2, 3] },
  });
  const turnCtx = trace.setSpan(context.active(), turn);
  const llm = tracer.startSpan(
    "llm",
    { kind: SpanKind.CLIENT, startTime: at(20), links: [{ context: linked.spanContext(), attributes: { "link.reason": "retry of" } }] },
    turnCtx,
  );
  llm.addEvent("first-token", { "tokens.so_far": 3, "model.name": "fake" }, at(25, 999));
  const tool = tracer.startSpan("tool", { startTime: at(30), attributes: { "tool.name": "search" } }, trace.setSpan(turnCtx, llm));
  tool.setStatus({ code: SpanStatusCode.ERROR, message: "tool failed: timeout" });
  tool.end(at(40));
  llm.end(at(50));
  turn.end(at(60));
  return { linked, turn, llm, tool };
}

async function expectFaithful(recorded: ReturnType<typeof recordTree>, encoding: "protobuf" | "json") {
  await provider!.forceFlush();
  const { turn, llm, tool, linked } = recorded;
  // Every span arrived (the exporter may send them in more than one request, which can land in either order).
  expect(receiver.spans.map((s) => s.name).sort()).toEqual(["linked", "llm", "tool", "turn"]);
  expect(receiver.tree(turn.spanContext().traceId)).toBe("turn\n  llm\n    tool");

  const root = receiver.byName("turn");
  expect(root).toMatchObject({
    traceId: turn.spanContext().traceId,
    spanId: turn.spanContext().spanId,
    parentSpanId: null,
    kind: 2,
    startTimeUnixNano: nanos(at(10)),
    endTimeUnixNano: nanos(at(60)),
    attributes: { "chat.id": "c-1", "turn.index": 42, "turn.score": 0.25, "turn.final": true, "turn.tags": ["a", "b"], "turn.sizes": [1, 2, 3] },
    events: [],
    links: [],
    status: { code: 0, message: "" },
    scope: { name: "switchboard.otlp-fake", version: "1.2.3" },
    encoding,
  });
  expect(root.resource).toMatchObject({ "service.name": "switchboard-test", "deployment.environment.name": "test" });
  expect(Number.isInteger(root.attributes["turn.index"])).toBe(true);

  const child = receiver.byName("llm");
  expect(receiver.children(root)).toEqual([child]);
  expect(child).toMatchObject({
    traceId: turn.spanContext().traceId,
    spanId: llm.spanContext().spanId,
    parentSpanId: turn.spanContext().spanId,
    kind: 3,
    events: [{ name: "first-token", timeUnixNano: nanos(at(25, 999)), attributes: { "tokens.so_far": 3, "model.name": "fake" } }],
    links: [{ traceId: linked.spanContext().traceId, spanId: linked.spanContext().spanId, attributes: { "link.reason": "retry of" } }],
  });

  const grandchild = receiver.byName("tool");
  expect(receiver.children(child)).toEqual([grandchild]);
  expect(grandchild).toMatchObject({
    spanId: tool.spanContext().spanId,
    parentSpanId: llm.spanContext().spanId,
    kind: 1,
    status: { code: 2, message: "tool failed: timeout" },
    attributes: { "tool.name": "search" },
  });
  expect(receiver.byName("linked").traceId).not.toBe(turn.spanContext().traceId);
  for (const s of receiver.spans) expect(s.endTimeUnixNano).toBeGreaterThan(s.startTimeUnixNano);
  expect(root.startTimeUnixNano < child.startTimeUnixNano && child.endTimeUnixNano <= root.endTimeUnixNano).toBe(true);
}

describe("OtlpReceiver with the official exporters", () => {
  it("decodes binary protobuf from exporter-trace-otlp-proto exactly as recorded", async () => {
    await expectFaithful(recordTree(tracerFor(new ProtoTraceExporter({ url: receiver.tracesUrl }))), "protobuf");
    expect(receiver.exports).toEqual(Array(4).fill({ contentType: "application/x-protobuf", spans: 1, gzip: false }));
  });

  it("decodes OTLP/JSON from exporter-trace-otlp-http exactly as recorded", async () => {
    await expectFaithful(recordTree(tracerFor(new JsonTraceExporter({ url: receiver.tracesUrl }))), "json");
    expect(receiver.exports).toEqual(Array(4).fill({ contentType: "application/json", spans: 1, gzip: false }));
  });

  it("decodes gzip-compressed exports in both encodings", async () => {
    const compression = CompressionAlgorithm.GZIP;
    await expectFaithful(recordTree(tracerFor(new ProtoTraceExporter({ url: receiver.tracesUrl, compression }))), "protobuf");
    await provider!.shutdown();
    receiver.spans.length = 0;
    await expectFaithful(recordTree(tracerFor(new JsonTraceExporter({ url: receiver.tracesUrl, compression }))), "json");
    expect(receiver.exports.map((e) => e.gzip)).toEqual(Array(8).fill(true));
  });

  it("resolves waitFor from the request that delivers the awaited span", async () => {
    const tracer = tracerFor(new ProtoTraceExporter({ url: receiver.tracesUrl }));
    const waiting = receiver.waitFor((spans) => spans.some((s) => s.name === "turn"));
    recordTree(tracer);
    const spans = await waiting;
    expect(spans.map((s) => s.name)).toContain("turn");
  });
});

const STATUS = protobuf.loadSync(fileURLToPath(new URL("./otlp/trace.proto", import.meta.url))).lookupType("opentelemetry.proto.subset.RpcStatus");

async function post(body: string | Uint8Array, contentType: string, path = "/v1/traces") {
  return fetch(receiver.url + path, { method: "POST", headers: { "content-type": contentType }, body });
}

describe("OtlpReceiver answering as the OTLP/HTTP spec requires", () => {
  it("reads OTLP/JSON the way the spec writes it: hex ids in any case, int64 as string or number, unknown fields ignored", async () => {
    const span = {
      traceId: "5B8EFFF798038103D269B633813FC60C",
      spanId: "EEE19B7EC3C1B174",
      parentSpanId: "",
      name: "hand-made",
      kind: 2,
      startTimeUnixNano: "1544712660000000000",
      endTimeUnixNano: 1544712661000000000,
      attributes: [
        { key: "n", value: { intValue: "-7" } },
        { key: "list", value: { arrayValue: { values: [{ boolValue: false }, {}, { kvlistValue: { values: [{ key: "k", value: { doubleValue: "NaN" } }] } }] } } },
      ],
      someFutureField: { x: 1 },
    };
    const res = await post(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }), "application/json; charset=utf-8");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe("{}");
    expect(receiver.spans[0]).toMatchObject({
      traceId: "5b8efff798038103d269b633813fc60c",
      spanId: "eee19b7ec3c1b174",
      parentSpanId: null,
      startTimeUnixNano: 1544712660000000000n,
      attributes: { n: -7, list: [false, null, { k: NaN }] },
      resource: {},
      scope: { name: "", version: "" },
    });
  });

  it("answers 415 in plain text, as the Collector does, to any other content type", async () => {
    const res = await post("hello", "text/plain");
    expect(res.status).toBe(415);
    expect(await res.text()).toBe("415 unsupported media type, supported: [application/json, application/x-protobuf]");
    expect(receiver.exports).toEqual([]);
  });

  it("answers 400 with a protobuf google.rpc.Status to a body that is not a protobuf ExportTraceServiceRequest", async () => {
    const res = await post(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), "application/x-protobuf");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    const status = STATUS.toObject(STATUS.decode(new Uint8Array(await res.arrayBuffer())));
    expect(status).toMatchObject({ code: 3, message: expect.stringMatching(/^invalid protobuf ExportTraceServiceRequest/) });
  });

  it("answers 400 with a JSON google.rpc.Status to invalid JSON, enum names and ids of the wrong length", async () => {
    const bad = async (body: string, message: RegExp) => {
      const res = await post(body, "application/json");
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ code: 3, message: expect.stringMatching(message) });
    };
    await bad("{not json", /^invalid OTLP\/JSON/);
    const spans = (span: object) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] });
    const ids = { traceId: "5b8efff798038103d269b633813fc60c", spanId: "eee19b7ec3c1b174" };
    await bad(spans({ ...ids, kind: "SPAN_KIND_SERVER" }), /^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.kind: OTLP\/JSON enum values must be integers/);
    await bad(spans({ ...ids, spanId: "eee19b7e" }), /spans\[0\]\.spanId: expected 8 bytes, got 4/);
    expect(receiver.spans).toEqual([]);
  });

  it("answers 404 to other paths and 405 to other methods", async () => {
    expect((await post("{}", "application/json", "/v1/metrics")).status).toBe(404);
    expect((await fetch(receiver.tracesUrl)).status).toBe(405);
  });

  it("rejects waitFor after its timeout, naming the spans received", async () => {
    await expectFaithful(recordTree(tracerFor(new ProtoTraceExporter({ url: receiver.tracesUrl }))), "protobuf");
    await expect(receiver.waitFor((spans) => spans.some((s) => s.name === "never"), 20)).rejects.toThrow(
      "waitFor: the condition did not hold within 20 ms; received 4 spans: linked, tool, llm, turn",
    );
    expect(() => receiver.byName("never")).toThrow('no span named "never"; received 4 spans: linked, tool, llm, turn');
  });
});
