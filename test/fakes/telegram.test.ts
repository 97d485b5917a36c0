// Drives the REAL grammy client against the Telegram fake: updates arrive via
// long polling, and every validation rule fails with the GrammyError
// (error_code + description) the real Bot API would produce.

import { Bot, GrammyError, HttpError } from "grammy";
import type { MessageEntity as GrammyEntity } from "grammy/types";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DRAFT_ERRORS, startFakeTelegram, type FakeTelegram } from "./telegram/server.js";

let fake: FakeTelegram;
let bot: Bot;

beforeAll(async () => {
  fake = await startFakeTelegram();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  bot = new Bot(fake.token, { client: { apiRoot: fake.url } });
});

const CHAT = 1001;
const GROUP = -1002003004005;

/** The GrammyError a call failed with (fails the test if it succeeded). */
async function tgError(p: Promise<unknown>): Promise<GrammyError> {
  const err = await p.then(
    () => {
      throw new Error("expected the Bot API call to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GrammyError);
  return err as GrammyError;
}

async function expect400(p: Promise<unknown>, description: string) {
  const err = await tgError(p);
  expect(err.error_code).toBe(400);
  expect(err.description).toBe(description);
}

/** Calls a method grammy has no typed wrapper for (or with deliberately wrong parameters). */
const raw = (method: string, params: object = {}) => (bot.api.raw as unknown as Record<string, (p: object) => Promise<unknown>>)[method]!(params);

describe("protocol", () => {
  it("answers getMe through bot.init()", async () => {
    await bot.init();
    expect(bot.botInfo).toMatchObject({ id: fake.botId, is_bot: true, first_name: "Switchboard", username: fake.botUsername, can_join_groups: true });
  });

  it("rejects an unknown token with 401 and an unknown method with 404", async () => {
    const stranger = new Bot("999:WRONG", { client: { apiRoot: fake.url } });
    const unauthorized = await tgError(stranger.api.getMe());
    expect(unauthorized.error_code).toBe(401);
    expect(unauthorized.description).toBe("Unauthorized");

    const notFound = await tgError(raw("sendTelepathicMessage"));
    expect(notFound.error_code).toBe(404);
    expect(notFound.description).toBe("Not Found: method not found");
    expect(fake.calls.map((c) => c.method)).toEqual(["getMe", "sendTelepathicMessage"]);
  });

  it("answers as an older Bot API server for the methods it lacks: 404 Not Found, until given back", async () => {
    fake.addChat({ id: CHAT, type: "private" });
    fake.withoutMethods(["sendMessageDraft"]);
    const res = await fetch(`${fake.url}/bot${fake.token}/sendmessagedraft`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chat_id: CHAT, draft_id: 1, text: "hi" }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ ok: false, error_code: 404, description: "Not Found" });
    expect((await tgError(raw("sendMessageDraft", { chat_id: CHAT, draft_id: 1, text: "hi" }))).error_code).toBe(404);
    expect(fake.drafts()).toEqual([]);
    await raw("sendMessage", { chat_id: CHAT, text: "still here" }); // the other methods answer as before

    fake.withoutMethods([]);
    await raw("sendMessageDraft", { chat_id: CHAT, draft_id: 1, text: "hi" });
    expect(fake.drafts().map((d) => d.text)).toEqual(["hi"]);
  });

  it("accepts query-string and form-urlencoded parameters too", async () => {
    fake.addChat({ id: CHAT, type: "private" });
    const me = (await (await fetch(`${fake.url}/bot${fake.token}/getMe`)).json()) as { ok: boolean; result: { id: number } };
    expect(me).toMatchObject({ ok: true, result: { id: fake.botId } });

    const body = new URLSearchParams({ chat_id: String(CHAT), text: "<b>hi</b>", parse_mode: "HTML" });
    const res = await fetch(`${fake.url}/bot${fake.token}/sendMessage`, { method: "POST", body });
    expect(await res.json()).toMatchObject({ ok: true, result: { text: "hi", entities: [{ type: "bold", offset: 0, length: 2 }] } });
  });
});

describe("getUpdates", () => {
  it("returns queued updates and forgets them once a higher offset confirms them", async () => {
    const pushed = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "hello" });
    const first = await bot.api.getUpdates({ offset: 0, timeout: 5 });
    expect(first).toEqual([pushed]);
    // Not confirmed yet: asking again returns it again.
    expect(await bot.api.getUpdates({ offset: 0, timeout: 0 })).toHaveLength(1);

    expect(await bot.api.getUpdates({ offset: pushed.update_id + 1, timeout: 0 })).toEqual([]);
    expect((await bot.api.getWebhookInfo()).pending_update_count).toBe(0);
    expect(await bot.api.getUpdates({ offset: 0, timeout: 0 })).toEqual([]);
  });

  it("holds a long poll open until an update is pushed", async () => {
    const poll = bot.api.getUpdates({ offset: 0, timeout: 30 });
    await fake.waitFor("getUpdates");
    const pushed = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "wake up" });
    expect(await poll).toEqual([pushed]);
  });

  it("honours limit and keeps update ids growing across reset()", async () => {
    const a = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "a" });
    const b = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "b" });
    expect(b.update_id).toBe(a.update_id + 1);
    expect(await bot.api.getUpdates({ limit: 1 })).toEqual([a]);
    fake.reset();
    const c = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "c" });
    expect(c.update_id).toBe(b.update_id + 1);
  });

  it("only delivers opt-in update types when allowed_updates asks for them", async () => {
    const reaction = fake.pushUpdate({
      message_reaction: { chat: { id: GROUP, type: "group", title: "g" }, message_id: 1, date: 0, old_reaction: [], new_reaction: [] },
    });
    expect(await bot.api.getUpdates({ timeout: 0 })).toEqual([]);
    expect(await bot.api.getUpdates({ timeout: 0, allowed_updates: ["message_reaction"] })).toEqual([reaction]);
  });

  it("redelivers an update with the same update_id", async () => {
    const pushed = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "once" });
    await bot.api.getUpdates({ offset: pushed.update_id + 1 });
    fake.redeliver(pushed);
    const again = await bot.api.getUpdates({ offset: 0 });
    expect(again).toEqual([pushed]);
  });

  it("refuses getUpdates with 409 while a webhook is set", async () => {
    await bot.api.setWebhook("https://example.com/hook", { secret_token: "s3cret" });
    expect(fake.webhook()).toEqual({ url: "https://example.com/hook", secret_token: "s3cret" });
    expect((await bot.api.getWebhookInfo()).url).toBe("https://example.com/hook");
    const err = await tgError(bot.api.getUpdates());
    expect(err.error_code).toBe(409);
    expect(err.description).toBe("Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");

    await bot.api.deleteWebhook();
    expect(fake.webhook()).toBeNull();
    expect(await bot.api.getUpdates()).toEqual([]);
  });

  it("deleteWebhook with drop_pending_updates empties the queue", async () => {
    fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "stale" });
    await bot.api.deleteWebhook({ drop_pending_updates: true });
    expect(await bot.api.getUpdates()).toEqual([]);
  });

  it("close() ends a pending long poll", async () => {
    const other = await startFakeTelegram();
    const otherBot = new Bot(other.token, { client: { apiRoot: other.url } });
    const poll = otherBot.api.getUpdates({ timeout: 30 });
    await other.waitFor("getUpdates");
    await other.close();
    await expect(poll).rejects.toBeInstanceOf(HttpError);
  });
});

