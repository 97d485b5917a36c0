// The order at Slack's door: an event Slack retries (X-Slack-Retry-Num, api.slack.com/apis/events-api#retries) is
// recognised as a message already stored before its files are fetched, also by a process that did not see the first
// delivery (a restart, another replica); a flooding member's files past the limit are not fetched either. Real Bolt
// (signed events over HTTP) against the fake's file host, with the real gateway and runtime.
import { describe, expect, it } from "vitest";
import type { SubmitResult } from "../../../src/gateway/types.js";
import { systemTimers } from "../../../src/runtime/deps.js";
import { text } from "../../fakes/anthropic/server.js";
import { eventBody } from "../../fixtures/slack/load.js";
import { png } from "../../helpers/files.js";
import { ALICE, DM, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();
let nextTs = 1_700_000_300;

/** A bot on the test's database (the same one after a restart); `send` resolves with what the gateway answered. */
async function boot(perMinute?: number) {
  const now = 1_700_000_000_000;
  const started = await world.run({ fileTimers: systemTimers, downloadBackoffMs: 1 }, [], {
    ...(perMinute ? { userMessagesPerMinute: perMinute } : {}),
    clock: { now: () => now },
  });
  world.model.fallback(() => text("seen"));
  const waiting: Array<(result: SubmitResult) => void> = [];
  const submit = started.h.gateway.submit.bind(started.h.gateway);
  started.h.gateway.submit = async (message) => {
    const result = await submit(message);
    waiting.shift()?.(result);
    return result;
  };
  const send = async (body: string, retryNum?: number): Promise<SubmitResult> => {
    const handed = new Promise<SubmitResult>((resolve) => waiting.push(resolve));
    await started.send(body, retryNum === undefined ? {} : { retryNum, retryReason: "http_timeout" });
    const result = await handed;
    await started.h.gateway.idle();
    return result;
  };
  return { ...started, send };
}

/** A file_share message in the DM, as Slack's Events API sends it (the recorded fixture with these fields). */
async function photoShare(words: string) {
  const file = world.slack.addFile(await png(40, 30), "whiteboard.png", "image/png");
  const ts = `${nextTs++}.000100`;
  world.known(DM, ALICE, words, ts);
  return { id: file.id, body: eventBody("file_share", { ts, event_ts: ts, text: words, files: [file.object] }, { event_id: `Ev${ts}` }) };
}

describe("Slack's door: duplicates first, then the flood limit, then downloads", () => {
  it("a retry of a file_share event reaching a restarted process downloads nothing again", async () => {
    const first = await boot();
    const share = await photoShare("what is on it?");
    expect((await first.send(share.body)).status).toBe("accepted");
    await world.posts(1, DM);
    expect(world.slack.downloads()).toEqual([share.id]);
    await world.stopProviders();

    const second = await boot();
    expect((await second.send(share.body, 1)).status).toBe("duplicate");
    expect(world.slack.downloads()).toEqual([share.id]);
    expect(world.slack.posted(DM).map((p) => p.text)).toEqual(["seen"]);
    expect(world.model.calls).toHaveLength(1);
  });

  it("a flooding member's files past the limit are not downloaded", async () => {
    const { send } = await boot(1);
    const shares = [await photoShare("one"), await photoShare("two"), await photoShare("three")];
    const results: string[] = [];
    for (const share of shares) results.push((await send(share.body)).status);
    expect(results).toEqual(["accepted", "limited", "limited"]);
    expect(world.slack.downloads()).toEqual([shares[0]!.id]);
  });
});
