// Slack shows a reply while it is written: in a thread with chat.startStream / appendStream / stopStream (the
// recipient named, as Slack requires outside DMs), in a DM outside threads by one message posted and updated. The
// real Bolt app against the fake Web API, the real gateway with the fake Messages API streaming. Whatever else is
// delivered meanwhile (a notice) goes beside the live stream; a chat member sees each reply once, complete.
import { expect, it } from "vitest";
import { holdStream, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import type { VisibleMessage } from "../../fakes/slack/server.js";
import { slashCommand } from "../../fakes/slack/events.js";
import { eventBody } from "../../fixtures/slack/load.js";
import { ALICE, BOT, CHANNEL, DM, TEAM, useSlackWorld } from "../../helpers/slack-world.js";
import { manualTimeouts } from "../../helpers/timers.js";
import { withFallbacks } from "../../helpers/resilient-model.js";

const world = useSlackWorld();

/** The gateway's notice for a message that arrives while the previous one is being answered. */
const STILL_WORKING = /I'm still working on your previous message/;

/** The bot with streaming on; its pacing timeouts fire only when a test says (none here does: the replies take over). */
const FILE_UNREAD = 'I could not read "file.png": this bot may not read files in Slack yet (the admin has been told how to fix it).';

function streamingBot(harness: { handbackNotice?: boolean } = {}) {
  return world.run({ streaming: true, streamTimers: manualTimeouts().timers }, [], harness);
}

/** Alice mentions the bot at the top of the channel at `ts`: the thread of a new conversation. */
function mention(send: (body: string) => Promise<unknown>, ts: string, words: string) {
  world.known(CHANNEL, ALICE, `<@${BOT}> ${words}`, ts);
  return send(eventBody("app_mention", { ts, event_ts: ts, text: `<@${BOT}> ${words}` }));
}

/** A conversation as its members see it: who said what, and whether a message is still being streamed. */
const seen = (messages: VisibleMessage[]) => messages.map((m) => [m.fromBot ? "bot" : "user", m.text, ...(m.stream === "streaming" ? ["(streaming)"] : [])]);

it("streams a reply in a channel thread, then the streamed message is the reply, posted once", async () => {
  const { send, h } = await world.run({ streaming: true });
  const hold = holdStream(2);
  world.model.script({ ...text("Lisbon is lovely in **May**."), stream: hold.stream });
  const root = "1700000001.000100";
  await mention(send, root, "where to?");
  await hold.paused;
  await world.slack.waitFor("chat.startStream", () => world.slack.streams(CHANNEL).length === 1);
  const [started] = world.slack.streams(CHANNEL);
  // Partial text is visible before the model finishes, addressed to the user who asked.
  expect(started).toMatchObject({ status: "streaming", thread_ts: root, recipient_user_id: ALICE, recipient_team_id: TEAM });
  expect(started!.text.length).toBeGreaterThan(0);
  expect("Lisbon is lovely in **May**.".startsWith(started!.text)).toBe(true);
  expect(started!.text).not.toContain("May");
  hold.release();
  await h.gateway.idle();
  const [done] = world.slack.streams(CHANNEL);
  expect(done!.status).not.toBe("streaming");
  // The reply appears once: the streamed message carries it (formatted for Slack), and nothing else was posted.
  expect(world.slack.posted(CHANNEL).map((m) => m.text)).toEqual(["Lisbon is lovely in *May*."]);
  expect(world.slack.calls.filter((c) => c.method === "chat.postMessage")).toHaveLength(0);
});

it("in a DM outside threads it posts one message and updates it; with SLACK_STREAMING=off it posts the reply whole", async () => {
  const { send, h } = await world.run({ streaming: true });
  const hold = holdStream(1);
  world.model.script({ ...text("It is sunny today."), stream: hold.stream });
  const ts = "1700000002.000100";
  world.known(DM, ALICE, "weather?", ts);
  await send(eventBody("message.im", { ts, event_ts: ts, text: "weather?", channel: DM }));
  await hold.paused;
  await world.slack.waitFor("chat.postMessage", () => world.slack.posted(DM).some((m) => m.text.startsWith("It ")));
  expect(world.slack.posted(DM).find((m) => m.text.startsWith("It "))!.text).not.toContain("today");
  hold.release();
  await h.gateway.idle();
  expect(
    world.slack
      .posted(DM)
      .filter((m) => m.text.includes("It "))
      .map((m) => m.text),
  ).toEqual(["It is sunny today."]);
  await world.stopProviders();

  const off = await world.run({ streaming: false });
  world.model.script(text("Still sunny."));
  const ts2 = "1700000003.000100";
  world.known(DM, ALICE, "and now?", ts2);
  await off.send(eventBody("message.im", { ts: ts2, event_ts: ts2, text: "and now?", channel: DM }));
  await off.h.gateway.idle();
  expect(world.slack.calls.filter((c) => c.method === "chat.update" && JSON.stringify(c.params).includes("Still"))).toHaveLength(0);
  expect(world.slack.posted(DM).filter((m) => m.text === "Still sunny.")).toHaveLength(1);
});

it("a second message mid-reply in a channel thread: the notice goes beside the live stream, and each reply shows once, complete", async () => {
  const { send, h } = await streamingBot();
  const hold = holdStream(1);
  world.model.script({ ...text("Lisbon is lovely in **May**."), stream: hold.stream }, text("Porto is lovely too."));
  const root = "1700000001.000100";
  await mention(send, root, "where to?");
  await hold.paused;
  await world.slack.waitFor("chat.startStream");
  const second = world.slack.userMessage({ channel: CHANNEL, user: ALICE, text: `<@${BOT}> and Porto?`, thread_ts: root });
  await send(eventBody("app_mention", { ts: second, event_ts: second, thread_ts: root, text: `<@${BOT}> and Porto?` }, { event_id: "EvSecond" }));
  await world.slack.waitFor("chat.postMessage", (p) => STILL_WORKING.test(String(p.text)));
  // The notice is in the thread beside the half-written reply, which is still being written.
  expect(seen(world.slack.visible(CHANNEL, root))).toEqual([
    ["user", `<@${BOT}> where to?`],
    ["bot", "Lisbon ", "(streaming)"],
    ["user", `<@${BOT}> and Porto?`],
    ["bot", expect.stringMatching(STILL_WORKING)],
  ]);

  hold.release();
  await h.gateway.idle();
  expect(seen(world.slack.visible(CHANNEL, root))).toEqual([
    ["user", `<@${BOT}> where to?`],
    ["bot", "Lisbon is lovely in *May*."],
    ["user", `<@${BOT}> and Porto?`],
    ["bot", expect.stringMatching(STILL_WORKING)],
    ["bot", "Porto is lovely too."],
  ]);
  // Both replies were streamed messages, stopped; nothing was posted a second time.
  expect(world.slack.streams(CHANNEL).map((s) => s.status)).toEqual(["stopped", "stopped"]);
  expect(world.slack.calls.filter((c) => c.method === "chat.delete")).toEqual([]);
});

it("a second message with a file mid-reply in a DM: the notices go below the message being written, which becomes the reply", async () => {
  const { send, h } = await streamingBot();
  const hold = holdStream(1);
  world.model.script({ ...text("It is sunny today."), stream: hold.stream }, text("Rain tomorrow."));
  const ts = "1700000002.000100";
  world.known(DM, ALICE, "weather?", ts);
  await send(eventBody("message.im", { ts, event_ts: ts, text: "weather?", channel: DM }));
  await hold.paused;
  const first = await world.slack.waitFor("chat.postMessage", (p) => p.text === "It ");
  const second = world.slack.userMessage({ channel: DM, user: ALICE, text: "and tomorrow?" });
  // The app may not read files (no files:read): the user is told so, at once.
  world.slack.filesScope(false);
  const file = world.slack.addFile(Buffer.from("x"), "file.png", "image/png").object;
  await send(eventBody("file_share", { ts: second, event_ts: second, text: "and tomorrow?", files: [file] }, { event_id: "EvFile" }));
  await world.slack.waitFor("chat.postMessage", (p) => p.text === FILE_UNREAD);
  await world.slack.waitFor("chat.postMessage", (p) => STILL_WORKING.test(String(p.text)));
  expect(world.slack.visible(DM).find((m) => m.ts === first.response.ts)?.text).toBe("It ");
  hold.release();
  await h.gateway.idle();
  const bot = world.slack.visible(DM).filter((m) => m.fromBot);
  // Each reply once and complete, in the message it was written into; the two notices (in either order) below it.
  expect(bot).toHaveLength(4);
  expect(bot[0]).toMatchObject({ ts: first.response.ts, text: "It is sunny today." });
  expect(bot.slice(1, 3).map((m) => m.text)).toEqual(expect.arrayContaining([FILE_UNREAD, expect.stringMatching(STILL_WORKING)]));
  expect(bot[3]!.text).toBe("Rain tomorrow.");
  expect(world.slack.calls.filter((c) => c.method === "chat.delete")).toEqual([]);
});

it("a reply whose model call fails mid-way: the half-written message is stopped and deleted, and the error is said once", async () => {
  const { send, h } = await streamingBot();
  world.model.script({ ...text("Lisbon is lovely in May."), stream: { failAfterDeltas: 2, failWith: { type: "invalid_request_error", message: "prompt is too long" } } });
  const root = "1700000003.000100";
  await mention(send, root, "where to?");
  const started = await world.slack.waitFor("chat.startStream");
  await h.gateway.idle();
  const bot = world.slack.visible(CHANNEL, root).filter((m) => m.fromBot);
  expect(bot.map((m) => m.text)).toEqual([expect.stringMatching(/^Sorry, I could not finish that/)]);
  expect(world.slack.calls.filter((c) => c.method === "chat.delete").map((c) => c.params.ts)).toEqual([started.response.ts]);
  expect(world.slack.streams(CHANNEL).map((s) => s.status)).toEqual(["stopped"]);
});

it("a skill's turn in a thread: the words before the tool call, the skill's reply and the answer after the hand-back notice each become the message they streamed into", async () => {
  const { send, h } = await streamingBot({ handbackNotice: true });
  const hold = holdStream(1);
  world.model.script(
    reply({ type: "text", text: "Let me ask the interview skill." }, toolUse("use_skill", { name: "interview", message: "where to?" })),
    reply({ type: "text", text: "Noted: Lisbon." }, toolUse("complete", { result: "Lisbon" })),
    { ...text("Booked Lisbon for May."), stream: hold.stream },
  );
  const root = "1700000004.000100";
  await mention(send, root, "plan a trip");
  await hold.paused;
  await world.slack.waitFor("chat.postMessage", (p) => p.text === "Interview skill finished.");
  hold.release();
  await h.gateway.idle();
  const bot = world.slack.visible(CHANNEL, root).filter((m) => m.fromBot);
  // Each once, complete; the notice is a message of its own (before or after the answer that was being written).
  expect(bot.map((m) => m.text).slice(0, 2)).toEqual(["Let me ask the interview skill.", "*🧩 interview*\nNoted: Lisbon."]);
  expect(
    bot
      .map((m) => m.text)
      .slice(2)
      .sort(),
  ).toEqual(["Booked Lisbon for May.", "Interview skill finished."]);
  expect(bot.filter((m) => m.stream !== undefined).map((m) => [m.text, m.stream])).toEqual([
    ["Let me ask the interview skill.", "stopped"],
    ["*🧩 interview*\nNoted: Lisbon.", "stopped"],
    ["Booked Lisbon for May.", "stopped"],
  ]);
  expect(world.slack.calls.filter((c) => c.method === "chat.delete")).toEqual([]);
});

it("a reply cut off by /switchboard cancel leaves no half-written message: it is stopped and deleted", async () => {
  const { send, h } = await streamingBot();
  const hold = holdStream(1);
  world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), { ...text("Where would you like to go?"), stream: hold.stream });
  const root = "1700000005.000100";
  await mention(send, root, "plan a trip");
  const started = await world.slack.waitFor("chat.startStream");
  await send(slashCommand({ command: "/switchboard", text: "cancel", user_id: ALICE, channel_id: CHANNEL, team_id: TEAM, response_url: world.slack.responseUrl() }));
  await world.slack.waitFor("chat.postMessage", (p) => String(p.text).startsWith("Cancelled"));
  hold.release();
  await h.gateway.idle();
  expect(
    world.slack
      .visible(CHANNEL, root)
      .filter((m) => m.fromBot)
      .map((m) => m.text),
  ).toEqual(["Cancelled. Stopped: skill:interview."]);
  expect(world.slack.calls.filter((c) => c.method === "chat.delete").map((c) => c.params.ts)).toEqual([started.response.ts]);
});