describe("sendMessage", () => {
  beforeEach(() => fake.addChat({ id: CHAT, type: "private" }));

  it("returns and records the message, with message ids increasing per chat", async () => {
    const m1 = await bot.api.sendMessage(CHAT, "first");
    const m2 = await bot.api.sendMessage(CHAT, "second");
    expect(m1).toMatchObject({ chat: { id: CHAT, type: "private" }, text: "first", from: { id: fake.botId, is_bot: true } });
    expect(m2.message_id).toBe(m1.message_id + 1);
    expect(fake.sent(CHAT).map((s) => s.text)).toEqual(["first", "second"]);
    expect(fake.sent(CHAT)[0]).toMatchObject({ chat_id: CHAT, message_id: m1.message_id, entities: [], params: { chat_id: CHAT, text: "first" } });
    expect(fake.sent(999)).toEqual([]);
  });

  it("rejects unknown chats and empty text", async () => {
    await expect400(bot.api.sendMessage(424242, "hi"), "Bad Request: chat not found");
    await expect400(bot.api.sendMessage(CHAT, ""), "Bad Request: message text is empty");
    await expect400(bot.api.sendMessage(CHAT, "  \n\t "), "Bad Request: message text is empty");
    await expect400(bot.api.sendMessage(CHAT, "<b> </b>", { parse_mode: "HTML" }), "Bad Request: message text is empty");
    expect(fake.sent()).toEqual([]);
  });

  it("stores text the way Telegram does: trimmed, \\r dropped", async () => {
    const m = await bot.api.sendMessage(CHAT, "\n  hi\r\nthere  \n");
    expect(m.text).toBe("hi\nthere");
  });

  describe("length limit (4096 UTF-16 code units of the parsed text)", () => {
    it("accepts exactly 4096 and rejects 4097", async () => {
      await bot.api.sendMessage(CHAT, "a".repeat(4096));
      await expect400(bot.api.sendMessage(CHAT, "a".repeat(4097)), "Bad Request: message is too long");
    });

    it("counts an emoji as two units", async () => {
      const emoji = "😀".repeat(2048); // 2048 code points, 4096 UTF-16 units
      await bot.api.sendMessage(CHAT, emoji);
      await expect400(bot.api.sendMessage(CHAT, emoji + "a"), "Bad Request: message is too long");
    });

    it("counts after HTML parsing, not the markup", async () => {
      await bot.api.sendMessage(CHAT, `<b>${"a".repeat(4096)}</b>`, { parse_mode: "HTML" });
      await expect400(bot.api.sendMessage(CHAT, `<b>${"&amp;".repeat(4097)}</b>`, { parse_mode: "HTML" }), "Bad Request: message is too long");
    });
  });

  describe("parse_mode HTML", () => {
    it("parses tags and entities into plain text + entities", async () => {
      const html = '<b>bold</b> &lt;x&gt; R&D <a href="https://example.com">link</a>\n<pre><code class="language-ts">let x = 1;</code></pre>';
      const m = await bot.api.sendMessage(CHAT, html, { parse_mode: "HTML" });
      expect(m.text).toBe("bold <x> R&D link\nlet x = 1;");
      expect(m.entities).toEqual([
        { type: "bold", offset: 0, length: 4 },
        { type: "text_link", offset: 13, length: 4, url: "https://example.com" },
        { type: "pre", offset: 18, length: 10, language: "ts" },
      ]);
      expect(fake.sent(CHAT)[0]).toMatchObject({ text: m.text, parse_mode: "HTML" });
    });

    it("understands spoilers, quotes, nesting and numeric entities", async () => {
      const m = await bot.api.sendMessage(CHAT, '<blockquote expandable><i>a<u>b</u></i></blockquote> <span class="tg-spoiler">s</span> &#x1F600;&#65;', {
        parse_mode: "HTML",
      });
      expect(m.text).toBe("ab s 😀A");
      expect(m.entities).toEqual([
        { type: "expandable_blockquote", offset: 0, length: 2 },
        { type: "italic", offset: 0, length: 2 },
        { type: "underline", offset: 1, length: 1 },
        { type: "spoiler", offset: 3, length: 1 },
      ]);
    });

    it("rejects an unsupported tag with its byte offset", async () => {
      await expect400(
        bot.api.sendMessage(CHAT, "ü <foo>x</foo>", { parse_mode: "HTML" }),
        'Bad Request: can\'t parse entities: Unsupported start tag "foo" at byte offset 3',
      );
      await expect400(bot.api.sendMessage(CHAT, "1 < 2", { parse_mode: "HTML" }), 'Bad Request: can\'t parse entities: Unsupported start tag "" at byte offset 2');
    });

    it("rejects unclosed and mismatched tags", async () => {
      await expect400(
        bot.api.sendMessage(CHAT, "<b>bold", { parse_mode: "HTML" }),
        "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"",
      );
      await expect400(
        bot.api.sendMessage(CHAT, "<b><i>x</b></i>", { parse_mode: "HTML" }),
        'Bad Request: can\'t parse entities: Unmatched end tag at byte offset 7, expected "</i>", found "</b>"',
      );
      await expect400(bot.api.sendMessage(CHAT, "x</b>", { parse_mode: "HTML" }), "Bad Request: can't parse entities: Unexpected end tag at byte offset 1");
      await expect400(bot.api.sendMessage(CHAT, "a <b", { parse_mode: "HTML" }), "Bad Request: can't parse entities: Unclosed start tag at byte offset 2");
      await expect400(
        bot.api.sendMessage(CHAT, "<span>x</span>", { parse_mode: "HTML" }),
        'Bad Request: can\'t parse entities: Tag "span" must have class "tg-spoiler" at byte offset 0',
      );
    });

    it("does not support MarkdownV2", async () => {
      const err = await tgError(bot.api.sendMessage(CHAT, "*x*", { parse_mode: "MarkdownV2" }));
      expect(err.description).toMatch(/^Bad Request: can't parse entities: /);
    });
  });

  describe("explicit entities", () => {
    it("accepts bold and pre entities", async () => {
      const entities: GrammyEntity[] = [
        { type: "bold", offset: 0, length: 4 },
        { type: "pre", offset: 5, length: 6, language: "sh" },
      ];
      const m = await bot.api.sendMessage(CHAT, "Run: ls -la", { entities });
      expect(m.entities).toEqual(entities);
      expect(fake.sent(CHAT)[0]!.entities).toEqual(entities);
    });

    it("rejects entities outside the text or splitting a surrogate pair", async () => {
      const send = (text: string, entities: unknown[]) => bot.api.sendMessage(CHAT, text, { entities: entities as GrammyEntity[] });
      await expect400(
        send("hello", [{ type: "bold", offset: 3, length: 3 }]),
        "Bad Request: can't parse entities: Entity beginning at UTF-16 offset 3 ends after the end of the text at UTF-16 offset 6",
      );
      await expect400(
        send("hello", [{ type: "bold", offset: 6, length: 1 }]),
        "Bad Request: can't parse entities: Entity begins after the end of the text at UTF-16 offset 6",
      );
      await expect400(send("hello", [{ type: "bold", offset: -1, length: 1 }]), "Bad Request: can't parse entities: Receive an entity with incorrect offset -1");
      await expect400(
        send("😀x", [{ type: "bold", offset: 1, length: 2 }]),
        "Bad Request: can't parse entities: Entity begins in a middle of a UTF-16 symbol at byte offset 4",
      );
      await expect400(
        send("x😀", [{ type: "bold", offset: 0, length: 2 }]),
        "Bad Request: can't parse entities: Entity beginning at UTF-16 offset 0 ends in a middle of a UTF-16 symbol at byte offset 5",
      );
      await expect400(send("hello", [{ type: "shiny", offset: 0, length: 1 }]), 'Bad Request: can\'t parse entities: unsupported entity type "shiny" (entity #0)');
      const noUrl = await tgError(send("hello", [{ type: "text_link", offset: 0, length: 5 }]));
      expect(noUrl.description).toMatch(/^Bad Request: can't parse entities: text_link entity beginning at UTF-16 offset 0 needs a valid "url"/);
    });

    it("shifts entities when Telegram trims the text", async () => {
      const m = await bot.api.sendMessage(CHAT, "  hi you  ", { entities: [{ type: "italic", offset: 2, length: 8 }] });
      expect(m.text).toBe("hi you");
      expect(m.entities).toEqual([{ type: "italic", offset: 0, length: 6 }]);
    });
  });

  describe("replies, threads and keyboards", () => {
    it("replies to a known message and rejects a reply to an unknown one", async () => {
      const incoming = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "question" });
      const userMessageId = incoming.message!.message_id as number;
      const m = await bot.api.sendMessage(CHAT, "answer", { reply_parameters: { message_id: userMessageId } });
      expect(m.reply_to_message).toMatchObject({ message_id: userMessageId, text: "question" });
      expect(m.message_id).toBe(userMessageId + 1);
      expect(fake.sent(CHAT)[0]!.reply_to_message_id).toBe(userMessageId);

      await expect400(bot.api.sendMessage(CHAT, "x", { reply_parameters: { message_id: 999 } }), "Bad Request: message to be replied not found");
      await bot.api.sendMessage(CHAT, "x", { reply_parameters: { message_id: 999, allow_sending_without_reply: true } });
    });

    it("records message_thread_id and inline keyboards, and checks callback_data size", async () => {
      fake.addChat({ id: GROUP, type: "supergroup", is_forum: true, title: "Forum" });
      const keyboard = { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] };
      const m = await bot.api.sendMessage(GROUP, "in topic", { message_thread_id: 7, reply_markup: keyboard });
      expect(m).toMatchObject({ message_thread_id: 7, is_topic_message: true, reply_markup: keyboard });
      expect(fake.sent(GROUP)[0]).toMatchObject({ message_thread_id: 7, reply_markup: keyboard });

      const tooBig = { inline_keyboard: [[{ text: "Go", callback_data: "é".repeat(33) }]] }; // 66 bytes
      await expect400(bot.api.sendMessage(GROUP, "x", { reply_markup: tooBig }), "Bad Request: BUTTON_DATA_INVALID");
    });
  });
});

