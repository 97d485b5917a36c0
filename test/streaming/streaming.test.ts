// Replies stream as the model writes them, through the real path: the SDK streams from the fake Messages API
// (server-sent events as documented), the runtime reports each text delta, the gateway routes it, and the surface
// shows it. What is stored and delivered whole is the reply, once.
import { PassThrough } from "node:stream";
import { afterEach, expect, it } from "vitest";
import { HttpProvider } from "../../providers/http/server.js";
import { startConsole } from "../../providers/console/console.js";
import { holdStream, reply, systemText, text, toolUse } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { message, post, startApi } from "../helpers/http-api.js";

let h: Harness;
let api: HttpProvider | null = null;
afterEach(async () => {
  await api?.stop();
  api = null;
  await h.close();
});

/** Reads an SSE response as it arrives; `until` resolves once the text so far contains `needle`. */
function sse(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const state = { received: "" };
  return {
    state,
    async until(needle: string) {
      while (!state.received.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended without ${needle}:\n${state.received}`);
        state.received += decoder.decode(value, { stream: true });
      }
    },
  };
}

it("the HTTP API streams delta events before the model finishes, then the whole message once", async () => {
  const started = await startApi();
  ({ h, api } = started);
  const hold = holdStream(2);
  h.fake.script({ ...text("Lisbon is lovely in May."), stream: hold.stream });
  const res = await post(started.base, "/v1/messages", message("where to?"), "tok-alice", { accept: "text/event-stream" });
  const events = sse(res);
  await hold.paused; // the model has written two words and is still writing
  await events.until('"text":"is "');
  expect(events.state.received).toContain('event: delta\ndata: {"agent":"main","depth":1,"text":"Lisbon "}');
  expect(events.state.received).not.toContain("event: message");
  hold.release();
  await events.until("event: done");
  const messages = events.state.received.split("\n\n").filter((e) => e.startsWith("event: message"));
  expect(messages).toEqual(['event: message\ndata: {"agent":"main","depth":1,"text":"Lisbon is lovely in May.","kind":"message"}']);
  const deltas = events.state.received.split("\n\n").filter((e) => e.startsWith("event: delta"));
  const written = deltas.map((e) => (JSON.parse(e.split("data: ")[1]!) as { text: string }).text).join("");
  expect(written).toBe("Lisbon is lovely in May.");
  // Stored is the whole reply, once.
  const replies = await h.store.outbox.ofRequest(
    (JSON.parse(events.state.received.split("event: done\ndata: ")[1]!.split("\n")[0]!) as { request_id: string }).request_id,
  );
  expect(replies.map((r) => r.text)).toEqual(["Lisbon is lovely in May."]);
});

it("a child the user talks to streams under its own label; a batch agent answering its caller streams nothing", async () => {
  const started = await startApi({ files: { ...skillFile("interview", "Ask."), ...agentFile("checker", "Check.", "mode: batch\n") } });
  ({ h, api } = started);
  h.fake.fallback((req) => {
    const system = systemText(req);
    const last = req.messages.at(-1)!;
    const answered = Array.isArray(last.content) && last.content.some((b) => (b as { type: string }).type === "tool_result");
    if (system.includes("Check.")) return text("Checker says fine."); // the batch agent: answers main, not the user
    if (system.includes('skill "interview"')) return text("Where to?");
    if (!answered) return reply(toolUse("call_agent", { agent: "checker", message: "check 500 EUR" }));
    return reply(toolUse("use_skill", { name: "interview", message: "ask" }));
  });
  const res = await post(started.base, "/v1/messages", message("plan"), "tok-alice", { accept: "text/event-stream" });
  const events = sse(res);
  await events.until("event: done");
  const deltas = events.state.received
    .split("\n\n")
    .filter((e) => e.startsWith("event: delta"))
    .map((e) => JSON.parse(e.split("data: ")[1]!) as { agent: string; depth: number; text: string });
  expect(deltas.map((d) => d.text).join("")).toBe("Where to?");
  expect(new Set(deltas.map((d) => `${d.agent}@${d.depth}`))).toEqual(new Set(["skill:interview@2"]));
  // The batch agent did run (its answer reached main as the call's result), unseen by the user.
  const results = h.fake
    .accepted()
    .flatMap((r) => r.messages)
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  expect(JSON.stringify(results)).toContain("Checker says fine.");
});

it("the terminal chat prints a reply as it is written and does not print it again when it arrives whole", async () => {
  h = await startHarness({ files: {} });
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (chunk: Buffer) => (shown += chunk.toString()));
  startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input, output });
  const hold = holdStream(1);
  h.fake.script({ ...text("It is sunny today."), stream: hold.stream });
  input.write("weather?\n");
  await hold.paused;
  await until(() => shown.includes("[main] It "));
  expect(shown).not.toContain("sunny");
  hold.release();
  await until(() => shown.includes("today.\n"));
  expect(shown.match(/It is sunny today\./g)).toHaveLength(1);
  expect(shown).toContain("[main] It is sunny today.\n");

  /** Waits for the console to have written something (each write is an event on the stream). */
  function until(ok: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      if (ok()) return resolve();
      const check = () => {
        if (!ok()) return;
        output.off("data", check);
        resolve();
      };
      output.on("data", check);
    });
  }
});

it("what the model writes beside a tool call reaches the user while the tool runs, committed with that step", async () => {
  h = await startHarness({ files: skillFile("interview", "Ask.") });
  let toolAnswered: string[] = [];
  h.fake.script(reply(text("Let me ask the trip planner.").content[0]!, toolUse("use_skill", { name: "interview", message: "ask" })), async () => {
    // The skill's first model call (the tool's work) answers only once the user has been told: were the text
    // sent with the turn's end, this would never answer.
    await h.delivered((m) => m.text === "Let me ask the trip planner.");
    toolAnswered = h.seen.map((m) => `${m.agent}: ${m.text}`);
    return text("Where to?");
  });
  expect(await h.say("plan a trip")).toEqual(["main: Let me ask the trip planner.", "skill:interview: Where to?"]);
  expect(toolAnswered).toEqual(["main: Let me ask the trip planner."]);
  // Stored with the step that ran the tool, once.
  const said = (await h.store.steps.log("console:t")).filter((e) => e.type === "message").length;
  expect(said).toBeGreaterThan(0);
  const replies = (await h.store.requests.ofSession("console:t")).flatMap((r) => [r.id]);
  const outbound = (await Promise.all(replies.map((id) => h.store.outbox.ofRequest(id)))).flat().map((o) => o.text);
  expect(outbound).toEqual(["Let me ask the trip planner.", "Where to?"]);
});
