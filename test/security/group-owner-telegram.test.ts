// A Telegram group has one owner per conversation from the moment the first message is accepted, not from the
// first commit: the owner's first model call is held open so that another member's message and /cancel arrive
// in that window. Real grammY against the fake Bot API, the real gateway and runtime, the strict fake model.
import { describe, expect, it } from "vitest";
import { lastUserText, reply, text, toolUse, type FakeReply } from "../fakes/anthropic/server.js";
import { heldStep } from "../helpers/deferred.js";
import { skillFile } from "../helpers/harness.js";
import { ALICE, BOB, useTelegramWorld } from "../helpers/telegram-world.js";

const GROUP = -1004455;
const KEY = `telegram:${GROUP}`;
const BUSY = /^Sorry, I'm in the middle of a task for someone else in this chat/;
const group = { chatId: GROUP, chatType: "supergroup" as const };

const world = useTelegramWorld(skillFile("interview", "Ask."));

async function boot() {
  const started = await world.boot();
  await started.h.gateway.recover();
  return started;
}

const mention = (words: string) => `@${world.tg.botUsername} ${words}`;

describe("a group conversation before its first commit", () => {
  it("refuses another member's message and /cancel while the owner's first model call runs, and the owner's turn goes on", async () => {
    const { h } = await boot();
    const first = heldStep<FakeReply>();
    world.model.script(first.step);
    world.tg.userMessage({ ...group, fromId: ALICE, text: mention("plan a trip to Rome") });
    await first.entered;

    world.tg.userMessage({ ...group, fromId: BOB, text: mention("and book me a flight to Oslo") });
    expect((await world.nth(GROUP, 1)).text).toMatch(BUSY);
    world.tg.userMessage({ ...group, fromId: BOB, text: "/cancel" });
    expect((await world.nth(GROUP, 2)).text).toMatch(BUSY);
    world.tg.userMessage({ ...group, fromId: BOB, text: "stop" });
    expect((await world.nth(GROUP, 3)).text).toMatch(BUSY);

    first.release(text("Rome it is: which dates, Alice?"));
    expect((await world.nth(GROUP, 4)).text).toBe("Rome it is: which dates, Alice?");
    await h.gateway.idle();
    // Nothing of Bob's reached the model or Alice's task; her task ended with her answer.
    expect(world.model.accepted().map(lastUserText)).toEqual(["plan a trip to Rome"]);
    expect(world.model.rejected()).toEqual([]);
    expect((await h.store.requests.ofSession(KEY)).map((r) => [r.userId, r.text, r.status])).toEqual([[`telegram:${ALICE}`, "plan a trip to Rome", "done"]]);
    expect((await h.store.tasks.ofSession(KEY)).map((t) => [t.ownerId, t.status])).toEqual([[`telegram:${ALICE}`, "completed"]]);
    expect(world.tg.sent(GROUP)).toHaveLength(4);
  });

  it("takes the owner's own follow-up and /cancel in that window, and the conversation is free again afterwards", async () => {
    const { h } = await boot();
    const first = heldStep<FakeReply>();
    world.model.script(first.step, text("Somewhere warm: Lisbon?"));
    world.tg.userMessage({ ...group, fromId: ALICE, text: mention("plan a trip") });
    await first.entered;
    // Not addressed to the bot, but from the owner: it waits behind her running turn.
    world.tg.userMessage({ ...group, fromId: ALICE, text: "somewhere warm" });
    expect((await world.nth(GROUP, 1)).text).toMatch(/^Got it\. I'm still working on your previous message/);
    world.tg.userMessage({ ...group, fromId: ALICE, text: "/cancel" });
    expect((await world.nth(GROUP, 2)).text).toBe("Cancelled.");
    expect((await world.nth(GROUP, 3)).text).toBe("Somewhere warm: Lisbon?");
    await h.gateway.idle();
    first.release(reply(toolUse("use_skill", { name: "interview", message: "never" })));
    expect(await h.store.requests.unfinished()).toEqual([]);

    // Free again: Bob starts his own task, and it is his.
    world.model.script(text("Hi Bob."));
    world.tg.userMessage({ ...group, fromId: BOB, text: mention("hello") });
    expect((await world.nth(GROUP, 4)).text).toBe("Hi Bob.");
    await h.gateway.idle();
    expect((await h.store.tasks.ofSession(KEY)).map((t) => t.ownerId)).toEqual([`telegram:${ALICE}`, `telegram:${BOB}`]);
    expect(world.model.accepted().map(lastUserText)).toEqual(["plan a trip", "somewhere warm", "hello"]);
  });
});
