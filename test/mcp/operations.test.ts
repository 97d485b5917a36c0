// Operating MCP: each call in the traces (an execute_tool span with the MCP tool's name, exported over OTLP), the
// metrics per server on /metrics, and the admin API's view of this replica's servers.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { HttpProvider } from "../../providers/http/server.js";
import { silentLogger } from "../../src/log.js";
import type { McpManager } from "../../src/mcp/manager.js";
import { mcpMetrics } from "../../src/telemetry/mcp.js";
import { Metrics } from "../../src/telemetry/metrics.js";
import { Telemetry } from "../../src/telemetry/telemetry.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { OtlpReceiver } from "../fakes/otlp.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { TOKENS } from "../helpers/http-api.js";
import { faultServer, mcpConfig, startMcp } from "../helpers/mcp.js";
import { manualTimeouts } from "../helpers/timers.js";

let h: Harness | undefined;
let manager: McpManager | undefined;
let receiver: OtlpReceiver | undefined;
let provider: BasicTracerProvider | undefined;
let api: HttpProvider | undefined;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  await manager?.close();
  await provider?.shutdown();
  await receiver?.close();
  h = manager = provider = receiver = api = undefined;
});

const counts = async () => ({ activeStacks: 0, queuedMessages: 0, pendingApprovals: 0, undeliverable: 0, outboxBacklog: 0 });

describe("operating MCP", () => {
  it("a call is an execute_tool span with the MCP tool's name, and counted per server and per tool", async () => {
    receiver = await OtlpReceiver.start();
    provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "switchboard" }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
    });
    const metrics = new Metrics(counts);
    manager = (await startMcp(mcpConfig({ fault: faultServer() }), { observer: mcpMetrics(metrics) })).manager;
    const telemetry = new Telemetry({ metrics, tracer: provider.getTracer("switchboard"), captureContent: false, knownTool: (name) => manager!.offers(name) });
    h = await startHarness({ mcp: manager, telemetry });
    h.fake.script(
      {
        ...reply(toolUse("mcp__fault__echo", { text: "traced" }, "toolu_a"), toolUse("mcp__fault__fail", {}, "toolu_b"), toolUse("mcp__fault__made_up", {}, "toolu_c")),
        allowUnoffered: true,
      },
      text("done"),
    );
    await h.say("trace it");
    const spans = await receiver.waitFor((all) => all.filter((s) => s.name.startsWith("execute_tool")).length >= 3);
    const echo = spans.find((s) => s.name === "execute_tool mcp__fault__echo")!;
    expect(echo.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "mcp__fault__echo",
      "gen_ai.tool.call.id": "toolu_a",
      "switchboard.tool.outcome": "ok",
    });
    expect(spans.find((s) => s.name === "execute_tool mcp__fault__fail")!.attributes["switchboard.tool.outcome"]).toBe("error");
    // A name the model made up under the server's prefix is not a metric label.
    expect(spans.find((s) => s.attributes["gen_ai.tool.name"] === "mcp__fault__made_up")!.name).toBe("execute_tool unknown");
    const body = (await metrics.render()).body;
    expect(body).toContain('switchboard_mcp_calls_total{server="fault",outcome="ok"} 1');
    expect(body).toContain('switchboard_mcp_calls_total{server="fault",outcome="error"} 1');
    expect(body).toContain('switchboard_mcp_calls_total{server="fault",outcome="unavailable"} 1');
    expect(body).toMatch(/switchboard_mcp_call_duration_seconds_count\{server="fault"\} 2/);
    expect(body).toContain('switchboard_mcp_server_up{server="fault"} 1');
    expect(body).toContain('switchboard_mcp_tools{server="fault"} 11');
    expect(body).toContain('switchboard_tool_calls_total{tool="mcp__fault__echo",outcome="ok"} 1');
    expect(body).toContain('switchboard_tool_calls_total{tool="unknown",outcome="error"} 1');
  });

  it("the admin API shows this replica's MCP servers: transport, status, tools and last error", async () => {
    manager = (await startMcp(mcpConfig({ fault: faultServer(), gone: { command: "/nonexistent/mcp-server" } }))).manager;
    h = await startHarness({ mcp: manager });
    const mcp = manager;
    api = new HttpProvider(h.gateway, {
      host: "127.0.0.1",
      port: 0,
      auth: { tokens: TOKENS },
      log: silentLogger(),
      timers: manualTimeouts().timers,
      admin: { tokens: new Map([["adm-0123456789abcdef", "ops"]]), stuckAfterMs: 60_000, mcp: () => mcp.views() },
    });
    await api.start();
    const r = await fetch(`http://127.0.0.1:${api.port()}/admin/api/mcp`, { headers: { authorization: "Bearer adm-0123456789abcdef" } });
    expect(r.status).toBe(200);
    const { servers } = (await r.json()) as { servers: Array<Record<string, unknown>> };
    expect(servers).toEqual([
      expect.objectContaining({ name: "fault", transport: "stdio", status: "connected", lastError: null, tools: expect.arrayContaining(["mcp__fault__echo"]) }),
      expect.objectContaining({ name: "gone", transport: "stdio", status: "retrying", tools: [], lastError: expect.stringContaining("ENOENT") }),
    ]);
    expect((await fetch(`http://127.0.0.1:${api.port()}/admin/api/mcp`)).status).toBe(401);
  });
});
