// The Telegram provider end to end: real grammY (runner, auto-retry) against the fake Bot API, the real
// gateway and runtime, the real Anthropic SDK against the strict fake Messages API.
import { describe, expect, it } from "vitest";
import type { TelegramOptions } from "../../../providers/telegram/telegram.js";
import type { Tool } from "../../../src/runtime/tools/tool.js";
import { lastUserText, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { TG_ERRORS, type SentMessage } from "../../fakes/telegram/server.js";
import { deferred } from "../../helpers/deferred.js";
import { agentFile, skillFile } from "../../helpers/harness.js";
import { ALICE, BOB, useTelegramWorld } from "../../helpers/telegram-world.js";
import { deployTool, transferTool } from "../../helpers/tools.js";

const GROUP = -1001234;

const world = useTelegramWorld({ ...skillFile("interview", "Ask."), ...agentFile("researcher", "Research.") });

/** Timers the test fires by hand, so the typing indicator is checked without waiting. */
function manualTimers() {
  const fns = new Map<number, () => void>();
  let next = 1;
  return {
    timers: {
      setInterval: (fn: () => void) => {
        fns.set(next, fn);
        return next++;
      },
      clearInterval: (id: unknown) => void fns.delete(id as number),
    },
    tick: () => [...fns.values()].forEach((fn) => fn()),
    active: () => fns.size,
  };
}

/** The shared boot with grammY's retries on, recovering at start as main.ts does. */
async function boot(options: Partial<TelegramOptions> = {}) {
  const started = await world.boot({ maxRetries: 2, ...options });
  await started.h.gateway.recover();
  return started;
}

describe("private chat", () => {
  it("holds a whole takeover conversation, with the speaking subagent shown, to completion", async () => {
    await boot();
    expect(world.tg.commands().map((c) => c.command)).toEqual(["start", "skills", "status", "context", "memory", "schedules", "usage", "cancel", "reset"]);

    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "/start" });
    expect((await world.nth(ALICE, 1)).text).toContain("• interview: The interview skill for tests.");

    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })), text("Where **to**?"));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "plan a trip" });
    const question = await world.nth(ALICE, 2);
    expect(question.text).toBe("🧩 interview\nWhere to?");
    expect(question.entities).toEqual([
      { type: "bold", offset: 0, length: 12 },
      { type: "bold", offset: 19, length: 2 },
    ]);

    world.model.script(reply(toolUse("complete", { result: "Lisbon" })), text("Your trip: Lisbon."));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "Lisbon" });
    expect((await world.nth(ALICE, 3)).text).toBe("Your trip: Lisbon.");
    expect(lastUserText(world.model.accepted()[1]!)).toBe("plan a trip");
    expect(world.model.rejected()).toEqual([]);
  });

  it("/cancel during a subagent stops it and says which one", async () => {
    await boot();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q?"));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "go" });
    await world.nth(ALICE, 1);
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "/cancel" });
    expect((await world.nth(ALICE, 2)).text).toBe("Cancelled. Stopped: skill:interview.");
  });

  it("answers media without a caption with what is supported, takes captions as text, refuses huge messages and edits", async () => {
    await boot();
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, sticker: true });
    expect((await world.nth(ALICE, 1)).text).toBe("I can't read stickers. Send text, photos, documents, voice notes, audio or video instead.");
    world.model.script((req) => text(`caption seen: ${lastUserText(req)}`));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, photo: true, caption: "what is this?" });
    // The caption is the message text; the photo itself follows it to the model.
    expect((await world.nth(ALICE, 2)).text).toMatch(/^caption seen: what is this\?\s*\[Attached image: photo-\d+\.jpg \(image\/jpeg, \d+ bytes\)\]$/);
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "x".repeat(17 * 1024) });
    expect((await world.nth(ALICE, 3)).text).toMatch(/too long for me \(17 KB; the limit is 16 KB\)/);
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "typo", edited: true });
    expect((await world.nth(ALICE, 4)).text).toMatch(/edits/);
    expect(world.model.calls).toHaveLength(1);
  });
});

