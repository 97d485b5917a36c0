// Replies streamed to Telegram through the real path: the Messages API fake streams (holdStream pauses it mid-reply),
// the runtime reports each delta, the gateway routes it to the real adapter, which talks to the fake Bot API with
// grammY. Private chats see a draft; groups (and chats that refuse drafts) see one message edited in place, which
// the reply then becomes. Notices delivered while a reply is written go beside it; a chat member sees each reply once,
// complete. Time for the pacing comes from a clock the test moves by hand: nothing sleeps.
import { describe, expect, it } from "vitest";
import type { StreamClock } from "../../../providers/telegram/stream.js";
import type { TelegramOptions } from "../../../providers/telegram/telegram.js";
import type { DeliveryReceipt, OutboundMessage } from "../../../src/gateway/types.js";
import { createLogger } from "../../../src/log.js";
import { holdStream, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { TG_ERRORS } from "../../fakes/telegram/server.js";
import { skillFile, type HarnessOptions } from "../../helpers/harness.js";
import { withFallbacks } from "../../helpers/resilient-model.js";
import { ALICE, useTelegramWorld } from "../../helpers/telegram-world.js";
import { manualTimeouts } from "../../helpers/timers.js";
import { writerFor } from "../../helpers/steps.js";

const GROUP = -1001234;
const world = useTelegramWorld(skillFile("interview", "Ask."));
const inGroup = (words: string) => world.tg.userMessage({ chatId: GROUP, chatType: "supergroup", fromId: ALICE, text: `@${world.tg.botUsername} ${words}` });
const calls = (method: string) => world.tg.calls.filter((c) => c.method === method);
/** The gateway's notice for a message that arrives while the previous one is being answered. */
const STILL_WORKING = /I'm still working on your previous message/;
/** The bot's messages in a chat as its members see them now (deleted ones gone, edits applied). */
const botSays = (chatId: number) =>
  world.tg
    .visible(chatId)
    .filter((m) => m.fromBot)
    .map((m) => m.text);

/** The provider's pacing clock: time moves when the test says; a timeout runs when the test fires it. */
function pacing() {
  let now = 1_700_000_000_000;
  const timeouts = manualTimeouts();
  const clock: StreamClock = { now: () => now, ...timeouts.timers };
  return {
    clock,
    now: () => now,
    advance: (ms: number) => void (now += ms),
    delays: timeouts.delays,
    /** Resolves once a pacing timeout is pending (the next update waits for its time). */
    waiting: timeouts.waiting,
    fire: timeouts.fireAll,
  };
}

/** Boots the provider with the pacing clock and records what the adapter hears and what it journals. */
async function boot(options: Partial<TelegramOptions>, harnessTimers?: ReturnType<typeof manualTimeouts>, harness: { model?: HarnessOptions["model"] } = {}) {
  const pace = pacing();
  // "draft" is the product's default (the shared world turns streaming off for the other tests).
  const started = await world.boot({ streaming: "draft", streamClock: pace.clock, ...options }, [], {
    ...(harnessTimers ? { timers: harnessTimers.timers } : {}),
    ...harness,
  });
  await started.h.gateway.recover();
  const sink = world.sink;
  let written = "";
  let heard: (() => void) | null = null;
  const stream = sink.stream!.bind(sink);
  sink.stream = (key, delta) => {
    stream(key, delta);
    written += delta.text;
    heard?.();
  };
  const journal: Array<{ outbound: string; index: number; messageId: string }> = [];
  const attempts: string[] = [];
  const deliver = sink.deliver.bind(sink);
  sink.deliver = (message: OutboundMessage, receipt: DeliveryReceipt) => {
    attempts.push(message.id);
    return deliver(message, {
      sentChunks: receipt.sentChunks,
      chunkSent: async (index, messageId) => {
        await receipt.chunkSent(index, messageId);
        journal.push({ outbound: message.id, index, messageId });
      },
    });
  };
  /** Resolves once the adapter has heard the reply written up to `prefix`. */
  const heardUpTo = (prefix: string) =>
    new Promise<void>((resolve) => {
      const check = () => written.includes(prefix) && resolve();
      heard = check;
      check();
    });
  return { ...started, pace, journal, attempts, heardUpTo };
}

describe("private chats: drafts", () => {
  it("shows the reply as a draft while it is written, at most every 300 ms, then sends it once", async () => {
    const { h, pace, heardUpTo } = await boot({});
    const hold = holdStream(2);
    world.model.script({ ...text("Lisbon is lovely in May."), stream: hold.stream });
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "where to?" });
    await hold.paused;
    await heardUpTo("Lisbon is ");
    // The first piece went out at once; the second waits for the draft interval.
    await world.tg.waitFor("sendMessageDraft");
    await pace.waiting();
    expect(world.tg.drafts(ALICE).map((d) => d.text)).toEqual(["Lisbon"]);
    expect(pace.delays()).toEqual([300]);
    pace.advance(300);
    pace.fire();
    await world.tg.waitFor("sendMessageDraft", (p) => p.text === "Lisbon is");
    expect(world.tg.visibleDraft(ALICE)?.text).toBe("Lisbon is");
    expect(world.tg.sent(ALICE)).toEqual([]); // the model is still writing

    hold.release();
    expect((await world.nth(ALICE, 1)).text).toBe("Lisbon is lovely in May.");
    await h.gateway.idle();
    expect(world.tg.sent(ALICE)).toHaveLength(1);
    expect(world.tg.visibleDraft(ALICE)).toBeNull(); // the reply replaced the draft
    expect(new Set(world.tg.drafts(ALICE).map((d) => d.draft_id)).size).toBe(1); // one draft, animated
    expect(world.tg.timeline(ALICE).at(-1)).toMatchObject({ kind: "message", text: "Lisbon is lovely in May." });
    expect(calls("editMessageText")).toEqual([]);
  });

  it("falls back to editing a message where Telegram refuses drafts, and remembers that for the chat", async () => {
    const { h, journal } = await boot({});
    world.tg.failChat(ALICE, { error_code: 400, description: "Bad Request: method is not available" }, { method: "sendMessageDraft" });
    const hold = holdStream(1);
    world.model.script({ ...text("Hello there, friend."), stream: hold.stream });
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi" });
    const preview = await world.nth(ALICE, 1);
    expect(preview.text).toBe("Hello");
    hold.release();
    await world.tg.waitFor("editMessageText", (p) => p.text === "Hello there, friend.");
    await h.gateway.idle();
    expect(world.tg.sent(ALICE).map((m) => m.text)).toEqual(["Hello there, friend."]);
    expect(journal).toEqual([{ outbound: expect.any(String), index: 0, messageId: String(preview.message_id) }]);

    world.model.script(text("Again, hello."));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi again" });
    await world.tg.waitFor("editMessageText", (p) => p.text === "Again, hello.");
    await h.gateway.idle();
    expect(calls("sendMessageDraft")).toHaveLength(1); // not asked again
    expect(world.tg.sent(ALICE).map((m) => m.text)).toEqual(["Hello there, friend.", "Again, hello."]);
  });

  it("an older Bot API server without sendMessageDraft (404 Not Found): edits at once, in every chat, and says so once in the log", async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const log = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const { h, journal, pace } = await boot({ log });
    world.tg.withoutMethods(["sendMessageDraft"]);
    const hold = holdStream(1);
    world.model.script({ ...text("Hello there, friend."), stream: hold.stream });
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi" });
    await world.tg.waitFor("sendMessageDraft");
    // The first piece is shown at once, as a message: not a draft again later, nor after the pacing.
    await Promise.race([world.nth(ALICE, 1), pace.waiting()]);
    expect(pace.delays()).toEqual([]);
    const [preview] = world.tg.sent(ALICE);
    expect(preview?.text).toBe("Hello");
    hold.release();
    await world.tg.waitFor("editMessageText", (p) => p.text === "Hello there, friend.");
    await h.gateway.idle();
    expect(botSays(ALICE)).toEqual(["Hello there, friend."]);
    expect(journal).toEqual([{ outbound: expect.any(String), index: 0, messageId: String(preview!.message_id) }]);

    // Another private chat, and the same one again: the server has no drafts for anyone, so none is tried.
    const BOB_CHAT = 1002;
    world.model.script(text("Hi Bob."), text("Again, hello."));
    world.tg.userMessage({ chatId: BOB_CHAT, fromId: BOB_CHAT, text: "hi" });
    await world.tg.waitFor("editMessageText", (p) => p.text === "Hi Bob.");
    await h.gateway.idle();
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi again" });
    await world.tg.waitFor("editMessageText", (p) => p.text === "Again, hello.");
    await h.gateway.idle();
    expect(calls("sendMessageDraft")).toHaveLength(1);
    expect(botSays(BOB_CHAT)).toEqual(["Hi Bob."]);
    expect(botSays(ALICE)).toEqual(["Hello there, friend.", "Again, hello."]);
    const said = lines.filter((l) => /no sendMessageDraft/.test(l.msg));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 40, session: `telegram:${ALICE}`, err: "Not Found" });
  });

  it("a second message mid-reply: the notice is sent beside the draft, which goes on, and the reply comes once", async () => {
    const { h, pace, heardUpTo } = await boot({});
    const hold = holdStream(2);
    world.model.script({ ...text("Lisbon is lovely in May."), stream: hold.stream }, text("Porto too."));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "where to?" });
    await hold.paused;
    await heardUpTo("Lisbon is ");
    await world.tg.waitFor("sendMessageDraft");
    await pace.waiting();
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "and Porto?" });
    const notice = await world.nth(ALICE, 1);
    expect(notice.text).toMatch(STILL_WORKING);
    // The draft goes on after the notice: its next update shows again what is written so far.
    pace.advance(300);
    pace.fire();
    await world.tg.waitFor("sendMessageDraft", (p) => p.text === "Lisbon is");
    expect(world.tg.visibleDraft(ALICE)).toMatchObject({ text: "Lisbon is" });
    hold.release();
    await h.gateway.idle();
    expect(botSays(ALICE)).toEqual([expect.stringMatching(STILL_WORKING), "Lisbon is lovely in May.", "Porto too."]);
    expect(world.tg.visibleDraft(ALICE)).toBeNull();
  });
});