it("a reply whose model call fails halfway starts over on a fallback: the thread's stream is deleted and a new one shows the new reply from its first word", async () => {
  const { send, h } = await world.run({ streaming: true, streamTimers: manualTimeouts().timers }, [], { model: withFallbacks("claude-haiku-5-5") });
  const hold = holdStream(2);
  // The Messages API's `event: error` overloaded_error after two words, as it sends it mid-stream.
  world.model.script({ ...text("Rome is warm in June."), stream: { failAfterDeltas: 2 } }, { ...text("Lisbon is lovely in May."), stream: hold.stream });
  const root = "1700000009.000100";
  await mention(send, root, "where to?");
  await hold.paused;
  await world.slack.waitFor("chat.startStream", () => world.slack.streams(CHANNEL).length === 2);
  await world.slack.waitFor("chat.delete");
  const [failed, fresh] = world.slack.streams(CHANNEL);
  // A stream cannot take text back: the one that showed the failed try is stopped and deleted.
  expect(failed!.status).toBe("stopped");
  expect(world.slack.calls.filter((c) => c.method === "chat.delete").map((c) => c.params.ts)).toEqual([failed!.ts]);
  expect(fresh!.text).toBe("Lisbon ");
  hold.release();
  await h.gateway.idle();
  expect(world.model.accepted().map((b) => b.model)).toEqual(["claude-test", "claude-haiku-5-5"]);
  expect(seen(world.slack.visible(CHANNEL, root))).toEqual([
    ["user", `<@${BOT}> where to?`],
    ["bot", "Lisbon is lovely in May."],
  ]);
});