describe("groups", () => {
  it("answers mentions and replies to the bot, ignores other chatter, and refuses a non-owner politely", async () => {
    await boot();
    const group = { chatId: GROUP, chatType: "supergroup" as const };
    world.tg.userMessage({ ...group, fromId: BOB, text: "anyone for lunch?" });
    world.model.script((req) => text(`hello, you said: ${lastUserText(req)}`));
    world.tg.userMessage({ ...group, fromId: ALICE, text: `@${world.tg.botUsername} hi` });
    expect((await world.nth(GROUP, 1)).text).toBe("hello, you said: hi");
    expect(world.model.accepted().map(lastUserText)).toEqual(["hi"]);

    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Alice, where to?"));
    world.tg.userMessage({ ...group, fromId: ALICE, text: "plan a trip", replyToFromBot: true });
    await world.nth(GROUP, 2);
    // Bob mentions the bot while Alice's task runs: refused, not sent to the world.model.
    world.tg.userMessage({ ...group, fromId: BOB, text: `@${world.tg.botUsername} me next` });
    expect((await world.nth(GROUP, 3)).text).toMatch(/^Sorry, I'm in the middle of a task for someone else/);
    world.tg.userMessage({ ...group, fromId: BOB, text: "/cancel" });
    expect((await world.nth(GROUP, 4)).text).toMatch(/^Sorry, I'm in the middle/);
    // Alice answers without mentioning the bot: she owns the task, so it reaches the skill.
    world.model.script(text("Noted: Rome."));
    world.tg.userMessage({ ...group, fromId: ALICE, text: "Rome" });
    expect((await world.nth(GROUP, 5)).text).toBe("🧩 interview\nNoted: Rome.");
    expect(
      world.model
        .accepted()
        .map(lastUserText)
        .filter((t) => t.includes("me next") || t.includes("lunch")),
    ).toEqual([]);
  });

  it("treats forum topics as separate conversations and replies in the same topic", async () => {
    await boot();
    world.model.fallback((req) => text(`topic reply to ${lastUserText(req)}`));
    const forum = { chatId: GROUP, chatType: "supergroup" as const, isForum: true };
    world.tg.userMessage({ ...forum, threadId: 7, fromId: ALICE, text: `@${world.tg.botUsername} one` });
    world.tg.userMessage({ ...forum, threadId: 9, fromId: BOB, text: `@${world.tg.botUsername} two` });
    await world.nth(GROUP, 2);
    const byThread = Object.fromEntries(world.tg.sent(GROUP).map((m) => [m.message_thread_id, m.text]));
    expect(byThread).toEqual({ 7: "topic reply to one", 9: "topic reply to two" });
    // Two sessions: each model call saw only its own topic's message.
    expect(world.model.accepted().map((r) => r.messages.length)).toEqual([1, 1]);
  });
});

describe("access", () => {
  it("with TELEGRAM_ALLOWED_USERS set, others get one refusal and nothing reaches the model", async () => {
    await boot({ allowedUsers: [String(ALICE), "@carol"] });
    world.tg.userMessage({ chatId: BOB, fromId: BOB, text: "hi" });
    world.tg.userMessage({ chatId: BOB, fromId: BOB, text: "hello??" });
    world.model.script(text("Hi Carol."));
    world.tg.userMessage({ chatId: 1003, fromId: 1003, username: "Carol", text: "hi" });
    await world.nth(1003, 1);
    expect(world.tg.sent(BOB).map((m) => m.text)).toEqual(["Sorry, this bot is private and you are not on its list of users."]);
    expect(world.model.calls).toHaveLength(1);
  });
});

describe("output", () => {
  it("splits a 10,000-character answer below 4096 characters with its formatting intact", async () => {
    const { h } = await boot();
    const answer = Array.from({ length: 25 }, (_, i) => `**Section ${i}.** ${"word ".repeat(75)}`).join("\n\n");
    world.model.script(text(answer));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "long please" });
    await world.tg.waitFor("sendMessage");
    await h.gateway.idle();
    const parts = world.tg.sent(ALICE);
    expect(parts.length).toBe(3);
    for (const part of parts) {
      expect(part.text.length).toBeLessThanOrEqual(4096);
      for (const e of part.entities) expect(part.text.slice(e.offset, e.offset + e.length)).toMatch(/^Section \d+\.$/);
    }
    expect(parts.reduce((n, p) => n + p.entities.length, 0)).toBe(25);
  });

  it("resends as plain text when Telegram rejects the formatting", async () => {
    await boot();
    world.tg.failWhen("sendMessage", (p) =>
      p.entities ? { error_code: 400, description: 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0' } : null,
    );
    world.model.script(text("**bold** claim"));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi" });
    const sent = await world.nth(ALICE, 1);
    expect(sent).toMatchObject({ text: "bold claim", entities: [] });
  });

  it("works with the rate-limit throttler on, as in production", async () => {
    await boot({ throttle: true });
    world.model.script(text("paced"));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi" });
    expect((await world.nth(ALICE, 1)).text).toBe("paced");
  });

  it("honours 429 retry_after and delivers the reply", async () => {
    await boot();
    world.tg.failNext("sendMessage", { error_code: 429, retry_after: 1 });
    world.model.script(text("after the wait"));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi" });
    expect((await world.nth(ALICE, 1)).text).toBe("after the wait");
    const sends = world.tg.calls.filter((c) => c.method === "sendMessage").map((c) => c.response?.ok);
    expect(sends).toEqual([false, true]);
  });

  it("shows typing while a turn runs and stops the moment the reply is sent", async () => {
    const clock = manualTimers();
    await boot({ timers: clock.timers });
    const answer = deferred<ReturnType<typeof text>>();
    const called = deferred<void>();
    world.model.script(() => {
      called.resolve();
      return answer.promise;
    });
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "think hard" });
    await called.promise;
    await world.tg.waitFor("sendChatAction");
    clock.tick();
    await world.tg.waitFor("sendChatAction", () => world.tg.actions(ALICE).length >= 2);
    answer.resolve(text("done thinking"));
    await world.nth(ALICE, 1);
    expect(clock.active()).toBe(0);
    expect(world.tg.actions(ALICE).map((a) => a.action)).toEqual(["typing", "typing"]);
  });
});

