// The daily quotas through Telegram: real grammY long polling against the fake Bot API, the quotas' clock moved by
// hand. In a group, a member over USER_DAILY_MESSAGES is told once in the chat which limit and when it resets, then
// refused without a word; the other members are answered; at the member's midnight they are answered again.
import { expect, it } from "vitest";
import { text } from "../../fakes/anthropic/server.js";
import { ALICE, BOB, useTelegramWorld } from "../../helpers/telegram-world.js";

const GROUP = -1001234;
const world = useTelegramWorld();

it("in a group, the member over the daily limit hears which limit and when it resets once; the others go on", async () => {
  let now = Date.UTC(2026, 10, 27, 20, 0);
  const alice = `telegram:${ALICE}`;
  const { h } = await world.boot({}, [], {
    quotas: { settings: { userDailyMessages: 2 }, now: () => now, zoneOf: async (user) => (user === alice ? "Asia/Tokyo" : null) },
  });
  world.model.fallback((req) => text(`answer ${req.messages.length}`));
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
  // 20:00 UTC is 05:00 on Saturday in Tokyo: her day resets at Sunday's midnight there, 19 hours on.
  expect(botSays().slice(2)).toEqual([
    "You've sent 2 messages today, the daily limit (USER_DAILY_MESSAGES), so I can't take more. It resets at 00:00 on Sun 29 Nov (Asia/Tokyo), in 19 h 0 min.",
  ]);
  await say(BOB, "hello");
  expect(botSays()).toHaveLength(4);
  expect(world.model.accepted()).toHaveLength(3);
  now = Date.UTC(2026, 10, 28, 15, 0); // midnight in Tokyo
  await say(ALICE, "five");
  expect(botSays()).toHaveLength(5);
  expect(world.model.accepted()).toHaveLength(4);
});
