// Traces of a real conversation (the gateway, the runtime and the Anthropic SDK against the strict fake), exported
// by the official OTLP exporters to the in-process OTLP receiver, and read back decoded: the span tree of a
// takeover, the GenAI attributes, the link that ties a task's requests together, and no message content unless
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT asks for it.
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PriceTable } from "../../src/llm/prices.js";
import { sessionHasher } from "../../src/telemetry/genai.js";
import { Telemetry } from "../../src/telemetry/telemetry.js";
import { reply, startFakeAnthropic, text, toolUse } from "../fakes/anthropic/server.js";
import { OtlpReceiver, type ReceivedSpan } from "../fakes/otlp.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { transferTool } from "../helpers/tools.js";

let h: Harness | undefined;
let receiver: OtlpReceiver | undefined;
let provider: BasicTracerProvider | undefined;
afterEach(async () => {
  await h?.close();
  await provider?.shutdown();
  await receiver?.close();
  h = provider = receiver = undefined;
});

const SECRET = "my cat is called Mistral";
const HASH_SECRET = "per-deployment-hash-secret-1234";
const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheWrite,
});

async function traced(exporter: (url: string) => SpanExporter, captureContent = false, tools = [transferTool([])]) {
  receiver = await OtlpReceiver.start();
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "switchboard" }),
    spanProcessors: [new SimpleSpanProcessor(exporter(receiver.tracesUrl))],
  });
  const telemetry = new Telemetry({ metrics: null, tracer: provider.getTracer("switchboard"), captureContent, sessionHash: sessionHasher(HASH_SECRET) });
  h = await startHarness({
    files: skillFile("interview", "Ask one question."),
    telemetry,
    tools,
    prices: new PriceTable({ "claude-test": { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } }),
  });
  return { h, receiver, provider };
}

/** Scripts a takeover: main hands the chat to the interview skill, which asks; the answer completes it; main thanks. */
function scriptTakeover(harness: Harness) {
  harness.fake.script(
    { ...reply(toolUse("use_skill", { name: "interview", message: "interview the user" })), usage: usage(100, 20, 50, 10) },
    { ...text("What is your cat called?"), usage: usage(80, 8) },
    { ...reply(toolUse("complete", { result: "the cat is Mistral" })), usage: usage(90, 12) },
    { ...text("Thanks, noted."), usage: usage(120, 5) },
  );
}

const spansOf = (all: ReceivedSpan[], traceId: string) => all.filter((s) => s.traceId === traceId);

