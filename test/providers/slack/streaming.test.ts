// Slack shows a reply while it is written: in a thread with chat.startStream / appendStream / stopStream (the
// recipient named, as Slack requires outside DMs), in a DM outside threads by one message posted and updated. The
// real Bolt app against the fake Web API, the real gateway with the fake Messages API streaming.
import { expect, it } from "vitest";
import { holdStream, text } from "../../fakes/anthropic/server.js";
import { eventBody } from "../../fixtures/slack/load.js";
import { ALICE, BOT, CHANNEL, DM, TEAM, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();

it("streams a reply in a channel thread, then the streamed message is the reply, posted once", async () => {
  const { send, h } = await world.run({ streaming: true });
  const hold = holdStream(2);
  world.model.script({ ...text("Lisbon is lovely in **May**."), stream: hold.stream });
  const root = "1700000001.000100";
  world.known(CHANNEL, ALICE, `<@${BOT}> where to?`, root);
  await send(eventBody("app_mention", { ts: root, event_ts: root, text: `<@${BOT}> where to?` }));
  await hold.paused;
  await world.slack.waitFor("chat.startStream", () => world.slack.streams(CHANNEL).length === 1);
  const [started] = world.slack.streams(CHANNEL);
  // Partial text is visible before the model finishes, addressed to the user who asked.
  expect(started).toMatchObject({ status: "streaming", thread_ts: root, recipient_user_id: ALICE, recipient_team_id: TEAM });
  expect(started!.text.length).toBeGreaterThan(0);
  expect("Lisbon is lovely in **May**.".startsWith(started!.text)).toBe(true);
  expect(started!.text).not.toContain("May");
  hold.release();
  await h.gateway.idle();
  const [done] = world.slack.streams(CHANNEL);
  expect(done!.status).not.toBe("streaming");
  // The reply appears once: the streamed message carries it (formatted for Slack), and nothing else was posted.
  expect(world.slack.posted(CHANNEL).map((m) => m.text)).toEqual(["Lisbon is lovely in *May*."]);
  expect(world.slack.calls.filter((c) => c.method === "chat.postMessage")).toHaveLength(0);
});

it("in a DM outside threads it posts one message and updates it; with SLACK_STREAMING=off it posts the reply whole", async () => {
  const { send, h } = await world.run({ streaming: true });
  const hold = holdStream(1);
  world.model.script({ ...text("It is sunny today."), stream: hold.stream });
  const ts = "1700000002.000100";
  world.known(DM, ALICE, "weather?", ts);
  await send(eventBody("message.im", { ts, event_ts: ts, text: "weather?", channel: DM }));
  await hold.paused;
  await world.slack.waitFor("chat.postMessage", () => world.slack.posted(DM).some((m) => m.text.startsWith("It ")));
  expect(world.slack.posted(DM).find((m) => m.text.startsWith("It "))!.text).not.toContain("today");
  hold.release();
  await h.gateway.idle();
  expect(world.slack.posted(DM).filter((m) => m.text.includes("It ")).map((m) => m.text)).toEqual(["It is sunny today."]);
  await world.stopProviders();

  const off = await world.run({ streaming: false });
  world.model.script(text("Still sunny."));
  const ts2 = "1700000003.000100";
  world.known(DM, ALICE, "and now?", ts2);
  await off.send(eventBody("message.im", { ts: ts2, event_ts: ts2, text: "and now?", channel: DM }));
  await off.h.gateway.idle();
  expect(world.slack.calls.filter((c) => c.method === "chat.update" && JSON.stringify(c.params).includes("Still"))).toHaveLength(0);
  expect(world.slack.posted(DM).filter((m) => m.text === "Still sunny.")).toHaveLength(1);
});
