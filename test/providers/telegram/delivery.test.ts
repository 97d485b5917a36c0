// What the Bot API's real failures mean for a reply, through the real grammY adapter (auto-retry included) against
// the fake Bot API over HTTP, and what the gateway then does with them: permanent refusals, long flood waits, a
// group that became a supergroup. Also: replies are split between grapheme clusters, never inside one.
import { describe, expect, it, vi } from "vitest";
import { DeliveryError, type OutboundMessage } from "../../../src/gateway/types.js";
import { lastUserText, text } from "../../fakes/anthropic/server.js";
import { TG_ERRORS } from "../../fakes/telegram/server.js";
import { heldStep } from "../../helpers/deferred.js";
import { telegramFixture, useTelegramWorld } from "../../helpers/telegram-world.js";
import { manualTimeouts } from "../../helpers/timers.js";

const USER = 1111111;
const GROUP = -1001234567890;
const FORUM = -1009876543210;
const OLD_GROUP = -4123456789;
const NEW_GROUP = -1004123456789;

const world = useTelegramWorld();

const notice = (sessionKey: string): OutboundMessage => ({
  id: `out_${sessionKey}`,
  sessionKey,
  requestId: null,
  agent: "switchboard",
  depth: 0,
  text: "hello",
  kind: "notice",
});
const receipt = () => ({ sentChunks: new Set<number>(), chunkSent: async () => {} });
const sendsTo = (chatId: number) => world.tg.calls.filter((c) => c.method === "sendMessage" && Number(c.params.chat_id) === chatId);

describe("item 6: failures a retry cannot fix", () => {
  it("the sink turns Telegram's permanent refusals, long flood waits and moves into DeliveryErrors", async () => {
    await world.boot({ maxRetries: 2 }); // as in production: auto-retry on, capped at 120 s
    const cases: Array<{ key: string; setup: () => void; disposition: unknown }> = [
      {
        key: "telegram:1001",
        setup: () => world.tg.failChat(1001, TG_ERRORS.blocked),
        disposition: { kind: "permanent", reason: "Forbidden: bot was blocked by the user" },
      },
      { key: "telegram:1002", setup: () => world.tg.failChat(1002, TG_ERRORS.deactivated), disposition: { kind: "permanent", reason: "Forbidden: user is deactivated" } },
      {
        key: `telegram:${GROUP}`,
        setup: () => world.tg.failChat(GROUP, TG_ERRORS.kicked),
        disposition: { kind: "permanent", reason: "Forbidden: bot was kicked from the group chat" },
      },
      { key: "telegram:-1009999", setup: () => {}, disposition: { kind: "permanent", reason: "Bad Request: chat not found" } },
      {
        key: `telegram:${FORUM}:topic:99`,
        setup: () => world.tg.failChat(FORUM, TG_ERRORS.threadNotFound, { threadId: 99 }),
        disposition: { kind: "permanent", reason: "Bad Request: message thread not found" },
      },
      {
        key: `telegram:${FORUM}:topic:7`,
        setup: () => world.tg.failChat(FORUM, TG_ERRORS.topicClosed, { threadId: 7 }),
        disposition: { kind: "permanent", reason: "Bad Request: TOPIC_CLOSED" },
      },
      { key: "telegram:1003", setup: () => world.tg.failChat(1003, TG_ERRORS.floodWait(300)), disposition: { kind: "retry_after", ms: 300_000 } },
      { key: `telegram:${OLD_GROUP}`, setup: () => world.tg.migrateChat(OLD_GROUP, NEW_GROUP), disposition: { kind: "moved", to: `telegram:${NEW_GROUP}` } },
    ];
    for (const chat of [1001, 1002, 1003]) world.tg.addChat({ id: chat, type: "private" });
    for (const chat of [GROUP, FORUM, OLD_GROUP]) world.tg.addChat({ id: chat, type: "supergroup", ...(chat === FORUM && { is_forum: true }) });
    for (const { key, setup, disposition } of cases) {
      setup();
      const error: unknown = await world.sink.deliver(notice(key), receipt()).catch((e: unknown) => e);
      expect(error, key).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).disposition, key).toEqual(disposition);
    }
    // auto-retry hands a wait above its 120 s cap back at once: one call, no sleeping.
    expect(sendsTo(1003)).toHaveLength(1);
    // Anything else stays an ordinary error, which the gateway retries with backoff.
    world.tg.failNext("sendMessage", { error_code: 400, description: "Bad Request: message is too long" });
    world.tg.addChat({ id: 1004, type: "private" });
    const other: unknown = await world.sink.deliver(notice("telegram:1004"), receipt()).catch((e: unknown) => e);
    expect(other).not.toBeInstanceOf(DeliveryError);
    expect(other).toMatchObject({ error_code: 400, description: "Bad Request: message is too long" });
  });

  it("a reply to a user who blocked the bot is tried once, kept as undeliverable, shown in /status and never re-sent after a restart", async () => {
    const clock = manualTimeouts();
    const { h } = await world.boot({}, [], { timers: clock.timers });
    world.tg.failChat(USER, TG_ERRORS.blocked);
    world.model.script(text("You will never see this"));
    world.tg.pushUpdate(telegramFixture("private-text", { text: "hi", entities: undefined }));
    await world.tg.waitFor("sendMessage", (p) => Number(p.chat_id) === USER);
    await h.gateway.idle();
    expect(clock.delays()).toEqual([]); // nothing re-queued
    expect((await h.store.outbox.undeliverable(`telegram:${USER}`)).map((o) => [o.text, o.failure])).toEqual([
      ["You will never see this", "Forbidden: bot was blocked by the user"],
    ]);

    await world.stopProviders();
    world.tg.failChat(USER, null); // unblocked later
    const second = await world.boot();
    await second.h.gateway.idle();
    world.tg.pushUpdate(telegramFixture("private-text", { message_id: 1366, text: "/status", entities: [{ type: "bot_command", offset: 0, length: 7 }] }));
    expect((await world.nth(USER, 1)).text).toContain("1 reply could not be delivered (last: Forbidden: bot was blocked by the user).");
    await second.h.gateway.idle();
    expect(world.tg.sent(USER)).toHaveLength(1);
    expect(sendsTo(USER).map((c) => c.params.text)).toEqual(["You will never see this", expect.stringContaining("could not be delivered")]);
  });

  it("a flood wait above auto-retry's cap is waited out by the gateway's scheduler, then the reply goes out", async () => {
    const clock = manualTimeouts();
    const { h } = await world.boot({ maxRetries: 2 }, [], { timers: clock.timers });
    world.tg.failNext("sendMessage", TG_ERRORS.floodWait(300));
    world.model.script(text("after the wait"));
    world.tg.pushUpdate(telegramFixture("private-text", { text: "hi", entities: undefined }));
    await world.tg.waitFor("sendMessage", (p) => Number(p.chat_id) === USER);
    await h.gateway.idle();
    expect(clock.delays()).toEqual([300_000]);
    expect(world.tg.sent(USER)).toEqual([]);
    clock.fireAll();
    expect((await world.nth(USER, 1)).text).toBe("after the wait");
    expect(sendsTo(USER).map((c) => c.response?.ok)).toEqual([false, true]);
  });
});

