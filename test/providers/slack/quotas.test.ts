// The daily quotas through Slack: the real Bolt app against the fake Web API. In a channel, a member over
// USER_DAILY_MESSAGES is told once which limit and when it resets, then refused without a word; another member is
// answered as before.
import { expect, it } from "vitest";
import { text } from "../../fakes/anthropic/server.js";
import { eventCallback, sendSigned } from "../../fakes/slack/events.js";
import { ALICE, BOB, CHANNEL, SECRET, said, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();

it("in a channel, the member over the daily limit is told once with the reset time, then silence; another member goes on", async () => {
  const now = Date.UTC(2026, 10, 27, 20, 0);
  const { h, url } = await world.boot({}, [], { quotas: { settings: { userDailyMessages: 1 }, now: () => now } });
  await h.gateway.recover();
  world.model.fallback(() => text("ok"));
  const submitted: Array<() => void> = [];
  const submit = h.gateway.submit.bind(h.gateway);
  h.gateway.submit = async (message) => {
    const result = await submit(message);
    submitted.shift()?.();
    return result;
  };
  const mention = async (user: string, words: string) => {
    const handed = new Promise<void>((resolve) => submitted.push(resolve));
    const { event } = said(world.slack, { channel: CHANNEL, user, text: `<@${world.slack.botUserId}> ${words}`, mention: true });
    await sendSigned(url, eventCallback(event, { teamId: world.slack.teamId }), "application/json", { secret: SECRET });
    await handed;
    await h.gateway.idle();
  };

  await mention(ALICE, "one");
  await mention(ALICE, "two");
  await mention(ALICE, "three");
  await mention(BOB, "hello");
  expect(world.slack.posted(CHANNEL).map((p) => p.text)).toEqual([
    "ok",
    expect.stringMatching(
      /^You've sent 1 message today, the daily limit \(USER_DAILY_MESSAGES\), so I can't take more\. It resets at 00:00 on Sat 28 Nov \(UTC\), in 4 h 0 min\.$/,
    ),
    "ok",
  ]);
  expect(world.model.accepted()).toHaveLength(2);
});
