// send_file through the whole path on Slack: real Bolt (signed events over HTTP), the scripted model calls the tool,
// the outbox hands the committed file to the provider, and the real Web API client uploads it the files v2 way
// (files.getUploadURLExternal → upload → files.completeUploadExternal) into the conversation's thread.
import { describe, expect, it } from "vitest";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { eventCallback } from "../../fakes/slack/events.js";
import { ALICE, CHANNEL, nthPost, said, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();

describe("send_file on Slack", () => {
  it("uploads the agent's file into the thread it was asked in, the caption as its comment, before the answer", async () => {
    const { send } = await world.run({}, [], { sendFile: true });
    world.model.script(reply(toolUse("send_file", { filename: "sales.csv", content: "month,total\nJan,3\n", caption: "Sales by month" })), text("Here you go."));
    const root = said(world.slack, { channel: CHANNEL, user: ALICE, text: `<@${world.slack.botUserId}> the sales table please`, mention: true });
    await send(eventCallback(root.event, { teamId: world.slack.teamId }));
    const answer = await nthPost(world.slack, 1);
    expect(answer).toMatchObject({ text: "Here you go.", thread_ts: root.ts });
    const shared = world.slack.shared(CHANNEL);
    expect(shared.map((f) => ({ thread_ts: f.thread_ts, filename: f.filename, initial_comment: f.initial_comment, bytes: f.bytes.toString() }))).toEqual([
      { thread_ts: root.ts, filename: "sales.csv", initial_comment: "Sales by month", bytes: "month,total\nJan,3\n" },
    ]);
    const methods = world.slack.calls.map((c) => c.method);
    expect(methods.filter((m) => m.startsWith("files."))).toEqual(["files.getUploadURLExternal", "files.completeUploadExternal"]);
    // The file was shared before the answer was posted.
    expect(methods.indexOf("files.completeUploadExternal")).toBeLessThan(methods.indexOf("chat.postMessage"));
  });
});