describe("groups and TELEGRAM_STREAMING=edit: one message edited in place", () => {
  it("sends the text so far, edits it no more than every 3 s, and the reply replaces it (chunk 0 in the journal)", async () => {
    const typing = new Map<number, () => void>();
    const timers = {
      setInterval: (fn: () => void) => (typing.set(typing.size + 1, fn), typing.size),
      clearInterval: (id: unknown) => void typing.delete(id as number),
    };
    const { h, pace, heardUpTo, journal } = await boot({ timers }); // the default, "draft": a group has no drafts
    const hold = holdStream(2);
    world.model.script({ ...text("Rome is warm in June."), stream: hold.stream });
    inGroup("weather?");
    const preview = await world.nth(GROUP, 1);
    expect(preview.text).toBe("Rome");
    await hold.paused;
    await heardUpTo("Rome is ");
    await pace.waiting();
    expect(pace.delays()).toEqual([3000]);
    // Sending a message ends "typing…" on screen: it is shown again at once, and still renewed while the model pauses.
    await world.tg.waitFor("sendChatAction", () => world.tg.actions(GROUP).some((a) => a.seq > preview.seq));
    expect(typing.size).toBe(1);

    pace.advance(3000);
    pace.fire();
    await world.tg.waitFor("editMessageText", (p) => p.text === "Rome is");
    expect(world.tg.sent(GROUP).map((m) => m.text)).toEqual(["Rome is"]); // visible before the model finished

    hold.release();
    await world.tg.waitFor("editMessageText", (p) => p.text === "Rome is warm in June.");
    await h.gateway.idle();
    const [message] = world.tg.sent(GROUP);
    expect(world.tg.sent(GROUP)).toHaveLength(1);
    expect(message).toMatchObject({ message_id: preview.message_id, text: "Rome is warm in June.", deleted: false });
    expect(message!.history.map((v) => v.text)).toEqual(["Rome", "Rome is"]);
    expect(journal).toEqual([{ outbound: expect.any(String), index: 0, messageId: String(preview.message_id) }]);
    expect(calls("sendMessageDraft")).toEqual([]);
    expect(await h.store.indicators.list("telegram")).toEqual([]);
  });

  it("edits at most every second in a private chat with TELEGRAM_STREAMING=edit, and goes on in new messages past 4096 characters", async () => {
    const { h, pace, journal, heardUpTo } = await boot({ streaming: "edit" });
    const long = Array.from({ length: 900 }, (_, i) => `word${i}`).join(" ");
    const hold = holdStream(2);
    world.model.script({ ...text(long), stream: hold.stream });
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "talk" });
    const preview = await world.nth(ALICE, 1);
    await heardUpTo("word0 word1 ");
    await pace.waiting();
    expect(pace.delays()).toEqual([1000]);
    hold.release();
    await world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).length === 2);
    await h.gateway.idle();
    const sent = world.tg.sent(ALICE);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.message_id).toBe(preview.message_id);
    expect(sent[0]!.text.length).toBeLessThanOrEqual(4096);
    expect(`${sent[0]!.text} ${sent[1]!.text}`).toBe(long);
    expect(journal.map((j) => [j.index, j.messageId])).toEqual([
      [0, String(preview.message_id)],
      [1, String(sent[1]!.message_id)],
    ]);
    expect(calls("sendMessageDraft")).toEqual([]);
  });

  it("the words before a tool call and a subagent's reply each become the message they streamed into, in order", async () => {
    const { h, journal } = await boot({});
    world.model.script(reply({ type: "text", text: "Let me ask the interview skill." }, toolUse("use_skill", { name: "interview", message: "x" })), text("Where to?"));
    inGroup("plan a trip");
    await world.tg.waitFor("editMessageText", (p) => p.text === "🧩 interview\nWhere to?");
    await h.gateway.idle();
    const sent = world.tg.sent(GROUP);
    expect(sent.map((m) => [m.text, m.deleted])).toEqual([
      ["Let me ask the interview skill.", false],
      ["🧩 interview\nWhere to?", false],
    ]);
    expect(sent.map((m) => m.history[0]?.text)).toEqual(["Let", "🧩 interview\nWhere"]); // each was a preview first
    expect(journal.map((j) => [j.index, j.messageId])).toEqual(sent.map((m) => [0, String(m.message_id)]));
    expect(await h.store.indicators.list("telegram")).toEqual([]);
  });

  it("a second message mid-reply: the notice goes below the message being edited, which goes on and becomes the reply", async () => {
    const { h, pace, heardUpTo } = await boot({});
    const hold = holdStream(2);
    world.model.script({ ...text("Rome is warm in June."), stream: hold.stream }, text("Porto is mild."));
    inGroup("weather?");
    const preview = await world.nth(GROUP, 1);
    await hold.paused;
    await heardUpTo("Rome is ");
    inGroup("and Porto?");
    const notice = await world.nth(GROUP, 2);
    expect(notice.text).toMatch(STILL_WORKING);
    // The half-written reply is still being written: the next edit goes into it, after the notice.
    await pace.waiting();
    pace.advance(3000);
    pace.fire();
    const edit = await world.tg.waitFor("editMessageText", (p) => p.text === "Rome is");
    expect(edit.at).toBeGreaterThan(notice.seq);
    hold.release();
    await h.gateway.idle();
    expect(botSays(GROUP)).toEqual(["Rome is warm in June.", expect.stringMatching(STILL_WORKING), "Porto is mild."]);
    expect(world.tg.visible(GROUP).find((m) => m.message_id === preview.message_id)?.text).toBe("Rome is warm in June.");
    expect(calls("deleteMessage")).toEqual([]);
  });

  it("a reply whose model call fails mid-way leaves no half message: it is deleted, and the error is said once", async () => {
    const { h } = await boot({});
    world.model.script({ ...text("Rome is warm in June."), stream: { failAfterDeltas: 2, failWith: { type: "invalid_request_error", message: "prompt is too long" } } });
    inGroup("weather?");
    const preview = await world.nth(GROUP, 1);
    await h.gateway.idle();
    expect(botSays(GROUP)).toEqual([expect.stringMatching(/^Sorry, I could not finish that/)]);
    expect(world.tg.sent(GROUP).find((m) => m.message_id === preview.message_id)).toMatchObject({ deleted: true });
    expect(await h.store.indicators.list("telegram")).toEqual([]);
  });

  it("a turn cut off by /cancel leaves no half answer, and the next reply does not edit it", async () => {
    const { h } = await boot({});
    const hold = holdStream(1);
    world.model.script({ ...text("Rome is warm in June."), stream: hold.stream });
    inGroup("weather?");
    const preview = await world.nth(GROUP, 1);
    world.tg.userMessage({ chatId: GROUP, chatType: "supergroup", fromId: ALICE, text: "/cancel" });
    await world.tg.waitFor("deleteMessage");
    hold.release();
    await h.gateway.idle();
    world.model.script(text("Porto is nice."));
    inGroup("and Porto?");
    await world.tg.waitFor("editMessageText", (p) => p.text === "Porto is nice.");
    await h.gateway.idle();
    const first = world.tg.sent(GROUP).find((m) => m.message_id === preview.message_id)!;
    expect(first).toMatchObject({ deleted: true, history: [] });
    expect(
      world.tg
        .sent(GROUP)
        .filter((m) => !m.deleted)
        .map((m) => m.text)
        .at(-1),
    ).toBe("Porto is nice.");
    expect(
      world.tg
        .sent(GROUP)
        .filter((m) => !m.deleted)
        .some((m) => m.text.startsWith("Rome")),
    ).toBe(false);
  });
});

