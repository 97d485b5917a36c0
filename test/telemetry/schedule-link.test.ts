// A scheduled run's trace links to the task that scheduled it: the `schedule` tool keeps where its request was in the
// traces (a W3C traceparent) with the job, and the run's root span carries an OpenTelemetry link to that span
// context, not only the job's attributes. The real gateway, runtime, scheduler and SDK against the strict fake;
// spans exported by the official OTLP exporter to the in-process receiver and read back decoded.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, expect, it } from "vitest";
import { Telemetry } from "../../src/telemetry/telemetry.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { OtlpReceiver } from "../fakes/otlp.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { manualTimeouts } from "../helpers/timers.js";

let h: Harness | undefined;
let receiver: OtlpReceiver | undefined;
let provider: BasicTracerProvider | undefined;
afterEach(async () => {
  await h?.close();
  await provider?.shutdown();
  await receiver?.close();
  h = provider = receiver = undefined;
});

it("links a scheduled run's request span to the span of the request that scheduled its job", async () => {
  receiver = await OtlpReceiver.start();
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "switchboard" }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
  });
  const telemetry = new Telemetry({
    metrics: null,
    tracer: provider.getTracer("switchboard"),
    captureContent: false,
    // As app.ts reads it: the job's stored traceparent.
    scheduledBy: async (jobId) => (await h!.store.schedules.get(jobId))?.traceparent ?? null,
  });
  const clock = { t: Date.parse("2026-11-27T10:00:00Z") };
  const timeouts = manualTimeouts();
  h = await startHarness({ telemetry, schedules: { now: () => clock.t, timers: timeouts.timers, defaultZone: "UTC" } });
  h.fake.script(reply(toolUse("schedule", { instruction: "Remind Alice to stretch", in_seconds: 60 })), text("I'll remind you in a minute."));
  expect(await h.say("remind me to stretch in a minute")).toEqual(["main: I'll remind you in a minute."]);
  const [job] = await h.store.schedules.list("alice");

  clock.t += 60_000;
  h.fake.script(text("Time to stretch!"));
  h.scheduler!.start();
  await h.scheduler!.idle();
  await h.gateway.idle();
  await provider.forceFlush();
  const all = await receiver.waitFor((spans) => spans.filter((s) => s.name === "request console").length === 2);
  const [scheduling, run] = all.filter((s) => s.name === "request console").sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));

  expect(job!.traceparent).toBe(`00-${scheduling!.traceId}-${scheduling!.spanId}-01`);
  expect(run!.traceId).not.toBe(scheduling!.traceId);
  expect(run!.attributes).toMatchObject({ "switchboard.schedule.job_id": job!.id, "switchboard.schedule.due": "2026-11-27T10:01:00.000Z" });
  expect(run!.links).toEqual([
    { traceId: scheduling!.traceId, spanId: scheduling!.spanId, attributes: { "switchboard.link": "scheduled_by", "switchboard.schedule.job_id": job!.id } },
  ]);
  // The scheduling request's own span carries the task the job names.
  expect(scheduling!.attributes["switchboard.task.id"]).toBe(job!.createdByTask);
});
