// Scheduled runs over the HTTP API: a job scheduled from an HTTP session runs as a task of that session, which
// GET /v1/sessions/{id} marks as scheduled with its job id, and a client holding GET /v1/sessions/{id}/events open
// sees the run start, reply and end. Real server, runtime, scheduler and SDK against the strict fake.
import { afterEach, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import { lastUserText, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import type { Harness } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";
import { manualTimeouts } from "../../helpers/timers.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = undefined!;
});

type Body = Record<string, unknown>;
const get = (base: string, path: string, token = "tok-alice") => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });

/** Server-sent events read from a response until `until` has arrived. */
function sse(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let received = "";
  return {
    async until(needle: string): Promise<string> {
      while (!received.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before "${needle}"; received:\n${received}`);
        received += decoder.decode(value, { stream: true });
      }
      return received;
    },
    events: () =>
      received
        .split("\n\n")
        .filter((block) => block.startsWith("event: "))
        .map((block) => {
          const [head, data] = block.split("\n");
          return { event: head!.slice("event: ".length), data: JSON.parse(data!.slice("data: ".length)) as Body };
        }),
    close: () => reader.cancel(),
  };
}

it("a job scheduled from an HTTP session runs as a task of that session, marked as scheduled, on the session's open event stream", async () => {
  const clock = { t: Date.parse("2026-11-27T10:00:00Z") };
  const timeouts = manualTimeouts();
  let base: string;
  ({ h, api, base } = await startApi({ schedules: { now: () => clock.t, timers: timeouts.timers, defaultZone: "UTC" } }));
  h.fake.script(reply(toolUse("schedule", { instruction: "Remind Alice to stretch", in_seconds: 60 })), text("I'll remind you in a minute."));
  const first = (await (await post(base, "/v1/messages", message("remind me to stretch in a minute"))).json()) as Body;
  expect(first).toMatchObject({ status: "completed", text: "I'll remind you in a minute." });
  const sessionId = String(first.session_id);
  const [job] = await h.store.schedules.list("http:alice");
  expect(job).toMatchObject({ sessionKey: `http:${sessionId}`, ownerId: "http:alice" });

  // Another user cannot listen to Alice's session.
  expect((await get(base, `/v1/sessions/${sessionId}/events`, "tok-bob")).status).toBe(403);
  const res = await get(base, `/v1/sessions/${sessionId}/events`);
  expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
  const stream = sse(res);

  clock.t += 60_000;
  h.fake.script(text("Time to stretch, Alice!"));
  h.scheduler!.start();
  await h.scheduler!.idle();
  await h.gateway.idle();
  expect(lastUserText(h.fake.accepted().at(-1)!)).toContain(`[Scheduled run of job ${job!.id}`);
  await stream.until("event: done");
  const scheduled = { job_id: job!.id, due_at: "2026-11-27T10:01:00.000Z" };
  const all = stream.events();
  const events = all.filter((e) => e.event !== "delta");
  expect(events.map((e) => e.event)).toEqual(["request", "message", "done"]);
  const runId = events[0]!.data.request_id;
  // The reply streamed as it was written, between the run's start and its message.
  const deltas = all.filter((e) => e.event === "delta");
  expect(deltas.map((d) => d.data.text).join("")).toBe("Time to stretch, Alice!");
  expect(new Set(deltas.map((d) => d.data.request_id))).toEqual(new Set([runId]));
  expect(all.findIndex((e) => e.event === "delta")).toBeGreaterThan(0);
  expect(events[0]!.data).toMatchObject({ kind: "message", scheduled });
  expect(events[1]!.data).toEqual({ agent: "main", depth: 1, text: "Time to stretch, Alice!", kind: "message", request_id: runId });
  expect(events[2]!.data).toMatchObject({ request_id: runId, status: "done", task_id: expect.any(String), scheduled });
  await stream.close();

  const session = (await (await get(base, `/v1/sessions/${sessionId}`)).json()) as { tasks: Body[] };
  expect(session.tasks).toEqual([
    expect.objectContaining({ task_id: first.task_id, status: "completed", scheduled: null }),
    expect.objectContaining({ task_id: events[2]!.data.task_id, status: "completed", scheduled }),
  ]);
  const history = (await (await get(base, `/v1/sessions/${sessionId}/messages`)).json()) as { messages: Body[] };
  expect(history.messages.filter((m) => m.role === "user").map((m) => m.scheduled ?? null)).toEqual([null, scheduled]);
  expect(history.messages.at(-1)).toMatchObject({ role: "assistant", text: "Time to stretch, Alice!", request_id: runId });
});