describe("approvals", () => {
  const transfer = transferTool;
  function click(message: SentMessage, fromId: number, data: string, id: string) {
    return world.tg.pushUpdate({
      callback_query: {
        id,
        from: { id: fromId, is_bot: false, first_name: `User${fromId}` },
        chat_instance: "ci",
        data,
        message: { message_id: message.message_id, date: 0, chat: { id: message.chat_id, type: "private" }, text: message.text },
      },
    });
  }

  it("the prompt leads with the tool's target and fits one message with its buttons, however long the input", async () => {
    await bootWithTools([deployTool()]);
    const fields = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`note${i}`, "x".repeat(5_000)]));
    world.model.script(reply(toolUse("deploy", { ...fields, service: "billing", target: "prod-eu-1" })));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "deploy billing" });
    const prompt = await world.nth(ALICE, 1);
    expect(prompt.text.split("\n")[0]).toBe("🔐 main wants to run deploy: billing → prod-eu-1");
    expect(prompt.text).toContain("• … and 32 more fields");
    expect((prompt.reply_markup as { inline_keyboard: unknown[][] }).inline_keyboard[0]).toHaveLength(2);
    expect(world.tg.sent(ALICE)).toHaveLength(1);
  });

  it("asks with Approve/Deny buttons; the owner's click runs the tool once, a second click is told", async () => {
    const runs: string[] = [];
    const { h } = await bootWithTools([transfer(runs)]);
    world.model.script(reply(toolUse("transfer", { amount: 5 })), text("Done, sent."));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "send 5" });
    const prompt = await world.nth(ALICE, 1);
    const keyboard = (prompt.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard[0]!;
    expect(keyboard.map((b) => b.text)).toEqual(["✅ Approve", "✖️ Deny"]);
    const [approve] = keyboard;
    expect(Buffer.byteLength(approve!.callback_data)).toBeLessThanOrEqual(64);

    click(prompt, BOB, approve!.callback_data, "cq-bob");
    await world.tg.waitFor("answerCallbackQuery", (p) => p.callback_query_id === "cq-bob");
    expect(world.tg.calls.find((c) => c.params.callback_query_id === "cq-bob")?.params).toMatchObject({
      text: "Only the person who started this task can approve or deny its tool calls.",
    });
    click(prompt, ALICE, approve!.callback_data, "cq-1");
    click(prompt, ALICE, approve!.callback_data, "cq-2");
    await world.tg.waitFor("answerCallbackQuery", (p) => p.callback_query_id === "cq-2");
    expect((await world.nth(ALICE, 2)).text).toBe("Done, sent.");
    await h.gateway.idle();
    expect(runs).toEqual(["sent"]);
    expect(world.tg.calls.find((c) => c.params.callback_query_id === "cq-2")?.params).toMatchObject({ text: "That was already decided (approved)." });
    // The deciding press names who approved; the second press's edit (they race) may land last, saying only "approved".
    expect(world.tg.sent(ALICE)[0]!.text).toMatch(/— approved( by |$)/);
    expect(world.tg.calls.filter((c) => c.method === "editMessageText").map((c) => c.params.text)).toContainEqual(expect.stringMatching(/— approved by /));
  });

  it("Deny reaches the model as an error and nothing runs", async () => {
    const runs: string[] = [];
    await bootWithTools([transfer(runs)]);
    world.model.script(reply(toolUse("transfer", { amount: 5 })), (req) => {
      expect(JSON.stringify(req.messages.at(-1))).toContain("the user denied this call");
      return text("Not sent.");
    });
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "send 5" });
    const prompt = await world.nth(ALICE, 1);
    const deny = (prompt.reply_markup as { inline_keyboard: Array<Array<{ callback_data: string }>> }).inline_keyboard[0]![1]!;
    click(prompt, ALICE, deny.callback_data, "cq-deny");
    expect((await world.nth(ALICE, 2)).text).toBe("Not sent.");
    expect(runs).toEqual([]);
  });
});

