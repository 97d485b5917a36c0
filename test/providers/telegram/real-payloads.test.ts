// Recorded payload shapes (test/fixtures/telegram/) through the real grammY adapter, against the fake Bot API over
// HTTP, with the real gateway and runtime and the strict fake Messages API: what the bot does with each kind, and
// the cases where Telegram's real shapes used to fool it (commands for other bots, forum topics, allowlists,
// anonymous admins and channels, business messages).
import type { Update } from "grammy/types";
import { describe, expect, it } from "vitest";
import { ALLOWED_UPDATES, type TelegramProvider } from "../../../providers/telegram/telegram.js";
import { lastUserText, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { png } from "../../helpers/files.js";
import { skillFile } from "../../helpers/harness.js";
import { transferTool } from "../../helpers/tools.js";
import { telegramFixture, useTelegramWorld } from "../../helpers/telegram-world.js";

// The identities the fixtures use (test/fixtures/telegram/README.md).
const USER = 1111111;
const OTHER = 2222222;
const GROUP = -1001234567890;
const FORUM = -1009876543210;
const CHANNEL = -1001000000001;
const BOT = { id: 123456, is_bot: true, first_name: "Switchboard", username: "switchboard_test_bot" };
const NOT_ALLOWED = "Sorry, this bot is private and you are not on its list of users.";
const BUSY = /^Sorry, I'm in the middle of a task for someone else/;

const world = useTelegramWorld(skillFile("interview", "Ask."));

const texts = (chatId: number) => world.tg.sent(chatId).map((m) => m.text);

/**
 * Hands a fixture straight to the bot's middleware, the entry point the webhook uses: for update kinds the bot does
 * not subscribe to (a webhook set earlier with other allowed_updates could still deliver them).
 */
const handle = (bot: TelegramProvider, name: string) => bot.bot.handleUpdate({ update_id: 1, ...telegramFixture(name) } as unknown as Update);

describe("recorded payloads", () => {
  it("answers a private /start, a caption, and tells what is not supported (sticker, edits)", async () => {
    await world.boot();
    world.tg.pushUpdate(telegramFixture("private-text"));
    expect((await world.nth(USER, 1)).text).toMatch(/^Hi! I'm Switchboard/);
    world.model.script((req) => text(`caption seen: ${lastUserText(req)}`));
    // The fixture's largest photo size, on the fake's file server under the fixture's file_id.
    world.tg.addFile(await png(1280, 960), { folder: "photos", ext: "jpg", fileId: "AgACAgIAAxkBAAIBXXXXXXXXXXXXXXXx" });
    world.tg.pushUpdate(telegramFixture("photo-caption"));
    // The caption is the message text; the photo itself follows it to the model.
    expect((await world.nth(USER, 2)).text).toMatch(/^caption seen: What is in this photo\?\s*\[Attached image: photo-\S+ \(image\/png, [\d.]+ KB\)\]$/);
    world.tg.pushUpdate(telegramFixture("sticker"));
    expect((await world.nth(USER, 3)).text).toBe("I can't read stickers. Send text, photos, documents, voice notes, audio or video instead.");
    world.tg.pushUpdate(telegramFixture("edited-message"));
    expect((await world.nth(USER, 4)).text).toMatch(/edits/);
    expect(world.model.calls).toHaveLength(1);
  });

  it("reads a group mention after an emoji (UTF-16 entity offsets) and a reply to the bot in a supergroup", async () => {
    await world.boot();
    world.model.fallback((req) => text(`you said: ${lastUserText(req)}`));
    world.tg.pushUpdate(telegramFixture("group-mention-emoji"));
    expect((await world.nth(GROUP, 1)).text).toBe("you said: 🎉 what's new?");
    // A reply to the first message of a reply thread carries that message's id as message_thread_id: still a reply.
    world.tg.pushUpdate(telegramFixture("reply-to-bot"));
    expect((await world.nth(GROUP, 2)).text).toBe("you said: Lisbon, please");
  });

  it("answers a mention in a forum's General topic in the chat's own conversation, outside any topic", async () => {
    const { h } = await world.boot();
    world.model.script(text("hello General"));
    world.tg.pushUpdate(telegramFixture("forum-general-topic"));
    const sent = await world.nth(FORUM, 1);
    expect(sent).toMatchObject({ text: "hello General" });
    expect(sent.message_thread_id).toBeUndefined();
    expect(await h.store.requests.ofSession(`telegram:${FORUM}`)).toHaveLength(1);
  });

  it("answers a button press privately (here: an approval that does not exist)", async () => {
    await world.boot();
    world.tg.pushUpdate(telegramFixture("callback-query"));
    const answer = await world.tg.waitFor("answerCallbackQuery");
    expect(answer.params).toMatchObject({ callback_query_id: "4382bfdwdsb323b2d9", text: "There is no pending approval apr_1." });
    expect(world.tg.sent()).toEqual([]);
  });

  it("stores and answers nothing for a join, my_chat_member, a channel post or a business message", async () => {
    const { h, bot } = await world.boot();
    for (const name of ["my-chat-member", "channel-post", "business-message"]) await handle(bot, name);
    world.tg.pushUpdate(telegramFixture("new-chat-members"));
    world.model.script(text("still here"));
    world.tg.pushUpdate(telegramFixture("group-mention-emoji")); // after the join in the same chat: handled in order
    await world.nth(GROUP, 1);
    await h.gateway.idle();
    expect(world.tg.sent().map((m) => m.text)).toEqual(["still here"]);
    expect(world.model.calls).toHaveLength(1);
    expect((await h.store.requests.ofSession(`telegram:${GROUP}`)).map((r) => r.text)).toEqual(["🎉 what's new?"]);
    expect([...(await h.store.requests.ofSession(`telegram:${CHANNEL}`)), ...(await h.store.requests.ofSession("telegram:3333333"))]).toEqual([]);
  });
});

describe("item 1: commands for other bots", () => {
  it("ignores /cancel@OtherBot, /reset@OtherBot and /start@OtherBot in a group, and obeys commands with no target or ours", async () => {
    const { h } = await world.boot();
    const inGroup = { chatId: GROUP, chatType: "supergroup" as const, fromId: USER };
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })), text("Where to?"));
    world.tg.userMessage({ ...inGroup, text: `@${world.tg.botUsername} plan a trip` });
    expect((await world.nth(GROUP, 1)).text).toBe("🧩 interview\nWhere to?");

    for (const command of ["/cancel@OtherBot", "/reset@OtherBot", "/start@OtherBot", "/cancel@OtherBot now", `@${world.tg.botUsername} /reset@OtherBot`]) {
      world.tg.userMessage({ ...inGroup, text: command });
    }
    // The skill is still running with its history: the owner's plain answer reaches it.
    world.model.script((req) => text(`Noted: ${lastUserText(req)} (${req.messages.length} messages).`));
    world.tg.userMessage({ ...inGroup, text: "Rome" });
    expect((await world.nth(GROUP, 2)).text).toBe("🧩 interview\nNoted: Rome (3 messages).");
    world.tg.userMessage({ ...inGroup, text: `/status@${world.tg.botUsername}` });
    expect((await world.nth(GROUP, 3)).text).toContain("interview");
    world.tg.userMessage({ ...inGroup, text: "/cancel" });
    expect((await world.nth(GROUP, 4)).text).toBe("Cancelled. Stopped: skill:interview.");
    await h.gateway.idle();
    expect(texts(GROUP)).toHaveLength(4);
    expect((await h.store.requests.ofSession(`telegram:${GROUP}`)).map((r) => r.text).filter((t) => t.includes("OtherBot"))).toEqual([]);
  });
});