describe("editMessageText", () => {
  beforeEach(() => fake.addChat({ id: CHAT, type: "private" }));

  it("edits, keeps history, and refuses a no-op edit", async () => {
    const m = await bot.api.sendMessage(CHAT, "draft");
    const edited = await bot.api.editMessageText(CHAT, m.message_id, "<b>final</b>", { parse_mode: "HTML" });
    expect(edited).toMatchObject({ message_id: m.message_id, text: "final", entities: [{ type: "bold", offset: 0, length: 5 }] });
    expect(fake.sent(CHAT)).toHaveLength(1);
    expect(fake.sent(CHAT)[0]).toMatchObject({ text: "final", parse_mode: "HTML", history: [{ text: "draft", entities: [] }] });

    // Same text and entities, written differently: still "not modified".
    await expect400(
      bot.api.editMessageText(CHAT, m.message_id, "final", { entities: [{ type: "bold", offset: 0, length: 5 }] }),
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
  });

  it("validates like sendMessage and rejects unknown or foreign messages", async () => {
    const m = await bot.api.sendMessage(CHAT, "draft");
    await expect400(bot.api.editMessageText(CHAT, m.message_id, "a".repeat(4097)), "Bad Request: message is too long");
    await expect400(bot.api.editMessageText(CHAT, 999, "x"), "Bad Request: message to edit not found");
    const incoming = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "mine" });
    await expect400(bot.api.editMessageText(CHAT, incoming.message!.message_id as number, "x"), "Bad Request: message can't be edited");
    await bot.api.deleteMessage(CHAT, m.message_id);
    await expect400(bot.api.editMessageText(CHAT, m.message_id, "x"), "Bad Request: message to edit not found");
    expect(fake.sent(CHAT)[0]!.deleted).toBe(true);
  });
});

