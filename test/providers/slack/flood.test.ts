// Flood control through Slack (USER_MESSAGES_PER_MINUTE): the real Bolt app against the fake Web API. In a channel a
// member who writes faster than the limit is told once, in a message only they can see, then dropped without a word;
// another member is answered as before.
import { expect, it } from "vitest";
import type { SubmitResult } from "../../../src/gateway/types.js";
import { text } from "../../fakes/anthropic/server.js";
import { eventCallback, sendSigned } from "../../fakes/slack/events.js";
import { ALICE, BOB, CHANNEL, nthPost, SECRET, said, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();

it("in a channel, the member over the limit gets one ephemeral notice, then silence; another member is still answered", async () => {
  const now = 1_700_000_000_000;
  const { h, url } = await world.boot({}, [], { userMessagesPerMinute: 2, clock: { now: () => now } });
  await h.gateway.recover();
  world.model.fallback(() => text("ok"));
  // What the gateway answered each message, in the order the bot handed them in.
  const results: SubmitResult[] = [];
  const submitted: Array<() => void> = [];
  const submit = h.gateway.submit.bind(h.gateway);
  h.gateway.submit = async (message) => {
    const result = await submit(message);
    results.push(result);
    submitted.shift()?.();
    return result;
  };
  const mention = async (user: string, words: string) => {
    const handed = new Promise<void>((resolve) => submitted.push(resolve));
    const { event } = said(world.slack, { channel: CHANNEL, user, text: `<@${world.slack.botUserId}> ${words}`, mention: true });
    await sendSigned(url, eventCallback(event, { teamId: world.slack.teamId }), "application/json", { secret: SECRET });
    await handed;
  };

  await mention(ALICE, "one");
  await mention(ALICE, "two");
  await mention(ALICE, "three");
  await world.slack.waitFor("chat.postEphemeral");
  await mention(ALICE, "four");
  await mention(BOB, "hello");
  await nthPost(world.slack, 3);
  await h.gateway.idle();
  expect(results.map((r) => (r.status === "limited" ? `limited${r.quiet ? " quietly" : ""}` : r.status))).toEqual([
    "accepted",
    "accepted",
    "limited",
    "limited quietly",
    "accepted",
  ]);
  expect(world.slack.ephemerals(CHANNEL)).toEqual([
    expect.objectContaining({ user: ALICE, text: expect.stringMatching(/^You're sending messages faster than I can take them \(at most 2 a minute\)/) }),
  ]);
  expect(world.slack.posted(CHANNEL).map((p) => p.text)).toEqual(["ok", "ok", "ok"]);
  expect(world.model.accepted()).toHaveLength(3);
});