describe("restarts", () => {
  it("an update redelivered after a restart is processed once and its reply is not sent again", async () => {
    await boot();
    world.model.script(text("only once"));
    const update = world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi" });
    await world.nth(ALICE, 1);
    await world.stopProviders();

    const second = await boot();
    world.tg.redeliver(update);
    world.model.script(text("second message answered"));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "next" });
    await world.nth(ALICE, 2);
    // The second bot really was handed the old update again…
    const deliveries = world.tg.calls.filter((c) => {
      const result = c.method === "getUpdates" && c.response?.ok ? (c.response.result as Array<{ update_id: number }>) : [];
      return result.some((u) => u.update_id === update.update_id);
    });
    expect(deliveries.length).toBe(2);
    // …and neither asked the model nor answered twice.
    expect(world.tg.sent(ALICE).map((m) => m.text)).toEqual(["only once", "second message answered"]);
    expect(world.model.accepted().map(lastUserText)).toEqual(["hi", "next"]);
    expect(await second.h.store.requests.unfinished()).toEqual([]);
  });

  it("a long reply cut off after its first chunk continues at the next chunk after a restart", async () => {
    const first = await boot({ maxRetries: 0 });
    const answer = Array.from({ length: 25 }, (_, i) => `Section ${i}. ${"word ".repeat(75)}`).join("\n\n");
    world.model.script(text(answer));
    let sends = 0;
    // After the first chunk Telegram asks for a wait past auto-retry's cap; the service restarts meanwhile.
    world.tg.failWhen("sendMessage", () => (++sends >= 2 ? TG_ERRORS.floodWait(600) : null));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "long" });
    await world.tg.waitFor("sendMessage", () => sends >= 2);
    await first.h.gateway.idle();
    expect(world.tg.sent(ALICE)).toHaveLength(1);
    await world.stopProviders();
    world.tg.failWhen("sendMessage", null);

    const second = await boot();
    await second.h.gateway.idle();
    await world.nth(ALICE, 3);
    const texts = world.tg.sent(ALICE).map((m) => m.text);
    expect(texts).toHaveLength(3);
    expect(new Set(texts).size).toBe(3);
    expect(texts[0]!.startsWith("Section 0.")).toBe(true);
  });
});

describe("webhook mode", () => {
  it("registers the webhook with a secret and rejects calls without it", async () => {
    const { bot } = await boot({ webhook: { url: "https://bot.example.com/tg", secret: "s3cret", port: 0 } });
    expect(world.tg.webhook()).toMatchObject({ url: "https://bot.example.com/tg", secret_token: "s3cret" });
    const port = bot.webhookPort();
    const update = {
      update_id: 1,
      message: { message_id: 1, date: 0, chat: { id: ALICE, type: "private" }, from: { id: ALICE, is_bot: false, first_name: "A" }, text: "hi" },
    };
    const post = (secret: string) =>
      fetch(`http://127.0.0.1:${port}/tg`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
        body: JSON.stringify(update),
      });
    expect((await post("wrong")).status).toBe(401);
    expect(world.model.calls).toHaveLength(0);
    world.tg.addChat({ id: ALICE, type: "private" });
    world.model.script(text("via webhook"));
    expect((await post("s3cret")).status).toBe(200);
    expect((await world.nth(ALICE, 1)).text).toBe("via webhook");
  });
});

function bootWithTools(tools: Tool[]) {
  return world.boot({ maxRetries: 2 }, tools);
}