describe("a reply whose model call fails halfway and starts over on a fallback model", () => {
  const FALLBACK = "claude-haiku-5-5";
  /** Each version a member saw is the start of one reply: never the failed try's words and the new reply's together. */
  const untorn = (versions: string[]) => versions.every((v) => "Rome is warm in June.".startsWith(v) || "Lisbon is lovely in May.".startsWith(v));

  it("in a group: the message being edited is rewritten from the new reply's first words, then becomes the reply", async () => {
    const { h, pace, heardUpTo, journal } = await boot({}, undefined, { model: withFallbacks(FALLBACK) });
    const hold = holdStream(2);
    // The Messages API's `event: error` overloaded_error after two words, as it sends it mid-stream.
    world.model.script({ ...text("Rome is warm in June."), stream: { failAfterDeltas: 2 } }, { ...text("Lisbon is lovely in May."), stream: hold.stream });
    inGroup("weather?");
    const preview = await world.nth(GROUP, 1);
    expect(preview.text).toBe("Rome");
    await hold.paused;
    await heardUpTo("Lisbon is ");
    await pace.waiting();
    pace.advance(3000);
    pace.fire();
    const edit = await world.tg.waitFor("editMessageText");
    expect(edit.params.text).toBe("Lisbon is");
    hold.release();
    await h.gateway.idle();
    expect(world.model.accepted().map((b) => b.model)).toEqual(["claude-test", FALLBACK]);
    const [message] = world.tg.sent(GROUP);
    expect(world.tg.sent(GROUP)).toHaveLength(1);
    expect(message).toMatchObject({ message_id: preview.message_id, text: "Lisbon is lovely in May.", deleted: false });
    expect(message!.history.map((v) => v.text)).toEqual(["Rome", "Lisbon is"]);
    expect(untorn(message!.history.map((v) => v.text))).toBe(true);
    expect(journal).toEqual([{ outbound: expect.any(String), index: 0, messageId: String(preview.message_id) }]);
  });

  it("in a private chat: the draft shows the new reply from its beginning, and the reply is sent once", async () => {
    const { h, pace, heardUpTo } = await boot({}, undefined, { model: withFallbacks(FALLBACK) });
    const hold = holdStream(2);
    world.model.script({ ...text("Rome is warm in June."), stream: { failAfterDeltas: 2 } }, { ...text("Lisbon is lovely in May."), stream: hold.stream });
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "weather?" });
    await world.tg.waitFor("sendMessageDraft");
    await hold.paused;
    await heardUpTo("Lisbon is ");
    await pace.waiting();
    pace.advance(300);
    pace.fire();
    await world.tg.waitFor("sendMessageDraft", (p) => p.text !== "Rome");
    hold.release();
    await h.gateway.idle();
    const drafts = calls("sendMessageDraft").map((c) => String(c.params.text));
    expect(drafts).toEqual(["Rome", "Lisbon is"]);
    expect(new Set(calls("sendMessageDraft").map((c) => c.params.draft_id)).size).toBe(1); // one draft, rewritten
    expect(botSays(ALICE)).toEqual(["Lisbon is lovely in May."]);
  });
});