describe("traces of a takeover conversation", () => {
  it("one trace per request, in the GenAI span tree, with usage and cost; the second request links to the task's first (OTLP protobuf)", async () => {
    const { h, receiver, provider } = await traced((url) => new ProtoExporter({ url }));
    scriptTakeover(h);
    expect(await h.say(`Hi, ${SECRET}. Interview me.`)).toEqual(["skill:interview: What is your cat called?"]);
    expect(await h.say("Mistral")).toEqual(["main: Thanks, noted."]);
    await provider.forceFlush();
    const all = await receiver.waitFor((spans) => spans.filter((s) => s.name === "request console").length === 2);

    const [first, second] = all.filter((s) => s.name === "request console").sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
    expect(first!.traceId).not.toBe(second!.traceId);
    expect(receiver.tree(first!.traceId)).toBe(
      [
        "request console",
        "  invoke_agent main",
        "    chat claude-test",
        "    execute_tool use_skill",
        "      invoke_agent skill:interview",
        "        chat claude-test",
      ].join("\n"),
    );
    expect(receiver.tree(second!.traceId)).toBe(
      ["request console", "  invoke_agent skill:interview", "    chat claude-test", "    execute_tool complete", "  invoke_agent main", "    chat claude-test"].join(
        "\n",
      ),
    );

    // The request: provider, a digest of the session key (never the key), the task, and its events.
    const task = (await h.store.tasks.ofSession("console:t"))[0]!;
    expect(first!.kind).toBe(2); // SERVER
    expect(first!.attributes).toMatchObject({ "switchboard.provider": "console", "switchboard.task.id": task.id, "switchboard.request.kind": "message" });
    // Keyed by the deployment's secret: whoever reads the traces cannot hash chat ids until one matches.
    expect(first!.attributes["switchboard.session.key_hash"]).toBe(createHmac("sha256", HASH_SECRET).update("console:t").digest("hex").slice(0, 16));
    expect(second!.attributes["switchboard.session.key_hash"]).toBe(first!.attributes["switchboard.session.key_hash"]);
    expect(JSON.stringify(first!.attributes)).not.toContain("console:t");
    expect(first!.events.map((e) => e.name)).toEqual(["switchboard.stack.push", "switchboard.delivery"]);
    expect(first!.events[0]!.attributes).toMatchObject({ "gen_ai.agent.name": "skill:interview", "switchboard.stack.depth": 2 });
    expect(second!.events.map((e) => e.name)).toEqual(["switchboard.stack.pop", "switchboard.delivery"]);
    // The task is followed end to end: the second request links to the first one's span.
    expect(second!.links).toEqual([{ traceId: first!.traceId, spanId: first!.spanId, attributes: { "switchboard.link": "task_start", "switchboard.task.id": task.id } }]);
    expect(second!.attributes["switchboard.task.id"]).toBe(task.id);

    // invoke_agent and chat carry the GenAI conventions' attributes.
    const trace1 = spansOf(all, first!.traceId);
    const main = trace1.find((s) => s.name === "invoke_agent main")!;
    expect(main.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "main",
      "gen_ai.provider.name": "anthropic",
      "switchboard.agent.depth": 1,
    });
    const skill = trace1.find((s) => s.name === "invoke_agent skill:interview")!;
    expect(skill.attributes).toMatchObject({ "gen_ai.agent.name": "skill:interview", "switchboard.agent.depth": 2, "switchboard.turn.result": "SEND_TEXT" });
    const chat = receiver.children(main).find((s) => s.name === "chat claude-test")!;
    expect(chat.kind).toBe(3); // CLIENT
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.system": "anthropic",
      "gen_ai.request.model": "claude-test",
      "gen_ai.response.model": "claude-test",
      "gen_ai.usage.input_tokens": 100,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_read.input_tokens": 50,
      "gen_ai.usage.cache_creation.input_tokens": 10,
      "gen_ai.response.finish_reasons": ["tool_use"],
    });
    // 100×$3 + 20×$15 + 50×$0.30 + 10×$3.75 per million tokens.
    expect(chat.attributes["switchboard.cost_usd"]).toBeCloseTo((100 * 3 + 20 * 15 + 50 * 0.3 + 10 * 3.75) / 1e6, 12);
    const tool = trace1.find((s) => s.name === "execute_tool use_skill")!;
    expect(tool.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "use_skill", "switchboard.tool.outcome": "handoff" });
    expect(tool.attributes["gen_ai.tool.call.id"]).toMatch(/^toolu_/);

    // By default no span carries what anyone said.
    for (const span of all) {
      const dump = JSON.stringify(span.attributes) + JSON.stringify(span.events.map((e) => [e.name, e.attributes]));
      expect(dump).not.toContain("Mistral");
      expect(Object.keys(span.attributes).filter((k) => /input\.messages|output\.messages|system_instructions|call\.arguments/.test(k))).toEqual([]);
    }
  });

  it("with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT the chat spans carry the messages (OTLP JSON)", async () => {
    const { h, receiver, provider } = await traced((url) => new JsonExporter({ url }), true);
    scriptTakeover(h);
    await h.say(`Hi, ${SECRET}. Interview me.`);
    await provider.forceFlush();
    const all = await receiver.waitFor((spans) => spans.some((s) => s.name === "request console"));
    expect(all.every((s) => s.encoding === "json")).toBe(true);
    const chat = all.find(
      (s) =>
        s.name === "chat claude-test" && receiver!.children(s).length === 0 && String(s.attributes["gen_ai.input.messages"] as string | undefined).includes("Mistral"),
    )!;
    const input = JSON.parse(chat.attributes["gen_ai.input.messages"] as string) as Array<{ role: string; parts: Array<{ type: string; content?: string }> }>;
    expect(input[0]!.role).toBe("user");
    expect(input[0]!.parts.some((p) => p.type === "text" && p.content?.includes(SECRET))).toBe(true);
    expect(JSON.parse(chat.attributes["gen_ai.output.messages"] as string)).toEqual([
      {
        role: "assistant",
        parts: [{ type: "tool_call", id: expect.stringMatching(/^toolu_/), name: "use_skill", arguments: { name: "interview", message: "interview the user" } }],
        finish_reason: "tool_use",
      },
    ]);
    expect(JSON.parse(chat.attributes["gen_ai.system_instructions"] as string)[0]).toMatchObject({ type: "text" });
    expect(all.find((s) => s.name === "execute_tool use_skill")!.attributes["gen_ai.tool.call.arguments"]).toBe(
      JSON.stringify({ name: "interview", message: "interview the user" }),
    );
  });

  it("a turn that waits for an approval and the turn its decision resumes are two traces of one task, linked", async () => {
    const runs: string[] = [];
    const { h, receiver, provider } = await traced((url) => new ProtoExporter({ url }), false, [transferTool(runs)]);
    h.fake.script(reply(toolUse("transfer", { amount: 5 })), text("Done: sent."));
    await h.say("send 5");
    const [approval] = await h.store.approvals.pending("console:t");
    expect((await h.gateway.decide(approval!.id, "alice", "approve")).status).toBe("approved");
    await h.gateway.idle();
    expect(runs).toEqual(["sent"]);
    await provider.forceFlush();
    const all = await receiver.waitFor((spans) => spans.filter((s) => s.name === "request console").length === 2);
    const [asked, resumed] = all.filter((s) => s.name === "request console").sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
    expect(asked!.events.map((e) => e.name)).toContain("switchboard.approval.requested");
    expect(asked!.events.find((e) => e.name === "switchboard.approval.requested")!.attributes).toMatchObject({
      "gen_ai.tool.name": "transfer",
      "switchboard.approval.id": approval!.id,
    });
    expect(resumed!.attributes["switchboard.request.kind"]).toBe("approval");
    expect(resumed!.events.map((e) => e.name)).toContain("switchboard.approval.decided");
    expect(resumed!.links.map((l) => l.spanId)).toEqual([asked!.spanId]);
    expect(receiver.tree(resumed!.traceId)).toBe(["request console", "  invoke_agent main", "    execute_tool transfer", "    chat claude-test"].join("\n"));
  });

  it("a tool name the model made up is traced as unknown, not as a new span name per invention", async () => {
    const { h, receiver, provider } = await traced((url) => new ProtoExporter({ url }));
    h.fake.script({ ...reply(toolUse("rm_-rf_everything_\u202e", { x: 1 })), allowUnoffered: true }, text("Sorry."));
    await h.say("do it");
    await provider.forceFlush();
    const all = await receiver.waitFor((spans) => spans.some((s) => s.name === "request console"));
    const tool = all.find((s) => s.attributes["gen_ai.operation.name"] === "execute_tool")!;
    expect(tool.name).toBe("execute_tool unknown");
    expect(tool.attributes["switchboard.tool.outcome"]).toBe("error");
    expect(tool.status.code).toBe(2);
  });

  it("after a restart (a new process, its own tracer) the task's next request still links to where the task began", async () => {
    const fake = await startFakeAnthropic();
    const dir = mkdtempSync(join(tmpdir(), "switchboard-trace-"));
    const dbFile = join(dir, "switchboard.db");
    receiver = await OtlpReceiver.start();
    const process = () => {
      const p = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ProtoExporter({ url: receiver!.tracesUrl }))] });
      return { provider: p, telemetry: new Telemetry({ metrics: null, tracer: p.getTracer("switchboard"), captureContent: false }) };
    };
    try {
      const before = process();
      const first = await startHarness({ files: skillFile("interview", "Ask one question."), fake, dbFile, telemetry: before.telemetry });
      scriptTakeover(first);
      await first.say("Interview me.");
      await before.provider.forceFlush();
      await first.close(true);
      await before.provider.shutdown();

      const after = process();
      provider = after.provider;
      h = await startHarness({ files: skillFile("interview", "Ask one question."), fake, dbFile, telemetry: after.telemetry });
      expect(await h.say("Mistral")).toEqual(["main: Thanks, noted."]);
      await after.provider.forceFlush();
      const requests = (await receiver.waitFor((spans) => spans.filter((s) => s.name === "request console").length === 2)).filter((s) => s.name === "request console");
      const [started, resumed] = requests.sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
      expect(resumed!.links).toMatchObject([{ traceId: started!.traceId, spanId: started!.spanId }]);
      expect(resumed!.attributes["switchboard.task.id"]).toBe(started!.attributes["switchboard.task.id"]);
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