describe("other methods", () => {
  beforeEach(() => fake.addChat({ id: CHAT, type: "private" }));

  it("records chat actions in order with messages", async () => {
    await bot.api.sendChatAction(CHAT, "typing");
    await bot.api.sendMessage(CHAT, "done");
    const [action] = fake.actions(CHAT);
    expect(action).toMatchObject({ chat_id: CHAT, action: "typing" });
    const sendCall = fake.calls.find((c) => c.method === "sendMessage")!;
    expect(action!.seq).toBeLessThan(sendCall.at);
    await expect400(raw("sendChatAction", { chat_id: CHAT, action: "dancing" }), "Bad Request: wrong parameter action in request");
  });

  it("stores commands and rejects invalid ones", async () => {
    const commands = [
      { command: "start", description: "Start" },
      { command: "new_chat", description: "Forget the conversation" },
    ];
    await bot.api.setMyCommands(commands);
    expect(fake.commands()).toEqual(commands);
    expect(await bot.api.getMyCommands()).toEqual(commands);
    await expect400(bot.api.setMyCommands([{ command: "Start", description: "x" }]), "Bad Request: BOT_COMMAND_INVALID");
    await expect400(bot.api.setMyCommands([{ command: "start", description: "" }]), "Bad Request: command description is empty");
    await bot.api.deleteMyCommands();
    expect(fake.commands()).toEqual([]);
  });

  it("answers a callback query once", async () => {
    fake.pushUpdate({ callback_query: { id: "cb1", from: { id: CHAT, is_bot: false, first_name: "U" }, chat_instance: "ci", data: "go" } });
    await bot.api.answerCallbackQuery("cb1", { text: "ok" });
    await expect400(bot.api.answerCallbackQuery("cb1"), "Bad Request: query is too old and response timeout expired or query ID is invalid");
  });

  it("sets reactions from Telegram's list only", async () => {
    const m = await bot.api.sendMessage(CHAT, "react to me");
    await bot.api.setMessageReaction(CHAT, m.message_id, [{ type: "emoji", emoji: "👍" }]);
    const invalid = [{ type: "emoji", emoji: "✅" }] as unknown as Parameters<typeof bot.api.setMessageReaction>[2];
    await expect400(bot.api.setMessageReaction(CHAT, m.message_id, invalid), "Bad Request: REACTION_INVALID");
  });
});

