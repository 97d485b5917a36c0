// A reply whose model call fails halfway (an `event: error` overloaded_error in the middle of the stream, as the
// Messages API sends it after its 200) starts over on the fallback model. Whoever watches the reply being written is
// told to take back what they were shown (a `reset` event), so nobody reads the same words twice or a torn reply;
// the answer is committed once, by the model that wrote it, and priced at that model's price.
import { PassThrough } from "node:stream";
import { afterEach, expect, it } from "vitest";
import { startConsole } from "../../providers/console/console.js";
import type { HttpProvider } from "../../providers/http/server.js";
import { PriceTable } from "../../src/llm/prices.js";
import { text } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { message, post, startApi } from "../helpers/http-api.js";
import { withFallbacks } from "../helpers/resilient-model.js";

const HAIKU = "claude-haiku-5-5";
let h: Harness;
let api: HttpProvider | null = null;
afterEach(async () => {
  await api?.stop();
  api = null;
  await h.close();
});

/** The SSE events of a whole response, in order. */
async function events(res: Response): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const body = await res.text();
  return body
    .split("\n\n")
    .filter((e) => e.startsWith("event: "))
    .map((e) => ({ event: e.split("\n")[0]!.slice("event: ".length), data: JSON.parse(e.split("data: ")[1]!) as Record<string, unknown> }));
}

it("SSE: the deltas of the failed try are followed by a reset, then the fallback's reply from its first word; one reply, priced as the fallback", async () => {
  const started = await startApi({ model: withFallbacks(HAIKU) });
  ({ h, api } = started);
  h.fake.script(
    { ...text("Rome is warm in June."), stream: { failAfterDeltas: 2 } },
    { ...text("Lisbon is lovely in May."), usage: { input_tokens: 2000, output_tokens: 300 } },
  );
  const res = await post(started.base, "/v1/messages", message("where to?"), "tok-alice", { accept: "text/event-stream" });
  const seen = await events(res);
  expect(h.fake.accepted().map((b) => b.model)).toEqual(["claude-test", HAIKU]);
  const preview = seen.filter((e) => e.event === "delta" || e.event === "reset");
  expect(preview.slice(0, 3)).toEqual([
    { event: "delta", data: { agent: "main", depth: 1, text: "Rome " } },
    { event: "delta", data: { agent: "main", depth: 1, text: "is " } },
    { event: "reset", data: { agent: "main", depth: 1 } },
  ]);
  // A client that forgets what a reset takes back shows exactly the reply, which comes once.
  let shown = "";
  for (const e of preview) shown = e.event === "reset" ? "" : shown + String(e.data.text);
  expect(shown).toBe("Lisbon is lovely in May.");
  expect(seen.filter((e) => e.event === "message").map((e) => e.data.text)).toEqual(["Lisbon is lovely in May."]);
  const done = seen.find((e) => e.event === "done")!.data as { request_id: string; usage: { costUsd: number } };
  const replies = await h.store.outbox.ofRequest(done.request_id);
  expect(replies.map((r) => r.text)).toEqual(["Lisbon is lovely in May."]);
  // One step committed, recording the model that wrote it; the failed try left nothing in the history.
  const answers = (await h.store.steps.log(replies[0]!.sessionKey))
    .filter((e) => e.type === "message")
    .map((e) => e.payload as { role: string; model?: string; content: unknown })
    .filter((m) => m.role === "assistant");
  expect(answers).toEqual([expect.objectContaining({ model: HAIKU, content: [{ type: "text", text: "Lisbon is lovely in May." }] })]);
  const haikuPrice = new PriceTable().costNanoUsd(HAIKU, { inputTokens: 2000, outputTokens: 300 });
  expect(haikuPrice).toBeGreaterThan(0);
  expect(done.usage.costUsd).toBeCloseTo(haikuPrice / 1e9, 12);
});

it("the terminal erases the failed try's words and writes the fallback's reply in their place, once", async () => {
  h = await startHarness({ files: {}, model: withFallbacks(HAIKU) });
  const input = new PassThrough();
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
  let written = "";
  output.on("data", (chunk: Buffer) => (written += chunk.toString()));
  startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input, output });
  h.fake.script({ ...text("Rome is warm in June."), stream: { failAfterDeltas: 2 } }, text("Lisbon is lovely in May."));
  input.write("where to?\n");
  await new Promise<void>((resolve) => {
    const check = () => written.includes("May.\n") && resolve();
    output.on("data", check);
  });
  // The cursor goes back to the start of the reply's line and clears it: what stays on screen is the new reply.
  const [before, after] = written.split("\r\x1b[J");
  expect(before).toContain("[main] Rome is ");
  expect(after).toMatch(/^\[main\] Lisbon is lovely in May\.\n/);
  expect(written.match(/Lisbon is lovely in May\./g)).toHaveLength(1);
});
