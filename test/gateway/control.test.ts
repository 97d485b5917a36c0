// Owner rules and commands that must not wait behind a running turn.
import { afterEach, describe, expect, it } from "vitest";
import { lastUserText, reply, text, toolUse, type FakeReply } from "../fakes/anthropic/server.js";
import { deferred, heldStep } from "../helpers/deferred.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

describe("commands during a running turn", () => {
  it("/status answers at once and /cancel aborts the turn instead of waiting behind it", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    const modelCalled = deferred<void>();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), () => {
      modelCalled.resolve();
      return { hang: true };
    });
    await h.gateway.submit({ sessionKey: "console:t", messageId: "1", userId: "alice", text: "go" });
    await modelCalled.promise;

    await h.gateway.submit({ sessionKey: "console:t", messageId: "2", userId: "alice", text: "/status" });
    const status = await h.delivered((m) => m.text.startsWith("main →"));
    expect(status.text).toMatch(/^main → skill:interview \(iteration 1\/25\)/);

    await h.gateway.submit({ sessionKey: "console:t", messageId: "3", userId: "alice", text: "/cancel" });
    await h.gateway.idle();
    expect(h.seen.map((m) => m.text).at(-1)).toBe("Cancelled. Stopped: skill:interview.");
    // The cut-off turn is closed, so a restart will not resume it.
    expect(await h.store.requests.unfinished()).toEqual([]);
    h.fake.script(text("Ready."));
    expect(await h.say("new question")).toEqual(["main: Ready."]);
    expect(h.fake.rejected()).toEqual([]);
  });
});

describe("owner rules", () => {
  it("only the task's owner talks to the running agent; others are refused, group chatter is ignored", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), text("Q1?"));
    await h.send("go", { user: "alice" });

    const bob = await h.gateway.submit({ sessionKey: "console:t", messageId: "b1", userId: "bob", text: "@bot hello" });
    expect(bob).toMatchObject({ status: "refused" });
    expect(await h.gateway.submit({ sessionKey: "console:t", messageId: "b2", userId: "bob", text: "chatter", addressed: false })).toEqual({
      status: "ignored",
    });
    expect(await h.gateway.submit({ sessionKey: "console:t", messageId: "b3", userId: "bob", text: "/cancel" })).toMatchObject({
      status: "refused",
    });
    expect(await h.say("/status", { user: "bob" })).toEqual([expect.stringMatching(/^switchboard: main → skill:interview/)]);

    // The owner's unaddressed message still reaches the agent.
    await h.gateway.submit({ sessionKey: "console:t", messageId: "a2", userId: "alice", text: "answer", addressed: false });
    h.fake.script(text("Q2?"));
    await h.gateway.idle();
    expect(h.seen.at(-1)?.text).toBe("Q2?");
  });

  it("with no task running, unaddressed messages are ignored and addressed ones start a task", async () => {
    h = await startHarness();
    expect(await h.gateway.submit({ sessionKey: "console:g", messageId: "1", userId: "bob", text: "lunch?", addressed: false })).toEqual({
      status: "ignored",
    });
    h.fake.script(text("Hi Bob."));
    expect(await h.say("hi bot", { session: "g", user: "bob" })).toEqual(["main: Hi Bob."]);
    expect(h.fake.calls).toHaveLength(1);
  });
});

describe("owner rules when a stored request runs", () => {
  it("a member's message and /cancel stored before someone else owned the chat are refused when they run, and leave the owner's task alone", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    const first = heldStep<FakeReply>();
    h.fake.script(first.step, text("Where to, Alice?"));
    await h.gateway.submit({ sessionKey: "console:g", messageId: "a1", userId: "alice", text: "plan a trip" });
    await first.entered;
    // Stored as a version without the owner rule stored them (or a race let them in): nothing checked them yet.
    await h.store.requests.insert({ id: "req-b1", sessionKey: "console:g", externalId: "b1", kind: "message", userId: "bob", text: "book me a flight" });
    await h.store.requests.insert({ id: "req-b2", sessionKey: "console:g", externalId: "b2", kind: "command", userId: "bob", text: "/cancel" });
    await h.gateway.poll();
    first.release(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })));
    await h.gateway.idle();
    const busy = expect.stringMatching(/^Sorry, I'm in the middle of a task for someone else/);
    expect(h.seen.map((m) => [m.requestId, m.text])).toEqual([
      ["req_1", "Where to, Alice?"],
      ["req-b2", busy],
      ["req-b1", busy],
    ]);
    expect(h.fake.accepted().map(lastUserText)).toEqual(["plan a trip", "plan a trip"]);
    expect((await h.store.requests.ofSession("console:g")).map((r) => [r.userId, r.status])).toEqual([
      ["alice", "done"],
      ["bob", "failed"],
      ["bob", "failed"],
    ]);
    expect(await h.store.tasks.active("console:g")).toMatchObject({ ownerId: "alice", status: "waiting_user" });
  });
});
