// Flood control through Telegram (USER_MESSAGES_PER_MINUTE): real grammY long polling against the fake Bot API, the
// runtime's clock moved by hand. In a group, a member who writes faster than the limit is told once in the chat and
// then dropped without a word until their allowance refills; the other members are answered as before.
import { expect, it } from "vitest";
import { text } from "../../fakes/anthropic/server.js";
import { ALICE, BOB, useTelegramWorld } from "../../helpers/telegram-world.js";

const GROUP = -1001234;
const world = useTelegramWorld();

it("in a group, the member over the limit hears one notice and then silence; another member is still answered", async () => {
  let now = 1_700_000_000_000;
  const { h } = await world.boot({}, [], { userMessagesPerMinute: 2, clock: { now: () => now } });
  world.model.fallback((req) => text(`answer ${req.messages.length}`));
  /** A member mentions the bot; resolves once the bot has handled the update (it asks for the ones after it). */
  const say = async (fromId: number, words: string) => {
    const update = world.tg.userMessage({ chatId: GROUP, chatType: "supergroup", fromId, text: `@${world.tg.botUsername} ${words}` });
    await world.tg.waitFor("getUpdates", (p) => Number(p.offset) > update.update_id);
    await h.gateway.idle();
  };
  const botSays = () =>
    world.tg
      .visible(GROUP)
      .filter((m) => m.fromBot)
      .map((m) => m.text);

  await say(ALICE, "one");
  await say(ALICE, "two");
  expect(botSays()).toHaveLength(2);
  await say(ALICE, "three");
  await say(ALICE, "four");
  await say(ALICE, "five");
  const notices = botSays().slice(2);
  expect(notices).toEqual([expect.stringMatching(/^You're sending messages faster than I can take them \(at most 2 a minute\)/)]);
  await say(BOB, "hello");
  expect(botSays()).toHaveLength(4);
  // Alice's three messages over the limit reached no model: the three calls are her two and Bob's one.
  expect(world.model.accepted()).toHaveLength(3);
  now += 30_000; // one message's worth refilled
  await say(ALICE, "six");
  expect(botSays()).toHaveLength(5);
  expect(world.model.accepted()).toHaveLength(4);
});