describe("item 2: forum topics", () => {
  it("does not take chatter in a topic the bot opened for replies to the bot; a real reply there is answered in the topic", async () => {
    const { h } = await world.boot();
    world.tg.pushUpdate(telegramFixture("forum-topic-message"));
    world.model.script((req) => text(`topic answer to ${lastUserText(req)}`));
    const botMessage = {
      message_id: 50,
      message_thread_id: 42,
      from: BOT,
      chat: { id: FORUM, title: "Test forum", is_forum: true, type: "supergroup" },
      date: 1735689650,
      is_topic_message: true,
      text: "Which city?",
    };
    world.tg.pushUpdate(
      telegramFixture("forum-topic-message", {
        message_id: 58,
        from: { id: USER, is_bot: false, first_name: "Test Firstname" },
        reply_to_message: botMessage,
        text: "Porto",
      }),
    );
    const sent = await world.nth(FORUM, 1);
    expect(sent).toMatchObject({ text: "topic answer to Porto", message_thread_id: 42 });
    await h.gateway.idle();
    expect(world.model.accepted().map(lastUserText)).toEqual(["Porto"]);
    expect((await h.store.requests.ofSession(`telegram:${FORUM}:topic:42`)).map((r) => r.text)).toEqual(["Porto"]);
  });
});

describe("item 3: TELEGRAM_ALLOWED_USERS", () => {
  it("refuses only in the private chat, once; silence in groups, for joins, my_chat_member and edits", async () => {
    const { h, bot } = await world.boot({ allowedUsers: [String(USER)] });
    const stranger = { id: OTHER, is_bot: false, first_name: "Other", username: "otheruser" };
    world.tg.pushUpdate(telegramFixture("group-mention-emoji", { from: stranger }));
    world.tg.pushUpdate(telegramFixture("new-chat-members"));
    await handle(bot, "my-chat-member");
    world.model.script(text("hello, group"));
    world.tg.pushUpdate(telegramFixture("group-mention-emoji"));
    await world.nth(GROUP, 1);

    world.tg.userMessage({ chatId: OTHER, fromId: OTHER, text: "hi" });
    world.tg.userMessage({ chatId: OTHER, fromId: OTHER, text: "typo", edited: true });
    world.tg.userMessage({ chatId: OTHER, fromId: OTHER, text: "hello??" });
    world.model.script(text("hello, you"));
    world.tg.pushUpdate(telegramFixture("private-text", { text: "hi", entities: undefined }));
    await world.nth(USER, 1);
    await h.gateway.idle();

    expect(texts(GROUP)).toEqual(["hello, group"]);
    expect(texts(OTHER)).toEqual([NOT_ALLOWED]);
    expect(world.model.calls).toHaveLength(2);
    expect([...(await h.store.requests.ofSession(`telegram:${GROUP}`)), ...(await h.store.requests.ofSession(`telegram:${OTHER}`))].map((r) => r.userId)).toEqual([
      `telegram:${USER}`,
    ]);
  });
});

