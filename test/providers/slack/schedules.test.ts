// Scheduled jobs on Slack through a real Bolt app and the fake Web API: a job scheduled in a channel thread fires
// once in that thread, as the run of the user who scheduled it.
import { describe, expect, it } from "vitest";
import { lastUserText, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { eventCallback, sendSigned } from "../../fakes/slack/events.js";
import { ALICE, CHANNEL, nthPost, SECRET, said, useSlackWorld } from "../../helpers/slack-world.js";
import { manualTimeouts } from "../../helpers/timers.js";

const world = useSlackWorld();

describe("scheduled jobs on Slack", () => {
  it("a one-shot job scheduled in a channel thread fires once in that thread", async () => {
    const clock = { t: Date.parse("2026-11-27T10:00:00Z") };
    const timeouts = manualTimeouts();
    const { h, url } = await world.boot({}, [], { schedules: { now: () => clock.t, timers: timeouts.timers } });
    await h.gateway.recover();
    const send = (event: Record<string, unknown>) => sendSigned(url, eventCallback(event, { teamId: world.slack.teamId }), "application/json", { secret: SECRET });

    world.model.script(reply(toolUse("schedule", { instruction: "Ask the thread whether the deploy went out", at: "2026-11-27T15:30" })), text("I'll ask at 15:30."));
    const root = said(world.slack, { channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> check on the deploy at 15:30`, mention: true });
    await send(root.event);
    expect(await nthPost(world.slack, 1)).toMatchObject({ thread_ts: root.ts, text: "I'll ask at 15:30." });
    const [job] = await h.store.schedules.all(10);
    expect(job).toMatchObject({ ownerId: expect.stringContaining(ALICE), timezone: "UTC", nextDue: Date.parse("2026-11-27T15:30:00Z") });

    clock.t = Date.parse("2026-11-27T15:30:00Z");
    world.model.script(text("Did the deploy go out?"));
    h.scheduler!.start();
    await h.scheduler!.idle();
    expect(await nthPost(world.slack, 2)).toMatchObject({ thread_ts: root.ts, text: "Did the deploy go out?" });
    expect(lastUserText(world.model.accepted()[2]!)).toContain("Ask the thread whether the deploy went out");
    timeouts.fireAll();
    await h.scheduler!.idle();
    await h.gateway.idle();
    expect(world.slack.posted(CHANNEL)).toHaveLength(2);
  });
});
