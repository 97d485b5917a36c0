// The interactive terminal chat as a person sees it: a TTY in and out (PassThroughs marked as TTYs), the real
// gateway and runtime, the real SDK against the strict fake Messages API. Spinner frames are drawn by hand.
import { PassThrough } from "node:stream";
import { afterEach, expect, it } from "vitest";
import { startConsole } from "../../providers/console/console.js";
import { holdStream, lastUserText, text } from "../fakes/anthropic/server.js";
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

/** What is shown, without readline's cursor movements and line clearing. */
const visible = (shown: string) => shown.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");

/** Resolves once the chat has been handed (and has handled) a message whose text `match`es. */
function delivered(harness: Harness) {
  const seen: string[] = [];
  const waiting: Array<{ match: (text: string) => boolean; resolve: () => void }> = [];
  const register = harness.gateway.register.bind(harness.gateway);
  harness.gateway.register = (sink) =>
    register({
      ...sink,
      deliver: async (message, receipt) => {
        await sink.deliver(message, receipt);
        seen.push(message.text);
        for (const w of waiting.filter((w) => w.match(message.text))) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve();
        }
      },
    });
  return (match: (text: string) => boolean) => (seen.some(match) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ match, resolve })));
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

it("draws a line from outside the chat above the prompt, which comes back with what was being typed", async () => {
  h = await startHarness({ files: {} });
  const t = terminal();
  const chat = startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input: t.input, output: t.output });
  t.input.write("what is");
  await t.until(() => t.state.shown.endsWith("what is"));
  const before = t.state.shown.length;
  chat.notice("! Telegram is unreachable at https://api.telegram.org (getaddrinfo ENOTFOUND api.telegram.org)");
  const drawn = t.state.shown.slice(before);
  // The prompt's line is cleared, the notice written on it, and the prompt redrawn under it with the typed text.
  expect(drawn.startsWith("\r\x1b[K! Telegram is unreachable at https://api.telegram.org (getaddrinfo ENOTFOUND api.telegram.org)\n")).toBe(true);
  expect(visible(drawn).endsWith("\nyou> what is")).toBe(true);
  chat.stop();
});

it("keeps notices and what is typed out of a reply being written, and shows them, and answers, after it", async () => {
  h = await startHarness({ files: {} });
  const t = terminal();
  const handled = delivered(h);
  const chat = startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input: t.input, output: t.output, timers: manualTimeouts().timers });
  const hold = holdStream(1); // "It " is written, then the model pauses
  h.fake.script({ ...text("It is sunny."), stream: hold.stream }, text("Dry all week."));
  t.input.write("weather?\r");
  await hold.paused;
  await t.until(() => t.state.shown.includes("[main] It "));
  const during = t.state.shown.length;
  chat.notice("! Slack is unreachable at https://slack.com/api/ (getaddrinfo ENOTFOUND slack.com)");
  t.input.write("and tomorrow?\r");
  await handled((text) => text.startsWith("Got it. I'm still working"));
  // Nothing lands inside the reply: not the notice, not the echo of the keys, not the gateway's "still working" notice.
  expect(t.state.shown.slice(during)).toBe("");

  hold.release();
  await t.until(() => t.state.shown.includes("Dry all week."));
  await h.gateway.idle();
  await settled();
  const after = visible(t.state.shown.slice(during)).split("\n");
  expect(after[0]).toBe("is sunny.");
  expect(after.slice(1, 4)).toEqual([
    "! Slack is unreachable at https://slack.com/api/ (getaddrinfo ENOTFOUND slack.com)",
    "you> and tomorrow?",
    "· Got it. I'm still working on your previous message; I'll read this one as soon as I'm done.",
  ]);
  expect(after.slice(4).join("\n")).toMatch(/^[^\n]*\[main\] Dry all week\.\nyou> $/);
  expect(h.fake.calls.map((c) => lastUserText(c.body))).toEqual(["weather?", "and tomorrow?"]);
  chat.stop();
});

it("ends the line of a reply cut short by /cancel when its turn ends, then gives the prompt back", async () => {
  h = await startHarness({ files: {} });
  const t = terminal();
  const chat = startConsole(h.gateway, { jsonl: false, exitOnEnd: false, input: t.input, output: t.output, timers: manualTimeouts().timers });
  const hold = holdStream(1);
  h.fake.script({ ...text("A long story that never ends."), stream: hold.stream });
  t.input.write("tell me a story\r");
  await hold.paused;
  await t.until(() => t.state.shown.includes("[main] A "));
  const during = t.state.shown.length;
  t.input.write("/cancel\r");
  await t.until(() => visible(t.state.shown.slice(during)).endsWith("you> "));
  await h.gateway.idle();
  const after = visible(t.state.shown.slice(during)).split("\n");
  expect(after[0]).toBe("");
  expect(after[1]).toBe("you> /cancel");
  expect(after.at(-1)).toMatch(/you> $/);
  expect(after.join("\n")).not.toContain("never ends");
  hold.release();
  chat.stop();
});

it("lists what else is up in the banner, one row each, and where the log is", async () => {
  h = await startHarness({ files: {} });
  const t = terminal();
  const chat = startConsole(h.gateway, {
    jsonl: false,
    exitOnEnd: false,
    input: t.input,
    output: t.output,
    logFile: "data/switchboard.log",
    surfaces: [
      ["Web chat", "http://127.0.0.1:8787/"],
      ["Admin", "http://127.0.0.1:8787/admin   (off: set ADMIN_TOKENS)"],
      ["Telegram", "connecting…"],
    ],
  });
  expect(t.state.shown.split("\n").slice(1, 5)).toEqual([
    "  Web chat  http://127.0.0.1:8787/",
    "  Admin     http://127.0.0.1:8787/admin   (off: set ADMIN_TOKENS)",
    "  Telegram  connecting…",
    "  Logs      data/switchboard.log",
  ]);
  chat.stop();
});
