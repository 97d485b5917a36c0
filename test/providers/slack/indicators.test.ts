// "Working on it" in Slack, end to end: the assistant thread status or a 👀 reaction, per conversation, remembered
// through the gateway so a restart takes back what a stopped process left and a resumed turn shows it again.
// Signed events over HTTP into the real Bolt adapter, the fake Web API, the real gateway, runtime and SQLite store.
import { describe, expect, it } from "vitest";
import { slackSessionKey } from "../../../providers/slack/inbound.js";
import { text } from "../../fakes/anthropic/server.js";
import { eventBody, recorded } from "../../fixtures/slack/load.js";
import { heldStep } from "../../helpers/deferred.js";
import { ALICE, BOT, CHANNEL, DM, TEAM, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();

function mention(ts: string, words = "hi") {
  world.known(CHANNEL, ALICE, `<@${BOT}> ${words}`, ts);
  return eventBody("app_mention", { ts, event_ts: ts, text: `<@${BOT}> ${words}` }, { event_id: `Ev-${ts}` });
}

/** Alice's DM message at `ts`, as the recorded message.im. */
function dm(ts: string, words = "hi") {
  world.known(DM, ALICE, words, ts);
  return eventBody("message.im", { ts, event_ts: ts, text: words }, { event_id: `Ev-${ts}` });
}

const log = () => world.slack.reactionLog().map((r) => `${r.op} ${r.name} ${r.timestamp}`);

describe("assistant thread status", () => {
  it("a setStatus that fails for one thread leaves the status on for the other threads", async () => {
    const { send, h } = await world.run();
    world.model.fallback(() => text("ok"));
    const [a, b] = ["1700000001.000100", "1700000002.000100"];
    // Slack answers channel_not_found for thread A only (e.g. a thread the app may not set a status in).
    world.slack.failWhen("assistant.threads.setStatus", (p) => (p.thread_ts === a ? { error: "channel_not_found" } : null));
    await send(mention(a));
    await world.posts(1, CHANNEL);
    await h.gateway.idle();
    await world.slack.waitFor("reactions.remove");
    expect(log()).toEqual([`add eyes ${a}`, `remove eyes ${a}`]);

    await send(mention(b));
    await world.posts(2, CHANNEL);
    await h.gateway.idle();
    await world.slack.waitFor("assistant.threads.setStatus", (p) => p.thread_ts === b && p.status === "");
    expect(world.slack.statuses().map((s) => [s.thread_ts, s.status])).toEqual([
      [b, "is thinking…"],
      [b, ""],
    ]);
    expect(log()).toEqual([`add eyes ${a}`, `remove eyes ${a}`]);
  });

  it("missing_scope switches the status off for the whole app: every conversation gets the 👀 reaction", async () => {
    const { send, h } = await world.run();
    world.model.fallback(() => text("ok"));
    world.slack.setStatusAvailable(false); // missing_scope, needed: assistant:write
    const [a, b] = ["1700000001.000100", "1700000002.000100"];
    await send(mention(a));
    await world.posts(1, CHANNEL);
    await h.gateway.idle();
    world.slack.setStatusAvailable(true);
    await send(mention(b));
    await world.posts(2, CHANNEL);
    await h.gateway.idle();
    await world.slack.waitFor("reactions.remove", (p) => p.timestamp === b);
    expect(world.slack.calls.filter((c) => c.method === "assistant.threads.setStatus")).toHaveLength(1);
    expect(log()).toEqual([`add eyes ${a}`, `remove eyes ${a}`, `add eyes ${b}`, `remove eyes ${b}`]);
  });
});

describe("indicators across a restart", () => {
  it("remembers the 👀 while a turn runs and forgets it once the reaction is gone", async () => {
    const { send, h } = await world.run();
    world.slack.setStatusAvailable(false);
    const held = heldStep<ReturnType<typeof text>>();
    world.model.script(held.step);
    const ts = (recorded("message.im").event as { ts: string }).ts;
    await send(dm(ts));
    await held.entered;
    await world.slack.waitFor("reactions.add");
    expect(await h.store.indicators.list("slack")).toEqual([
      { sessionKey: slackSessionKey(TEAM, DM), data: JSON.stringify({ kind: "reaction", channel: DM, ts, name: "eyes" }) },
    ]);
    held.release(text("done"));
    await world.posts(1, DM);
    await h.gateway.idle();
    await world.slack.waitFor("reactions.remove");
    await expect.poll(() => h.store.indicators.list("slack")).toEqual([]);
  });

  it("takes back the 👀 a stopped process left, and the resumed turn shows it again until it answers", async () => {
    const first = await world.run();
    world.slack.setStatusAvailable(false);
    const held = heldStep<ReturnType<typeof text>>();
    world.model.script(held.step);
    const ts = (recorded("message.im").event as { ts: string }).ts;
    await first.send(dm(ts, "long job"));
    await held.entered;
    await world.slack.waitFor("reactions.add");
    // The process stops mid-turn and cannot take its reaction back (Slack is unreachable for that call).
    world.slack.failNext("reactions.remove", { status: 503 });
    await world.stopProviders();
    expect(world.slack.reactions(DM, ts)).toEqual(["eyes"]);

    world.model.script(text("Done at last."));
    const second = await world.run();
    const [answer] = await world.posts(1, DM);
    expect(answer!.text).toBe("Done at last.");
    await second.h.gateway.idle();
    await expect.poll(() => log()).toEqual([`add eyes ${ts}`, `remove eyes ${ts}`, `add eyes ${ts}`, `remove eyes ${ts}`]);
    expect(world.slack.reactions(DM, ts)).toEqual([]);
    await expect.poll(() => second.h.store.indicators.list("slack")).toEqual([]);
  });

  it("clears an assistant status a stopped process left, and the resumed turn sets it again", async () => {
    const first = await world.run();
    const held = heldStep<ReturnType<typeof text>>();
    world.model.script(held.step);
    const root = "1700000001.000100";
    await first.send(mention(root, "long job"));
    await held.entered;
    await world.slack.waitFor("assistant.threads.setStatus");
    world.slack.failNext("assistant.threads.setStatus", { status: 503 });
    await world.stopProviders();

    world.model.script(text("Done at last."));
    const second = await world.run();
    await world.posts(1, CHANNEL);
    await second.h.gateway.idle();
    await expect
      .poll(() => world.slack.statuses().map((s) => [s.thread_ts, s.status]))
      .toEqual([
        [root, "is thinking…"],
        [root, ""],
        [root, "is thinking…"],
        [root, ""],
      ]);
    await expect.poll(() => second.h.store.indicators.list("slack")).toEqual([]);
  });
});