// Streaming a reply: sendMessageDraft shows partial text as an ephemeral draft, the final text is sent with
// sendMessage (core.telegram.org/bots/api#sendmessagedraft). Rules and their sources: test/fakes/telegram/drafts.ts.
describe("sendMessageDraft", () => {
  let now: number;
  beforeEach(() => {
    now = Date.UTC(2026, 0, 1);
    fake.useClock(() => now);
    fake.addChat({ id: CHAT, type: "private" });
  });

  it("records every draft update, animated while the draft_id stays, until the final sendMessage replaces it", async () => {
    expect(await bot.api.sendMessageDraft(CHAT, 7, "Hel")).toBe(true);
    now += 300;
    await bot.api.sendMessageDraft(CHAT, 7, "Hello wor");
    now += 300;
    await bot.api.sendMessageDraft(CHAT, 7, "<b>Hello</b> world", { parse_mode: "HTML" });

    expect(fake.drafts(CHAT).map((d) => [d.text, d.animated, d.at - fake.drafts(CHAT)[0]!.at])).toEqual([
      ["Hel", false, 0],
      ["Hello wor", true, 300],
      ["Hello world", true, 600],
    ]);
    expect(fake.drafts(CHAT)[2]).toMatchObject({ chat_id: CHAT, draft_id: 7, parse_mode: "HTML", entities: [{ type: "bold", offset: 0, length: 5 }] });
    expect(fake.visibleDraft(CHAT)?.text).toBe("Hello world");

    // The draft is only a preview: the bot must send the final text, and then the draft is gone.
    const final = await bot.api.sendMessage(CHAT, "Hello world");
    expect(final.date).toBe(Math.floor(now / 1000)); // message dates follow the fake clock
    expect(fake.visibleDraft(CHAT)).toBeNull();
    expect(fake.timeline(CHAT).map((e) => [e.kind, "text" in e ? e.text : null])).toEqual([
      ["draft", "Hel"],
      ["draft", "Hello wor"],
      ["draft", "Hello world"],
      ["message", "Hello world"],
    ]);
    expect(fake.sent(CHAT).filter((m) => m.text === "Hello world")).toHaveLength(1);
    expect(fake.drafts(CHAT).every((d) => d.seq < fake.sent(CHAT)[0]!.seq)).toBe(true);
    expect(fake.drafts(999)).toEqual([]);
  });

  it("shows the Thinking… placeholder for empty text and replaces a draft with another draft_id without animation", async () => {
    await bot.api.sendMessageDraft(CHAT, 1, "");
    await bot.api.sendMessageDraft(CHAT, 1, " \n "); // trimmed to nothing: still the placeholder
    await bot.api.sendMessageDraft(CHAT, 2, "second segment");
    expect(fake.drafts(CHAT).map((d) => [d.draft_id, d.text, d.animated])).toEqual([
      [1, "", false],
      [1, "", true],
      [2, "second segment", false],
    ]);
  });

  it("expires a draft 30 seconds after its last update", async () => {
    await bot.api.sendMessageDraft(CHAT, 7, "partial");
    now += 29_999;
    expect(fake.visibleDraft(CHAT)?.text).toBe("partial");
    now += 1;
    expect(fake.visibleDraft(CHAT)).toBeNull();
    await bot.api.sendMessageDraft(CHAT, 7, "partial, later");
    expect(fake.drafts(CHAT)[1]!.animated).toBe(false); // nothing was shown to animate from
  });

  it("keeps drafts per forum topic of the private chat", async () => {
    await bot.api.sendMessageDraft(CHAT, 7, "in topic 3", { message_thread_id: 3 });
    await bot.api.sendMessage(CHAT, "elsewhere");
    expect(fake.visibleDraft(CHAT, 3)?.text).toBe("in topic 3");
    expect(fake.visibleDraft(CHAT)).toBeNull();
  });

  it("refuses any chat but a private one with TEXTDRAFT_PEER_INVALID", async () => {
    fake.addChat({ id: GROUP, type: "group", title: "g" });
    fake.addChat({ id: -1009, type: "supergroup", is_forum: true, title: "forum" });
    // Body quoted in nullclaw/nullclaw#626: {"ok":false,"error_code":400,"description":"Bad Request: TEXTDRAFT_PEER_INVALID"}
    await expect400(bot.api.sendMessageDraft(GROUP, 7, "hi"), "Bad Request: TEXTDRAFT_PEER_INVALID");
    await expect400(bot.api.sendMessageDraft(-1009, 7, "hi", { message_thread_id: 5 }), "Bad Request: TEXTDRAFT_PEER_INVALID");
    await expect400(bot.api.sendMessageDraft(424242, 7, "hi"), "Bad Request: chat not found");
    expect(fake.drafts()).toEqual([]);
    expect(fake.timeline()).toEqual([]);
  });

  it("parses the text before it looks at the chat, and checks draft_id and length like Telegram", async () => {
    fake.addChat({ id: GROUP, type: "group", title: "g" });
    // Client::process_send_message_draft_query: get_formatted_text runs before check_chat.
    await expect400(
      bot.api.sendMessageDraft(GROUP, 7, "<b>x", { parse_mode: "HTML" }),
      "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"",
    );
    await expect400(bot.api.sendMessageDraft(CHAT, 0, "hi"), DRAFT_ERRORS.draftIdZero);
    await expect400(raw("sendMessageDraft", { chat_id: CHAT, text: "hi" }), DRAFT_ERRORS.draftIdZero);
    await bot.api.sendMessageDraft(CHAT, 7, "a".repeat(4096));
    await expect400(bot.api.sendMessageDraft(CHAT, 7, "a".repeat(4097)), DRAFT_ERRORS.tooLong);
    expect(fake.drafts(CHAT)).toHaveLength(1);
  });

  it("the stop button sends stopped_message_generation and hides the draft unless keep_on_stop", async () => {
    await bot.api.sendMessageDraft(CHAT, 7, "no button");
    expect(() => fake.stopDraft(CHAT)).toThrow(/no visible draft with can_stop/);

    await bot.api.sendMessageDraft(CHAT, 7, "stoppable", { can_stop: true });
    const update = fake.stopDraft(CHAT);
    expect(update.stopped_message_generation).toEqual({ chat: { id: CHAT, type: "private" }, draft_id: 7 });
    expect(await bot.api.getUpdates({ allowed_updates: [] })).toEqual([update]);
    expect(fake.visibleDraft(CHAT)).toBeNull();

    await bot.api.sendMessageDraft(CHAT, 8, "kept", { can_stop: true, keep_on_stop: true });
    fake.stopDraft(CHAT);
    expect(fake.visibleDraft(CHAT)).toMatchObject({ text: "kept", stopped: expect.any(Number) });
  });
});