it("in a DM outside threads the message being updated is rewritten from the new reply's first word", async () => {
  const pace = manualTimeouts();
  const { send, h } = await world.run({ streaming: true, streamTimers: pace.timers }, [], { model: withFallbacks("claude-haiku-5-5") });
  const hold = holdStream(2);
  world.model.script({ ...text("Rome is warm in June."), stream: { failAfterDeltas: 2 } }, { ...text("Lisbon is lovely in May."), stream: hold.stream });
  const ts = "1700000010.000100";
  world.known(DM, ALICE, "weather?", ts);
  // What the bot has heard of the reply since the last reset (the gateway, listening first, has passed it on).
  let since = "";
  const heard = new Promise<void>((resolve) => {
    const stop = h.store.feed.watch((change) => {
      if (change.kind === "reset") since = "";
      if (change.kind === "delta") since += change.event.text;
      if (since === "Lisbon is ") resolve(stop());
    });
  });
  await send(eventBody("message.im", { ts, event_ts: ts, text: "weather?", channel: DM }));
  const first = await world.slack.waitFor("chat.postMessage", (p) => String(p.text).startsWith("Rome"));
  expect(first.params.text).toBe("Rome ");
  await heard;
  pace.fireAll();
  const update = await world.slack.waitFor("chat.update");
  expect(update.params.text).toBe("Lisbon is ");
  hold.release();
  await h.gateway.idle();
  expect(world.slack.posted(DM).map((m) => m.text)).toEqual(["Lisbon is lovely in May."]);
});
