// A Slack channel thread has one owner from the moment the first message is accepted, not from the first commit:
// the owner's first model call is held open so that another member's messages and a stop arrive in that window.
// A real Bolt app receiving signed events, the fake Web API, the real gateway and runtime, the strict fake model.
import { describe, expect, it } from "vitest";
import { lastUserText, text, type FakeReply } from "../fakes/anthropic/server.js";
import { eventCallback, sendSigned, slashCommand } from "../fakes/slack/events.js";
import { heldStep } from "../helpers/deferred.js";
import { ALICE, BOB, CHANNEL, SECRET, TEAM, nthPost as nthPostIn, said as saidIn, useSlackWorld } from "../helpers/slack-world.js";

const BUSY = /^Sorry, I'm in the middle of a task for someone else in this chat/;
const world = useSlackWorld();

async function boot() {
  const { h, url } = await world.boot();
  await h.gateway.recover();
  const send = (event: Record<string, unknown>) => sendSigned(url, eventCallback(event, { teamId: world.slack.teamId }), "application/json", { secret: SECRET });
  const slash = (user: string, words: string) =>
    sendSigned(
      url,
      slashCommand({ command: "/switchboard", text: words, user_id: user, channel_id: CHANNEL, team_id: world.slack.teamId, response_url: world.slack.responseUrl() }),
      "application/x-www-form-urlencoded",
      { secret: SECRET },
    );
  return { h, send, slash };
}

const said = (o: Parameters<typeof saidIn>[1]) => saidIn(world.slack, o);
const nthPost = (n: number) => nthPostIn(world.slack, n, CHANNEL);
const mention = (words: string) => `<@${world.slack.botUserId}> ${words}`;

describe("a channel thread before its first commit", () => {
  it("refuses another member's message and stop in private while the owner's first model call runs", async () => {
    const { h, send } = await boot();
    const first = heldStep<FakeReply>();
    world.model.script(first.step);
    const root = said({ channel: CHANNEL, user: ALICE, text: mention("plan the offsite"), mention: true });
    await send(root.event);
    await first.entered;

    await send(said({ channel: CHANNEL, user: BOB, text: mention("also order pizza"), thread: root.ts, mention: true }).event);
    await send(said({ channel: CHANNEL, user: BOB, text: mention("stop"), thread: root.ts, mention: true }).event);
    await world.slack.waitFor("chat.postEphemeral", () => world.slack.ephemerals(CHANNEL).length >= 2);
    expect(world.slack.ephemerals(CHANNEL).map((e) => [e.user, e.thread_ts, e.text])).toEqual([
      [BOB, root.ts, expect.stringMatching(BUSY)],
      [BOB, root.ts, expect.stringMatching(BUSY)],
    ]);

    first.release(text("Which week, Alice?"));
    expect(await nthPost(1)).toMatchObject({ thread_ts: root.ts, text: "Which week, Alice?" });
    await h.gateway.idle();
    const key = `slack:${TEAM}:${CHANNEL}:thread:${root.ts}`;
    expect(world.model.accepted().map(lastUserText)).toEqual(["plan the offsite"]);
    expect((await h.store.requests.ofSession(key)).map((r) => [r.userId, r.status])).toEqual([[`slack:${TEAM}:${ALICE}`, "done"]]);
    expect((await h.store.tasks.ofSession(key)).map((t) => [t.ownerId, t.status])).toEqual([[`slack:${TEAM}:${ALICE}`, "completed"]]);
    expect(world.slack.posted(CHANNEL)).toHaveLength(1);
  });

  it("sends the owner's /switchboard cancel in that window to her thread, and another member's to the channel, where nothing runs", async () => {
    const { h, send, slash } = await boot();
    const first = heldStep<FakeReply>();
    world.model.script(first.step);
    const root = said({ channel: CHANNEL, user: ALICE, text: mention("draft the agenda"), mention: true });
    await send(root.event);
    await first.entered;

    // Bob has nothing running in the channel: his cancel reaches the channel itself, where nothing runs.
    expect((await slash(BOB, "cancel")).status).toBe(200);
    expect(await nthPost(1)).toMatchObject({ text: "Nothing to cancel: no task is running." });
    expect(world.slack.posted(CHANNEL)[0]!.thread_ts).toBeUndefined();

    expect((await slash(ALICE, "cancel")).status).toBe(200);
    expect(await nthPost(2)).toMatchObject({ thread_ts: root.ts, text: "Cancelled." });
    await h.gateway.idle();
    expect(await h.store.requests.unfinished()).toEqual([]);
    first.release(text("never shown"));
    expect(world.model.accepted().map(lastUserText)).toEqual(["draft the agenda"]);
  });
});
