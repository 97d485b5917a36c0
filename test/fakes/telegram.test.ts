// Drives the REAL grammy client against the Telegram fake: updates arrive via
// long polling, and every validation rule fails with the GrammyError
// (error_code + description) the real Bot API would produce.

import { Bot, GrammyError, HttpError } from "grammy";
import type { MessageEntity as GrammyEntity } from "grammy/types";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeTelegram, type FakeTelegram } from "./telegram/server.js";

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
const raw = (method: string, params: object = {}) =>
  (bot.api.raw as unknown as Record<string, (p: object) => Promise<unknown>>)[method]!(params);

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
    const reaction = fake.pushUpdate({ message_reaction: { chat: { id: GROUP, type: "group", title: "g" }, message_id: 1, date: 0, old_reaction: [], new_reaction: [] } });
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
      await expect400(bot.api.sendMessage(CHAT, "<b>bold", { parse_mode: "HTML" }), 'Bad Request: can\'t parse entities: Can\'t find end tag corresponding to start tag "b"');
      await expect400(
        bot.api.sendMessage(CHAT, "<b><i>x</b></i>", { parse_mode: "HTML" }),
        'Bad Request: can\'t parse entities: Unmatched end tag at byte offset 7, expected "</i>", found "</b>"',
      );
      await expect400(bot.api.sendMessage(CHAT, "x</b>", { parse_mode: "HTML" }), "Bad Request: can't parse entities: Unexpected end tag at byte offset 1");
      await expect400(bot.api.sendMessage(CHAT, "a <b", { parse_mode: "HTML" }), "Bad Request: can't parse entities: Unclosed start tag at byte offset 2");
      await expect400(bot.api.sendMessage(CHAT, "<span>x</span>", { parse_mode: "HTML" }), 'Bad Request: can\'t parse entities: Tag "span" must have class "tg-spoiler" at byte offset 0');
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
      await expect400(send("hello", [{ type: "bold", offset: 3, length: 3 }]), "Bad Request: can't parse entities: Entity beginning at UTF-16 offset 3 ends after the end of the text at UTF-16 offset 6");
      await expect400(send("hello", [{ type: "bold", offset: 6, length: 1 }]), "Bad Request: can't parse entities: Entity begins after the end of the text at UTF-16 offset 6");
      await expect400(send("hello", [{ type: "bold", offset: -1, length: 1 }]), "Bad Request: can't parse entities: Receive an entity with incorrect offset -1");
      await expect400(send("😀x", [{ type: "bold", offset: 1, length: 2 }]), "Bad Request: can't parse entities: Entity begins in a middle of a UTF-16 symbol at byte offset 4");
      await expect400(send("x😀", [{ type: "bold", offset: 0, length: 2 }]), "Bad Request: can't parse entities: Entity beginning at UTF-16 offset 0 ends in a middle of a UTF-16 symbol at byte offset 5");
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