describe("item 5: a group that became a supergroup", () => {
  it("moves the conversation once when Telegram announces the migration in both chats", async () => {
    const { h } = await world.boot();
    const moves = vi.spyOn(h.gateway, "moveSession");
    world.model.script(text("Noted for the old group."));
    world.tg.userMessage({ chatId: OLD_GROUP, chatType: "group", fromId: USER, text: `@${world.tg.botUsername} remember: blue` });
    await world.nth(OLD_GROUP, 1);
    await h.gateway.idle();

    world.tg.pushUpdate(telegramFixture("migrate-to"));
    world.tg.pushUpdate(telegramFixture("migrate-from"));
    world.model.script((req) => text(`I see ${req.messages.length} messages; you said: ${lastUserText(req)}`));
    world.tg.userMessage({ chatId: NEW_GROUP, chatType: "supergroup", fromId: USER, text: `@${world.tg.botUsername} what colour?` });
    expect((await world.nth(NEW_GROUP, 1)).text).toBe("I see 3 messages; you said: what colour?");
    expect(moves.mock.calls).toEqual([[`telegram:${OLD_GROUP}`, `telegram:${NEW_GROUP}`]]);
    expect(await h.store.requests.ofSession(`telegram:${OLD_GROUP}`)).toEqual([]);
  });

  it("a reply sent to the old group after the upgrade lands in the new supergroup", async () => {
    const { h } = await world.boot();
    const held = heldStep<ReturnType<typeof text>>();
    world.model.script(held.step);
    world.tg.userMessage({ chatId: OLD_GROUP, chatType: "group", fromId: USER, text: `@${world.tg.botUsername} think about it` });
    await held.entered;
    world.tg.migrateChat(OLD_GROUP, NEW_GROUP); // the bot missed the announcement
    held.release(text("Here is my answer."));
    const refused = await world.tg.waitFor("sendMessage", (p) => Number(p.chat_id) === OLD_GROUP);
    expect(refused.response).toMatchObject({ ok: false, error_code: 400, parameters: { migrate_to_chat_id: NEW_GROUP } });
    await h.gateway.idle();
    expect(world.tg.sent(NEW_GROUP).map((m) => m.text)).toEqual(["Here is my answer."]);
    expect(world.tg.sent(OLD_GROUP)).toEqual([]);
    expect(await h.store.requests.ofSession(`telegram:${NEW_GROUP}`)).toHaveLength(1);
  });
});

describe("item 7: grapheme clusters", () => {
  it("splits a 5,700-unit reply without spaces between emoji families, flags and skin tones, never inside one", async () => {
    const { h } = await world.boot();
    const cluster = "👍🏽🇺🇦👨‍👩‍👧‍👦"; // 4 + 4 + 11 UTF-16 units
    const answer = `a${cluster.repeat(300)}`;
    world.model.script(text(answer));
    world.tg.pushUpdate(telegramFixture("private-text", { text: "emoji please", entities: undefined }));
    await world.nth(USER, 2);
    await h.gateway.idle();
    const parts = world.tg.sent(USER).map((m) => m.text);
    expect(parts.join("")).toBe(answer);
    const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
    const allowed = new Set(["a", "👍🏽", "🇺🇦", "👨‍👩‍👧‍👦"]);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(4096);
      expect([...segmenter.segment(part)].map((s) => s.segment).filter((g) => !allowed.has(g))).toEqual([]);
    }
  });
});
