// The interactive terminal chat as a person sees it: a TTY in and out (PassThroughs marked as TTYs), the real
// gateway and runtime, the real SDK against the strict fake Messages API. Spinner frames are drawn by hand.
import { PassThrough } from "node:stream";
import { afterEach, expect, it } from "vitest";
import { startConsole } from "../../providers/console/console.js";
import { holdStream, text } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { manualTimeouts } from "../helpers/timers.js";

let h: Harness;
afterEach(async () => {
  await h.close();
});

function terminal(isTTY = true) {
  const input = new PassThrough();
  const output = new PassThrough();
  Object.assign(input, { isTTY: true });
  if (isTTY) Object.assign(output, { isTTY: true });
  const state = { shown: "" };
  output.on("data", (chunk: Buffer) => (state.shown += chunk.toString()));
  /** Waits for the chat to have written something (each write is an event on the stream). */
  const until = (ok: () => boolean) =>
    new Promise<void>((resolve) => {
      if (ok()) return resolve();
      const check = () => {
        if (!ok()) return;
        output.off("data", check);
        resolve();
      };
      output.on("data", check);
    });
  return { input, output, state, until };
}

/** Lets every promise callback already due run (not a sleep: no time passes for anything waiting on a timer). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

it("shows a spinner while the turn runs and clears it before the reply is written", async () => {
  h = await startHarness({ files: {} });
  const t = terminal();
  const clock = manualTimeouts();
  startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input: t.input, output: t.output, timers: clock.timers });
  expect(t.state.shown).toContain("Ctrl-C to quit (Ctrl-D closes only this chat; the service keeps running).");
  const hold = holdStream(0); // the model has started its reply and written nothing yet
  h.fake.script({ ...text("It is sunny."), stream: hold.stream });
  t.input.write("weather?\r");
  await hold.paused;
  expect(t.state.shown).toContain("\r\x1b[K⠋ thinking…");
  expect(clock.delays()).toEqual([80]);
  clock.fireAll();
  expect(t.state.shown.endsWith("\r\x1b[K⠙ thinking…")).toBe(true);

  hold.release();
  await t.until(() => t.state.shown.includes("sunny.\n"));
  // The spinner's line is cleared, then the reply is written where it was.
  expect(t.state.shown).toContain("⠙ thinking…\r\x1b[K[main] It ");
  expect(t.state.shown.match(/It is sunny\./g)).toHaveLength(1);
  await h.gateway.idle();
  await settled();
  // The turn is over: no frame is pending, and the prompt is back.
  expect(clock.delays()).toEqual([]);
  const after = t.state.shown.slice(t.state.shown.lastIndexOf("sunny.\n"));
  expect(after).toContain("you> ");
  expect(after).not.toContain("thinking");
});

it("gives the line back to someone typing while the spinner turns", async () => {
  h = await startHarness({ files: {} });
  const t = terminal();
  const clock = manualTimeouts();
  startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input: t.input, output: t.output, timers: clock.timers });
  const hold = holdStream(0);
  h.fake.script({ ...text("Done."), stream: hold.stream });
  t.input.write("go\r");
  await hold.paused;
  expect(t.state.shown).toContain("⠋ thinking…");
  t.input.write("ne");
  await t.until(() => t.state.shown.endsWith("ne"));
  const before = t.state.shown.length;
  clock.fireAll();
  const redrawn = t.state.shown.slice(before);
  expect(redrawn).not.toContain("thinking");
  expect(redrawn).toContain("you> ne");
  hold.release();
  await t.until(() => t.state.shown.includes("Done.\n"));
});

it("draws no spinner when the output is not a terminal", async () => {
  h = await startHarness({ files: {} });
  const t = terminal(false);
  const clock = manualTimeouts();
  startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input: t.input, output: t.output, timers: clock.timers });
  h.fake.script(text("Hello."));
  t.input.write("hi\r");
  await t.until(() => t.state.shown.includes("Hello.\n"));
  expect(t.state.shown).not.toContain("thinking");
  expect(clock.delays()).toEqual([]);
});

it("passes Ctrl-C at the prompt on as an interrupt (raw mode sends no signal)", async () => {
  h = await startHarness({ files: {} });
  const t = terminal();
  let interrupts = 0;
  const chat = startConsole(h.gateway, { jsonl: false, exitOnEnd: true, input: t.input, output: t.output, onInterrupt: () => interrupts++ });
  expect(t.state.shown).toContain("Ctrl-C or Ctrl-D quits.");
  t.input.write("\x03");
  expect(interrupts).toBe(1);
  chat.stop();
});
