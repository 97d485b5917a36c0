// Owner rules and commands that must not wait behind a running turn.
import { afterEach, describe, expect, it } from "vitest";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
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
    expect(await h.store.unfinishedRequests()).toEqual([]);
    h.fake.script(text("Ready."));
    expect(await h.say("new question")).toEqual(["main: Ready."]);
    expect(h.fake.rejected()).toEqual([]);
  });
});

describe("a turn cut off before its first commit", () => {
  it("is closed by /cancel and never runs again after a restart", async () => {
    h = await startHarness();
    const called = deferred<void>();
    h.fake.script(() => {
      called.resolve();
      return { hang: true };
    });
    await h.gateway.submit({ sessionKey: "console:t", messageId: "1", userId: "alice", text: "think" });
    await called.promise;
    await h.gateway.submit({ sessionKey: "console:t", messageId: "2", userId: "alice", text: "/cancel" });
    await h.gateway.idle();
    // Found by the simulation: the cut-off request stayed pending and ran again on the next start.
    expect(await h.store.unfinishedRequests()).toEqual([]);
    expect(await h.gateway.recover()).toBe(0);
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
    expect(await h.say("/status", { user: "bob" })).toEqual([
      expect.stringMatching(/^switchboard: main → skill:interview/),
    ]);

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
