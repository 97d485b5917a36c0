// Recorded Slack payloads (test/fixtures/slack, each naming the documented example or reference test it follows)
// fed, signed, over HTTP into the real Bolt adapter, against the fake Web API, the real gateway and runtime and the
// strict fake Messages API. Each test is a behaviour the adapter's own fake did not show.
import { describe, expect, it } from "vitest";
import { GREETING, PROMPTS_TITLE, SUGGESTED_PROMPTS } from "../../../providers/slack/assistant.js";
import { slackSessionKey } from "../../../providers/slack/inbound.js";
import { png } from "../../helpers/files.js";
import { recordSubmits } from "../../helpers/submitted.js";
import { lastUserText, reply, text, toolUse, type MessagesRequest } from "../../fakes/anthropic/server.js";
import { commandBody, eventBody, interactionBody, recorded } from "../../fixtures/slack/load.js";
import { ALICE, BOB, BOT, CHANNEL, DM, TEAM, useSlackWorld } from "../../helpers/slack-world.js";

const world = useSlackWorld();

const PARTNER = "T0PARTNER";
const CAROL = "U0CAROL";

/** Answers every model call with the user's last text and how long the conversation's history is. */
const echo = (req: MessagesRequest) => text(`${lastUserText(req)} (history ${req.messages.length})`);

/** A top-level mention in the channel by Alice at `ts`, as the recorded app_mention. */
function mention(ts: string, words: string) {
  world.known(CHANNEL, ALICE, `<@${BOT}> ${words}`, ts);
  return eventBody("app_mention", { ts, event_ts: ts, text: `<@${BOT}> ${words}` }, { event_id: `Ev-${ts}` });
}