describe("streaming with editMessageText", () => {
  beforeEach(() => fake.addChat({ id: CHAT, type: "private" }));

  it("refuses an edit that repeats the current text with Telegram's 'message is not modified'", async () => {
    const m = await bot.api.sendMessage(CHAT, "Hello");
    await bot.api.editMessageText(CHAT, m.message_id, "Hello world");
    // The Bot API server's rewording of MESSAGE_NOT_MODIFIED (tdlib/telegram-bot-api Client::fail_query_with_error).
    await expect400(
      bot.api.editMessageText(CHAT, m.message_id, "Hello world"),
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
    // Adding a keyboard to the same text is a modification.
    await bot.api.editMessageText(CHAT, m.message_id, "Hello world", { reply_markup: { inline_keyboard: [[{ text: "Stop", callback_data: "stop" }]] } });
    expect(fake.timeline(CHAT).map((e) => e.kind)).toEqual(["message", "edit", "edit"]);
    expect(fake.sent(CHAT)[0]!.history.map((h) => h.text)).toEqual(["Hello", "Hello world"]);
  });
});

// Bot FAQ "My bot is hitting limits, how do I avoid this?": one message per second in a chat, 20 per minute in a
// group, about 30 per second overall; the 429 body is tdlib/telegram-bot-api Query::set_retry_after_error's.
describe("flood control", () => {
  let now: number;
  beforeEach(() => {
    now = Date.UTC(2026, 0, 1);
    fake.useClock(() => now);
    fake.addChat({ id: CHAT, type: "private" });
    fake.addChat({ id: GROUP, type: "group", title: "g" });
  });

  it("is off unless asked for", async () => {
    for (let i = 0; i < 5; i++) await bot.api.sendMessage(CHAT, `burst ${i}`);
    expect(fake.sent(CHAT)).toHaveLength(5);
  });

  it("answers a second message within a second in a private chat with 429 and retry_after", async () => {
    fake.floodControl({});
    await bot.api.sendMessage(CHAT, "one");
    now += 400;
    const err = await tgError(bot.api.sendMessage(CHAT, "two"));
    expect(err.error_code).toBe(429);
    expect(err.description).toBe("Too Many Requests: retry after 1");
    expect(err.parameters.retry_after).toBe(1);
    expect(fake.calls.at(-1)!.response).toEqual({ ok: false, error_code: 429, description: "Too Many Requests: retry after 1", parameters: { retry_after: 1 } });

    now += 600;
    await bot.api.sendMessage(CHAT, "two");
    expect(fake.sent(CHAT).map((m) => m.text)).toEqual(["one", "two"]);
  });

  it("counts edits with sends, but not refused or failed calls, nor drafts unless listed", async () => {
    fake.floodControl({});
    const m = await bot.api.sendMessage(CHAT, "Hel");
    for (let i = 0; i < 3; i++) await bot.api.sendMessageDraft(CHAT, 7, `Hello ${i}`);
    expect((await tgError(bot.api.editMessageText(CHAT, m.message_id, "Hello"))).error_code).toBe(429);
    now += 1000;
    await expect400(
      bot.api.editMessageText(CHAT, m.message_id, "Hel"),
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
    await bot.api.editMessageText(CHAT, m.message_id, "Hello"); // the refused edit and the 400 did not use the budget

    fake.floodControl({ methods: ["sendMessage", "editMessageText", "sendMessageDraft"] });
    now += 1000;
    await bot.api.sendMessageDraft(CHAT, 7, "Hello w");
    expect((await tgError(bot.api.sendMessageDraft(CHAT, 7, "Hello wo"))).parameters.retry_after).toBe(1);
  });

  it("allows 20 messages a minute to a group and says how long until the oldest leaves the window", async () => {
    fake.floodControl({});
    const start = now;
    for (let i = 0; i < 20; i++) {
      await bot.api.sendMessage(GROUP, `m${i}`);
      now += 1000;
    }
    // 20 s after the first message: it leaves the 60 s window in 40 s.
    expect(now - start).toBe(20_000);
    const err = await tgError(bot.api.sendMessage(GROUP, "one too many"));
    expect(err.description).toBe("Too Many Requests: retry after 40");
    expect(err.parameters.retry_after).toBe(40);
    await bot.api.sendMessage(CHAT, "a private chat has its own budget");
    now = start + 60_000;
    await bot.api.sendMessage(GROUP, "room again");
  });

  it("limits all chats together to about 30 messages a second, configurably", async () => {
    fake.floodControl({ overall: { count: 3, windowMs: 1000 }, perChat: null });
    for (const id of [1, 2, 3, 4]) fake.addChat({ id, type: "private" });
    for (const id of [1, 2, 3]) await bot.api.sendMessage(id, "hi");
    expect((await tgError(bot.api.sendMessage(4, "hi"))).parameters.retry_after).toBe(1);
    now += 1000;
    // perChat: null lifts the one-a-second rule, so one chat may take the whole overall budget.
    for (let i = 0; i < 3; i++) await bot.api.sendMessage(1, `again ${i}`);
    expect(fake.sent(1)).toHaveLength(4);
  });

  it("is off again after reset()", async () => {
    fake.floodControl({});
    await bot.api.sendMessage(CHAT, "one");
    fake.reset();
    fake.addChat({ id: CHAT, type: "private" });
    await bot.api.sendMessage(CHAT, "two");
    await bot.api.sendMessage(CHAT, "three");
    expect(fake.sent(CHAT)).toHaveLength(2);
  });
});

describe("failure injection", () => {
  beforeEach(() => fake.addChat({ id: CHAT, type: "private" }));

  it("failNext answers the next calls with a 429 and retry_after", async () => {
    fake.failNext("sendMessage", { error_code: 429, retry_after: 7 }, 2);
    for (let i = 0; i < 2; i++) {
      const err = await tgError(bot.api.sendMessage(CHAT, "hi"));
      expect(err.error_code).toBe(429);
      expect(err.description).toBe("Too Many Requests: retry after 7");
      expect(err.parameters.retry_after).toBe(7);
    }
    await bot.api.sendMessage(CHAT, "hi");
    expect(fake.sent(CHAT)).toHaveLength(1);
  });

  it("failWhen fails calls by content until removed", async () => {
    fake.failWhen("sendMessage", (p) => (p.parse_mode ? { error_code: 400, description: "Bad Request: can't parse entities: scripted" } : null));
    await expect400(bot.api.sendMessage(CHAT, "<b>x</b>", { parse_mode: "HTML" }), "Bad Request: can't parse entities: scripted");
    await bot.api.sendMessage(CHAT, "plain");
    fake.failWhen("sendMessage", null);
    await bot.api.sendMessage(CHAT, "<b>x</b>", { parse_mode: "HTML" });
    expect(fake.sent(CHAT).map((s) => s.text)).toEqual(["plain", "x"]);
  });

  it("can fail getUpdates too", async () => {
    fake.failNext("getUpdates", { error_code: 502, description: "Bad Gateway" });
    const err = await tgError(bot.api.getUpdates());
    expect(err.error_code).toBe(502);
    expect(await bot.api.getUpdates()).toEqual([]);
  });
});

describe("userMessage", () => {
  it("builds a private text message with a bot_command entity", () => {
    const u = fake.userMessage({ chatId: CHAT, fromId: CHAT, username: "alice", firstName: "Alice", text: "/start@switchboard_test_bot hi" });
    expect(u.message).toMatchObject({
      chat: { id: CHAT, type: "private", first_name: "Alice", username: "alice" },
      from: { id: CHAT, is_bot: false, first_name: "Alice", username: "alice" },
      text: "/start@switchboard_test_bot hi",
      entities: [{ type: "bot_command", offset: 0, length: 27 }],
    });
  });

  it("builds a group reply to the bot with a mention", () => {
    const u = fake.userMessage({ chatId: GROUP, chatType: "group", fromId: 5, text: "hey @switchboard_test_bot", replyToFromBot: true });
    expect(u.message).toMatchObject({
      chat: { id: GROUP, type: "group" },
      entities: [{ type: "mention", offset: 4, length: 21 }],
      reply_to_message: { from: { id: fake.botId, is_bot: true, username: fake.botUsername } },
    });
  });

  it("builds forum topic, media and edited messages", () => {
    const topic = fake.userMessage({ chatId: GROUP, isForum: true, threadId: 3, fromId: 5, text: "in topic" });
    expect(topic.message).toMatchObject({ chat: { type: "supergroup", is_forum: true }, message_thread_id: 3, is_topic_message: true });

    const photo = fake.userMessage({ chatId: CHAT, fromId: CHAT, photo: true, caption: "look" });
    expect(photo.message).toMatchObject({ caption: "look", photo: [{ width: 90 }, { width: 1280 }] });
    expect(photo.message!.text).toBeUndefined();
    expect(fake.userMessage({ chatId: CHAT, fromId: CHAT, sticker: true }).message!.sticker).toMatchObject({ type: "regular" });
    expect(fake.userMessage({ chatId: CHAT, fromId: CHAT, voice: true }).message!.voice).toMatchObject({ mime_type: "audio/ogg" });

    const original = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "typo" });
    const edit = fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "fixed", edited: true });
    expect(edit.message).toBeUndefined();
    expect(edit.edited_message).toMatchObject({ message_id: original.message!.message_id, text: "fixed", edit_date: expect.any(Number) });
  });
});

describe("a grammy bot end to end", () => {
  it("bot.start() receives a user message and its reply is recorded", async () => {
    bot.on("message:text", (ctx) => ctx.reply("echo: " + ctx.message.text));
    const running = bot.start();
    fake.userMessage({ chatId: CHAT, fromId: CHAT, text: "ping" });
    const call = await fake.waitFor("sendMessage");
    expect(call.params).toMatchObject({ chat_id: CHAT, text: "echo: ping" });
    expect(fake.sent(CHAT).map((s) => s.text)).toEqual(["echo: ping"]);
    await bot.stop();
    await running;
    // stop() confirmed the offset, so nothing is left to redeliver.
    expect((await bot.api.getWebhookInfo()).pending_update_count).toBe(0);
    expect(fake.calls.map((c) => c.method)).toEqual(expect.arrayContaining(["getMe", "deleteWebhook", "getUpdates", "sendMessage"]));
  });
});