describe("item 4: anonymous admins and posts as a channel", () => {
  it("takes the sender chat as the user: ownership and the allowlist work per real sender", async () => {
    const OTHER_CHANNEL = -1001000000002;
    const { h } = await world.boot({ allowedUsers: [String(CHANNEL), String(OTHER_CHANNEL), String(GROUP)] });
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "recap" })), text("Which meeting?"));
    world.tg.pushUpdate(telegramFixture("sender-channel"));
    expect((await world.nth(GROUP, 1)).text).toBe("🧩 interview\nWhich meeting?");
    expect((await h.store.requests.ofSession(`telegram:${GROUP}`))[0]!.userId).toBe(`telegram:${CHANNEL}`);

    // Same placeholder `from` (Channel_Bot), another channel: someone else, so refused while the task runs.
    const otherChannel = { id: OTHER_CHANNEL, title: "Other channel", username: "otherchannel", type: "channel" };
    world.tg.pushUpdate(telegramFixture("sender-channel", { message_id: 1377, sender_chat: otherChannel }));
    expect((await world.nth(GROUP, 2)).text).toMatch(BUSY);
    // The group's anonymous admins are the group: someone else too.
    world.tg.pushUpdate(telegramFixture("anonymous-admin"));
    expect((await world.nth(GROUP, 3)).text).toMatch(BUSY);

    // The channel owns the task: its plain answer reaches the skill.
    world.model.script(text("Got it."));
    world.tg.pushUpdate(telegramFixture("sender-channel", { message_id: 1378, text: "Monday's", entities: undefined }));
    expect((await world.nth(GROUP, 4)).text).toBe("🧩 interview\nGot it.");
  });

  it("an anonymous admin's request belongs to the group, not to GroupAnonymousBot", async () => {
    const { h } = await world.boot();
    world.model.script(text("Offsite: booked."));
    world.tg.pushUpdate(telegramFixture("anonymous-admin"));
    await world.nth(GROUP, 1);
    expect((await h.store.requests.ofSession(`telegram:${GROUP}`)).map((r) => r.userId)).toEqual([`telegram:${GROUP}`]);
  });
});

describe("item 4: the group's own approvals", () => {
  it("an approval of a task an anonymous admin started is decided by any admin of the group, not by other members", async () => {
    const runs: string[] = [];
    const { h } = await world.boot({}, [transferTool(runs)]);
    world.model.script(reply(toolUse("transfer", { amount: 9 })), text("Sent for the group."));
    world.tg.pushUpdate(telegramFixture("anonymous-admin"));
    const prompt = await world.nth(GROUP, 1);
    const approve = (prompt.reply_markup as { inline_keyboard: Array<Array<{ callback_data: string }>> }).inline_keyboard[0]![0]!.callback_data;
    const click = (fromId: number, id: string) =>
      world.tg.pushUpdate({
        callback_query: {
          id,
          from: { id: fromId, is_bot: false, first_name: `User${fromId}` },
          chat_instance: "ci",
          data: approve,
          message: { message_id: prompt.message_id, date: 0, chat: { id: GROUP, type: "supergroup", title: "Team" }, text: prompt.text },
        },
      });
    const ADMIN = 3333333;
    world.tg.setAdmin(GROUP, ADMIN);
    click(OTHER, "cq-member");
    await world.tg.waitFor("answerCallbackQuery", (p) => p.callback_query_id === "cq-member");
    expect(await h.store.approvals.pending(`telegram:${GROUP}`)).toHaveLength(1);
    click(ADMIN, "cq-admin");
    expect((await world.nth(GROUP, 2)).text).toBe("Sent for the group.");
    expect(runs).toEqual(["sent"]);
  });
});

describe("item 8: business messages", () => {
  it("subscribes to message, edited_message and callback_query only (no business_message), polling and webhook alike", async () => {
    await world.boot();
    await world.tg.waitFor("getUpdates", (p) => p.allowed_updates !== undefined);
    const polled = world.tg.calls.find((c) => c.method === "getUpdates" && c.params.allowed_updates !== undefined)!;
    expect(polled.params.allowed_updates).toEqual(["message", "edited_message", "callback_query"]);
    expect(ALLOWED_UPDATES).not.toContain("business_message");
    await world.stopProviders();
    await world.boot({ webhook: { url: "https://bot.example.com/tg", port: 0 } });
    expect(world.tg.calls.find((c) => c.method === "setWebhook")!.params.allowed_updates).toEqual(["message", "edited_message", "callback_query"]);
  });
});