describe("direct messages", () => {
  it("answers a DM mention once although Slack sends it as message.im and as app_mention", async () => {
    const { send, h } = await world.run();
    world.model.fallback(echo);
    const { ts } = recorded("message.im").event as { ts: string };
    const words = `<@${BOT}> can you hear me?`;
    world.known(DM, ALICE, words, ts);
    await send(eventBody("app_mention", { channel: DM, ts, event_ts: ts, text: words }, { event_id: "EvMention" }));
    await send(eventBody("message.im", { text: words }, { event_id: "EvIm" }));
    await world.posts(1, DM);
    await h.gateway.idle();
    expect(world.slack.posted(DM).map((p) => [p.thread_ts, p.text])).toEqual([[undefined, "can you hear me? (history 1)"]]);
    expect(world.model.calls).toHaveLength(1);
  });

  it("a thread in a DM is its own conversation: the reply stays in it and the status goes on its root", async () => {
    const { send } = await world.run();
    world.model.fallback(echo);
    const top = recorded("message.im").event as { ts: string; text: string };
    world.known(DM, ALICE, top.text, top.ts);
    await send(eventBody("message.im"));
    await world.posts(1, DM);

    const replyTs = "1355517600.000100";
    world.known(DM, ALICE, "and in a thread?", replyTs, top.ts);
    await send(eventBody("message.im", { ts: replyTs, event_ts: replyTs, text: "and in a thread?", thread_ts: top.ts, parent_user_id: ALICE }, { event_id: "EvThread" }));
    const [first, second] = await world.posts(2, DM);
    expect(first).toMatchObject({ text: "Hello hello can you hear me? (history 1)" });
    expect(first!.thread_ts).toBeUndefined();
    expect(second).toMatchObject({ thread_ts: top.ts, text: "and in a thread? (history 1)" });
    await world.slack.waitFor("assistant.threads.setStatus", (p) => p.thread_ts === top.ts && p.status === "");
  });

  it("greets a new assistant thread with suggested prompts, as Bolt's Assistant does, and answers in that thread", async () => {
    const { send } = await world.run();
    const started = recorded("assistant_thread_started").event as { assistant_thread: { thread_ts: string } };
    const root = started.assistant_thread.thread_ts;
    world.known(DM, ALICE, "New chat", root);
    await send(eventBody("assistant_thread_started"));
    const [greeting] = await world.posts(1, DM);
    expect(greeting).toMatchObject({ thread_ts: root, text: GREETING });
    expect(greeting!.params.metadata).toEqual({ event_type: "assistant_thread_context", event_payload: { channel_id: CHANNEL, team_id: TEAM } });
    await world.slack.waitFor("assistant.threads.setSuggestedPrompts");
    expect(world.slack.suggestedPrompts()).toEqual([expect.objectContaining({ channel_id: DM, thread_ts: root, title: PROMPTS_TITLE, prompts: SUGGESTED_PROMPTS })]);

    // The user's message in the assistant thread (message.im with thread_ts, as bolt-python's user_message_event_body).
    world.model.fallback(echo);
    const ts = "1729999330.000100";
    world.known(DM, ALICE, "When was Slack released?", ts, root);
    await send(eventBody("message.im", { ts, event_ts: ts, text: "When was Slack released?", thread_ts: root, parent_user_id: ALICE }, { event_id: "EvAsk" }));
    const answers = await world.posts(2, DM);
    expect(answers[1]).toMatchObject({ thread_ts: root, text: "When was Slack released? (history 1)" });
    await world.slack.waitFor("assistant.threads.setStatus", (p) => p.status === "");
    expect(world.slack.statuses().map((s) => [s.thread_ts, s.status])).toEqual([
      [root, "is thinking…"],
      [root, ""],
    ]);
  });

  it("downloads a recorded upload's file with the bot token and hands it to the agents with the text", async () => {
    const { send, h } = await world.run();
    world.model.fallback(echo);
    const submitted = recordSubmits(h.gateway);
    const shared = recorded("file_share").event as { ts: string; text: string; files: Array<Record<string, unknown>> };
    // The recorded file object, served by the fake: its URLs point at the fake's file host instead of files.slack.com.
    const stored = world.slack.addFile(await png(1134, 362), "file.png", "image/png").object;
    const file = { ...shared.files[0], id: stored.id, url_private: stored.url_private, url_private_download: stored.url_private_download };
    world.known(DM, ALICE, shared.text, shared.ts);
    await send(eventBody("file_share", { files: [file] }));
    await world.posts(1, DM);
    await h.gateway.idle();
    // The text, then the image itself.
    const [seen] = world.model.accepted();
    expect((seen!.messages.at(-1)!.content as Array<{ type: string; text?: string }>).map((b) => b.text ?? b.type)).toEqual([
      "Hi there! What is in this picture?",
      expect.stringMatching(/^\[Attached image: file\.png \(image\/png, [\d.]+ KB\)\]$/),
      "image",
    ]);
    expect(submitted[0]).toMatchObject({ text: "Hi there! What is in this picture?", files: [{ ok: true, kind: "image", mime: "image/png", name: "file.png" }] });
  });

  it("ignores recorded edits, deletions and other apps' posts without calling the model", async () => {
    const { send, h } = await world.run();
    for (const name of ["message_changed", "message_deleted", "bot_message", "bot_message.classic"] as const) {
      expect((await send(eventBody(name, {}, { event_id: `Ev-${name}` }))).status).toBe(200);
    }
    await h.gateway.idle();
    expect(world.model.calls).toHaveLength(0);
    expect(world.slack.posted()).toEqual([]);
    expect(await h.store.requests.ofSession(slackSessionKey(TEAM, DM))).toEqual([]);
  });
});

describe("channel threads", () => {
  it("a thread_broadcast reply ('also send to channel') from the task's owner is a message like any other", async () => {
    const { send } = await world.run();
    const broadcast = recorded("thread_broadcast").event as { ts: string; thread_ts: string; text: string };
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Noted. Anything else?"));
    await send(mention(broadcast.thread_ts, "write in the thread"));
    await world.posts(1, CHANNEL);
    world.model.script(text("Friday it is."));
    world.known(CHANNEL, ALICE, broadcast.text, broadcast.ts, broadcast.thread_ts);
    await send(eventBody("thread_broadcast"));
    const posts = await world.posts(2, CHANNEL);
    expect(lastUserText(world.model.accepted()[2]!)).toBe(broadcast.text);
    expect(posts.map((p) => [p.thread_ts, p.text])).toEqual([
      [broadcast.thread_ts, "*🧩 interview*\nNoted. Anything else?"],
      [broadcast.thread_ts, "*🧩 interview*\nFriday it is."],
    ]);
  });

  it("the owner goes on in the bot's thread without a mention once the task is done; others' chatter stays ignored", async () => {
    const { send, h } = await world.run();
    world.model.fallback(echo);
    const threadReply = recorded("message.channels-thread").event as { ts: string; thread_ts: string; text: string };
    const root = threadReply.thread_ts;
    await send(mention(root, "when was Slack released?"));
    await world.posts(1, CHANNEL);
    await h.gateway.idle();
    const key = slackSessionKey(TEAM, CHANNEL, root);
    expect((await h.store.tasks.ofSession(key)).map((t) => t.status)).toEqual(["completed"]);

    world.known(CHANNEL, ALICE, threadReply.text, threadReply.ts, root);
    await send(eventBody("message.channels-thread"));
    const posts = await world.posts(2, CHANNEL);
    expect(posts[1]).toMatchObject({ thread_ts: root, text: "When was Slack released? (history 3)" });

    const bobTs = "1726133800.000100";
    world.known(CHANNEL, BOB, "lunch?", bobTs, root);
    await send(eventBody("message.channels-thread", { ts: bobTs, event_ts: bobTs, user: BOB, text: "lunch?" }, { event_id: "EvBob" }));
    await h.gateway.idle();
    expect(world.model.calls).toHaveLength(2);
    expect(world.slack.ephemerals()).toEqual([]);
  });
});

