// `npm start` as operators run it: tracing switched on by the standard OTEL_* variables alone (read by the official
// Node SDK), spans exported to the OTLP receiver fake in the default protobuf and in JSON; /metrics on the HTTP port
// and on METRICS_PORT, behind METRICS_TOKEN.
import { afterEach, describe, expect, it } from "vitest";
import { startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { OtlpReceiver } from "../fakes/otlp.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv, run, type Proc } from "../integration/child-process.js";

let proc: Proc | undefined;
let model: FakeAnthropic | undefined;
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  proc?.child.kill("SIGTERM");
  await proc?.exited;
  await model?.close();
  await receiver?.close();
  proc = model = receiver = undefined;
});

async function start(extra: Record<string, string>): Promise<{ port: number }> {
  model = await startFakeAnthropic();
  model.script(text("Hello from the model."));
  const port = await freePort();
  proc = run("src/main.ts", [], processEnv(model.url, writeDefinitions({}), { HTTP_PORT: String(port), HTTP_API_TOKENS: "tok-a:alice", ...extra }));
  await proc.logged("switchboard started");
  return { port };
}

async function ask(port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/messages`, {
    method: "POST",
    headers: { authorization: "Bearer tok-a", "content-type": "application/json" },
    body: JSON.stringify({ items: [{ content_type: "text", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
}

describe("tracing configured by the environment", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const) {
    it(`exports the request's spans over OTLP ${protocol}${protocol === "http/protobuf" ? " (the default)" : ""}, with OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES`, async () => {
      receiver = await OtlpReceiver.start();
      const { port } = await start({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        ...(protocol === "http/json" ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {}),
        OTEL_SERVICE_NAME: "switchboard-test",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=ci",
        // The batch processor's delay, read by the SDK: spans arrive in 50 ms instead of 5 s.
        OTEL_BSP_SCHEDULE_DELAY: "50",
      });
      await ask(port);
      const spans = await receiver.waitFor((all) => all.some((s) => s.name === "request http"), 20_000);
      expect(receiver.tree(spans.find((s) => s.name === "request http")!.traceId)).toBe(["request http", "  invoke_agent main", "    chat claude-sonnet-5-5"].join("\n"));
      const span = spans[0]!;
      expect(span.encoding).toBe(protocol === "http/json" ? "json" : "protobuf");
      expect(span.resource).toMatchObject({ "service.name": "switchboard-test", "deployment.environment.name": "ci" });
      expect(receiver.exports.every((e) => e.contentType === (protocol === "http/json" ? "application/json" : "application/x-protobuf"))).toBe(true);
    });
  }

  it("a typo in OTEL_EXPORTER_OTLP_PROTOCOL stops the start with a message naming it", async () => {
    model = await startFakeAnthropic();
    proc = run(
      "src/main.ts",
      [],
      processEnv(model.url, writeDefinitions({}), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuff" }),
    );
    expect(await proc.exited).toBe(1);
    expect(proc.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL (set in the environment): must be "http/protobuf" (the default), "http/json" or "grpc"');
  });
});

describe("GET /metrics in the running process", () => {
  it("is open on the HTTP port without METRICS_TOKEN, even though the API needs its tokens", async () => {
    const { port } = await start({});
    await ask(port);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const body = await res.text();
    expect(body).toContain('switchboard_inbound_messages_total{provider="http"} 1');
    expect(body).toContain('switchboard_model_calls_total{model="claude-sonnet-5-5",outcome="ok"} 1');
    expect(body).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(body).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect((await fetch(`http://127.0.0.1:${port}/v1/catalog`)).status).toBe(401);
  });

  it("moves to METRICS_PORT and asks for METRICS_TOKEN there", async () => {
    const metricsPort = await freePort();
    const { port } = await start({ METRICS_PORT: String(metricsPort), METRICS_TOKEN: "scrape-me" });
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    const open = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(open.status).toBe(401);
    expect(open.headers.get("www-authenticate")).toContain("Bearer");
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { authorization: "Bearer scrape-me" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("switchboard_active_stacks 0");
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  });
});
