// Scheduled jobs on Slack through a real Bolt app and the fake Web API: a job scheduled in a channel thread fires
// once in that thread, as the run of the user who scheduled it.
import { describe, expect, it } from "vitest";
import { lastUserText, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { eventCallback, sendSigned } from "../../fakes/slack/events.js";
import { ALICE, CHANNEL, nthPost, SECRET, said, useSlackWorld } from "../../helpers/slack-world.js";
import { manualTimeouts } from "../../helpers/timers.js";
import { allowlistAdmission } from "../../../src/schedules/admission.js";

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

  it("a job in a channel taken off SLACK_ALLOWED_CHANNELS since scheduling is paused at its due time, not run", async () => {
    const clock = { t: Date.parse("2026-11-27T10:00:00Z") };
    const timeouts = manualTimeouts();
    // The operator's lists, read at each check (as a restart with the new values would read them).
    const channels = [CHANNEL];
    const admits = allowlistAdmission({ telegramUsers: [], slackUsers: [], slackChannels: channels });
    const { h, url } = await world.boot({ allowedChannels: channels }, [], { schedules: { now: () => clock.t, timers: timeouts.timers, admits } });
    await h.gateway.recover();
    const send = (event: Record<string, unknown>) => sendSigned(url, eventCallback(event, { teamId: world.slack.teamId }), "application/json", { secret: SECRET });
    world.model.script(reply(toolUse("schedule", { instruction: "Post the standup reminder", cron: "0 11 * * *" })), text("Every day at 11."));
    const root = said(world.slack, { channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> standup reminder every day at 11`, mention: true });
    await send(root.event);
    expect(await nthPost(world.slack, 1)).toMatchObject({ thread_ts: root.ts, text: "Every day at 11." });
    const [job] = await h.store.schedules.all(10);

    channels.splice(0, channels.length, "C0OTHER");
    clock.t = Date.parse("2026-11-27T11:00:00Z");
    h.scheduler!.start();
    await h.scheduler!.idle();
    await h.gateway.idle();
    expect(await h.store.schedules.get(job!.id)).toMatchObject({ status: "paused", lastResult: `paused: its channel ${CHANNEL} is no longer on SLACK_ALLOWED_CHANNELS` });
    expect(world.model.accepted()).toHaveLength(2);
    expect(world.slack.posted(CHANNEL)).toHaveLength(1);
  });
});