describe("TELEGRAM_STREAMING=off", () => {
  it("shows only the typing indicator, then the reply once", async () => {
    const { h, heardUpTo } = await boot({ streaming: "off" });
    for (const chat of [ALICE, GROUP]) {
      const hold = holdStream(1);
      world.model.script({ ...text("Just the answer."), stream: hold.stream });
      if (chat === ALICE) world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "q" });
      else inGroup("q");
      await hold.paused;
      await heardUpTo("Just ");
      await world.tg.waitFor("sendChatAction", (p) => Number(p.chat_id) === chat);
      expect(world.tg.sent(chat)).toEqual([]);
      hold.release();
      expect((await world.nth(chat, 1)).text).toBe("Just the answer.");
      await h.gateway.idle();
    }
    expect(calls("sendMessageDraft")).toEqual([]);
    expect(calls("editMessageText")).toEqual([]);
    expect(calls("sendMessage")).toHaveLength(2);
  });
});

describe("flood control", () => {
  it("a 429 pauses the preview for retry_after, and never fails the reply (the last edit waits its turn)", async () => {
    const retries = manualTimeouts();
    const { h, pace, heardUpTo, journal } = await boot({}, retries);
    world.tg.useClock(pace.now);
    world.tg.floodControl({});
    const hold = holdStream(2);
    world.model.script({ ...text("Rome is warm in June."), stream: hold.stream });
    inGroup("weather?");
    const preview = await world.nth(GROUP, 1);
    await hold.paused;
    await heardUpTo("Rome is ");
    await pace.waiting();
    // The next edit is refused with 429: the preview skips updates for retry_after (5 s), without failing anything.
    world.tg.failNext("editMessageText", TG_ERRORS.floodWait(5));
    pace.advance(3000);
    pace.fire();
    await world.tg.waitFor("editMessageText");
    await pace.waiting();
    expect(pace.delays()).toEqual([5000]);
    expect(world.tg.sent(GROUP)[0]!.text).toBe("Rome");
    pace.advance(5000);
    pace.fire();
    await world.tg.waitFor("editMessageText", (p) => p.text === "Rome is");

    // The reply comes within the same second as that edit: Telegram's flood control says wait 1 s.
    hold.release();
    await world.tg.waitFor("editMessageText", (p) => p.text === "Rome is warm in June.");
    await h.gateway.idle();
    expect(retries.delays()).toEqual([1000]);
    expect(world.tg.sent(GROUP)[0]!.text).toBe("Rome is");
    pace.advance(1000);
    retries.fireAll();
    await world.tg.waitFor("editMessageText", (p) => p.text === "Rome is warm in June." && world.tg.sent(GROUP)[0]!.text === p.text);
    await h.gateway.idle();
    expect(world.tg.sent(GROUP).map((m) => m.text)).toEqual(["Rome is warm in June."]);
    expect(journal.map((j) => [j.index, j.messageId])).toEqual([[0, String(preview.message_id)]]);
    expect(await h.store.outbox.undeliverable(`telegram:${GROUP}`)).toEqual([]);
  });
});