describe("Slack Connect and Enterprise Grid", () => {
  it("an external user's mention in a thread joins that thread's conversation, as a person of their own workspace", async () => {
    const { send, h } = await world.run();
    world.model.fallback(echo);
    const carol = recorded("slack_connect").event as { ts: string; thread_ts: string; text: string };
    const root = carol.thread_ts;
    await send(mention(root, "plan the offsite"));
    await world.posts(1, CHANNEL);
    await h.gateway.idle();

    world.known(CHANNEL, CAROL, carol.text, carol.ts, root);
    await send(eventBody("slack_connect"));
    const posts = await world.posts(2, CHANNEL);
    expect(posts.map((p) => [p.thread_ts, p.text])).toEqual([
      [root, "plan the offsite (history 1)"],
      [root, "can I add something? (history 3)"],
    ]);
    expect((await h.store.tasks.ofSession(slackSessionKey(TEAM, CHANNEL, root))).map((t) => t.ownerId)).toEqual([`slack:${TEAM}:${ALICE}`, `slack:${PARTNER}:${CAROL}`]);
    expect(await h.store.requests.ofSession(slackSessionKey(PARTNER, CHANNEL, root))).toEqual([]);
  });

  it("the same user id from the partner workspace is someone else: it cannot take over the owner's running task", async () => {
    const { send, h } = await world.run();
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Alice, where to?"));
    const carol = recorded("slack_connect").event as { ts: string; thread_ts: string; text: string };
    await send(mention(carol.thread_ts, "plan the offsite"));
    await world.posts(1, CHANNEL);

    // U0ALICE of the partner organisation: same raw id, other person.
    world.known(CHANNEL, ALICE, carol.text, carol.ts, carol.thread_ts);
    await send(eventBody("slack_connect", { user: ALICE }));
    await world.slack.waitFor("chat.postEphemeral");
    await h.gateway.idle();
    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({ user: ALICE, thread_ts: carol.thread_ts, text: expect.stringMatching(/^Sorry, I'm in the middle of a task/) }),
    ]);
    expect(world.model.calls).toHaveLength(2);
  });
});

describe("requests nobody listens for", () => {
  it("acknowledges a click on a button Switchboard never posted at once, without Bolt's 3-second warning", async () => {
    const { send } = await world.run();
    const answer = await send(interactionBody("block_actions"));
    expect(answer.status).toBe(200);
  });

  it("answers a slash command it does not know at once, privately, with a hint", async () => {
    const { send } = await world.run();
    const answer = await send(commandBody("slash_command"));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ response_type: "ephemeral", text: "I don't know /hello-world. Try /switchboard cancel | status | reset." });
  });

  it("answers Slack's recorded URL check with its challenge", async () => {
    const { send } = await world.run();
    const answer = await send(eventBody("url_verification"));
    expect(answer.status).toBe(200);
    expect(answer.body).toContain((recorded("url_verification") as unknown as { challenge: string }).challenge);
  });
});

describe("what Slack shows", () => {
  it("escapes &, < and > in code, so a code span neither pings the channel nor loses its generics", async () => {
    const { send } = await world.run();
    world.model.script(text("Declare it as `Map<String, List<Integer>>`, and never write `<!channel>` in a bot reply."));
    const { ts } = recorded("message.im").event as { ts: string };
    world.known(DM, ALICE, "types?", ts);
    await send(eventBody("message.im", { text: "types?" }));
    const [answer] = await world.posts(1, DM);
    expect(answer!.text).toBe("Declare it as `Map&lt;String, List&lt;Integer&gt;&gt;`, and never write `&lt;!channel&gt;` in a bot reply.");
  });
});