describe("a restart mid-stream", () => {
  it("the resumed turn takes over the half message and the reply replaces it: one message", async () => {
    const first = await boot({ streaming: "edit" });
    const hold = holdStream(1);
    world.model.script({ ...text("Lisbon is lovely."), stream: hold.stream });
    inGroup("where to?");
    const preview = await world.nth(GROUP, 1);
    // Remembered before "typing…" is shown again.
    await world.tg.waitFor("sendChatAction", () => world.tg.actions(GROUP).some((a) => a.seq > preview.seq));
    expect((await first.h.store.indicators.list("telegram")).map((i) => i.sessionKey)).toEqual([`telegram:${GROUP}`]);
    await world.stopProviders(); // the model call is cut off; its request runs again on the next start
    hold.release();

    world.model.script(text("Lisbon is lovely in May."));
    const second = await boot({ streaming: "edit" });
    await world.tg.waitFor("editMessageText", (p) => p.text === "Lisbon is lovely in May.");
    await second.h.gateway.idle();
    expect(world.tg.sent(GROUP)).toHaveLength(1);
    expect(world.tg.sent(GROUP)[0]).toMatchObject({ message_id: preview.message_id, text: "Lisbon is lovely in May.", deleted: false });
    expect(second.journal.map((j) => [j.index, j.messageId])).toEqual([[0, String(preview.message_id)]]);
    expect(await second.h.store.indicators.list("telegram")).toEqual([]);
  });

  it("a half message that the store no longer remembers (another replica made it its reply) is not edited again", async () => {
    await boot({ streaming: "edit" });
    const hold = holdStream(1);
    world.model.script({ ...text("Lisbon is lovely."), stream: hold.stream });
    inGroup("where to?");
    const preview = await world.nth(GROUP, 1);
    await world.tg.waitFor("sendChatAction", () => world.tg.actions(GROUP).some((a) => a.seq > preview.seq));
    await world.stopProviders();
    hold.release();

    // This replica adopts the row at its start; its resumed turn waits before its first words.
    const resumed = holdStream(0);
    world.model.script({ ...text("Porto is lovely too."), stream: resumed.stream });
    const second = await boot({ streaming: "edit" });
    await resumed.paused;
    // Meanwhile another replica took the half message over as its reply and forgot the row.
    await second.h.store.indicators.delete(`telegram:${GROUP}`);
    resumed.release();
    await second.h.gateway.idle();
    const edits = world.tg.calls.filter((c) => c.method === "editMessageText" && Number(c.params.message_id) === preview.message_id && c.at > preview.seq);
    expect(edits).toEqual([]);
    expect(world.tg.sent(GROUP).map((m) => m.text)).toEqual([preview.text, "Porto is lovely too."]);
  });

  it("a half message whose turn will not run again is deleted at the next start, and forgotten", async () => {
    const first = await boot({ streaming: "edit" });
    const hold = holdStream(1);
    world.model.script({ ...text("Lisbon is lovely."), stream: hold.stream });
    inGroup("where to?");
    const preview = await world.nth(GROUP, 1);
    await world.tg.waitFor("sendChatAction", () => world.tg.actions(GROUP).some((a) => a.seq > preview.seq));
    // The request ends without a reply (as a /cancel would end it): nothing will take the half message over.
    const [request] = await first.h.store.requests.unfinishedOf(`telegram:${GROUP}`);
    // Written as the process that holds the session (its turn is under way), the way its /cancel would.
    const writer = await writerFor(first.h.store, `telegram:${GROUP}`, first.h.leases.replica);
    await writer.commit({ request: { id: request!.id, status: "failed", error: "cancelled by the user", errorCode: "cancelled" } });
    await world.stopProviders();
    hold.release();

    const second = await boot({ streaming: "edit" });
    await second.h.gateway.idle();
    expect(world.tg.sent(GROUP)).toMatchObject([{ message_id: preview.message_id, deleted: true }]);
    expect(await second.h.store.indicators.list("telegram")).toEqual([]);
  });

  it("a reply committed but not yet shown is delivered once after the restart, into the half message", async () => {
    const retries = manualTimeouts();
    const first = await boot({ streaming: "edit" }, retries);
    world.tg.failChat(GROUP, TG_ERRORS.floodWait(300), { method: "editMessageText" });
    world.model.script(text("Lisbon is lovely in May."));
    inGroup("where to?");
    const preview = await world.nth(GROUP, 1);
    await world.tg.waitFor("editMessageText", (p) => p.text === "Lisbon is lovely in May.");
    await first.h.gateway.idle();
    expect(retries.delays()).toEqual([300_000]); // the outbox would try again in 5 min; the process stops first
    const [outbound] = first.attempts;
    await world.stopProviders();

    world.tg.failChat(GROUP, null, { method: "editMessageText" });
    const second = await boot({ streaming: "edit" });
    await second.h.gateway.idle();
    expect(world.tg.sent(GROUP)).toHaveLength(1);
    expect(world.tg.sent(GROUP)[0]).toMatchObject({ message_id: preview.message_id, text: "Lisbon is lovely in May." });
    // Delivered during the registration, before this test could watch the journal: read it from the store.
    expect(await second.h.store.outbox.deliveredChunks(outbound!)).toEqual([0]);
    expect(await second.h.store.outbox.pending()).toEqual([]);
    expect(await second.h.store.indicators.list("telegram")).toEqual([]);
  });
});
