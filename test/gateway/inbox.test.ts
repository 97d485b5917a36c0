// The inbox: messages are stored before processing, deduplicated by id, run one at a time per
// session in arrival order, and sessions run concurrently.
import { afterEach, describe, expect, it } from "vitest";
import { lastUserText, text, type FakeReply } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

describe("inbox", () => {
  it("processes a message id seen twice only once", async () => {
    h = await startHarness();
    h.fake.script(text("Hi once."));
    const first = await h.gateway.submit({ sessionKey: "console:t", messageId: "tg-42", userId: "alice", text: "hi" });
    const second = await h.gateway.submit({ sessionKey: "console:t", messageId: "tg-42", userId: "alice", text: "hi" });
    await h.gateway.idle();
    expect(first.status).toBe("accepted");
    expect(second).toEqual({ status: "duplicate", requestId: (first as { requestId: string }).requestId });
    expect(h.seen.map((m) => m.text)).toEqual(["Hi once."]);
    expect(h.fake.calls).toHaveLength(1);
  });

  it("runs two sessions concurrently while each keeps its own order", async () => {
    h = await startHarness();
    const releaseA = deferred<FakeReply>();
    const aStarted = deferred<void>();
    h.fake.fallback((req) => {
      const said = lastUserText(req);
      if (said === "A1") {
        aStarted.resolve();
        return releaseA.promise;
      }
      return text(`reply to ${said}`);
    });
    await h.gateway.submit({ sessionKey: "console:a", messageId: "1", userId: "ann", text: "A1" });
    await h.gateway.submit({ sessionKey: "console:a", messageId: "2", userId: "ann", text: "A2" });
    await aStarted.promise;
    // Session b finishes while a's first turn is still waiting on the model.
    await h.gateway.submit({ sessionKey: "console:b", messageId: "1", userId: "bob", text: "B1" });
    await h.delivered((m) => m.sessionKey === "console:b");
    // (A2's sender was told it waits: test/gateway/queued.test.ts; the replies are what this test is about.)
    const replies = () => h.seen.filter((m) => m.kind !== "notice").map((m) => `${m.sessionKey} ${m.text}`);
    expect(replies()).toEqual(["console:b reply to B1"]);
    // a's second message has not reached the model: it waits for the first.
    expect(h.fake.accepted().map(lastUserText)).toEqual(["A1", "B1"]);

    releaseA.resolve(text("reply to A1"));
    await h.gateway.idle();
    expect(replies()).toEqual(["console:b reply to B1", "console:a reply to A1", "console:a reply to A2"]);
    // A2 went to the model with A1's exchange in its history.
    const a2 = h.fake.accepted().at(-1)!;
    expect(a2.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  it("without an API key every message gets a reply saying which variable to set, and commands still work", async () => {
    h = await startHarness({ noApiKey: true });
    const [reply] = await h.send("hello");
    expect(reply).toMatchObject({ agent: "switchboard", kind: "error" });
    expect(reply!.text).toContain("set ANTHROPIC_API_KEY");
    expect(await h.say("/status")).toEqual(["switchboard: Idle: no task is running. Send a message to start one."]);
    expect(h.fake.calls).toHaveLength(0);
  });

  it("retries a failed delivery by itself, in order, without sending anything twice", async () => {
    h = await startHarness();
    const shown: string[] = [];
    const done = deferred<void>();
    let failures = 2;
    h.gateway.register({
      prefix: "flaky",
      deliver: async (m) => {
        if (failures-- > 0) throw new Error("network down");
        if (m.kind === "notice") return; // "b waits its turn" (test/gateway/queued.test.ts)
        shown.push(m.text);
        if (shown.length === 2) done.resolve();
      },
    });
    h.fake.script(text("one"), text("two"));
    await h.gateway.submit({ sessionKey: "flaky:x", messageId: "1", userId: "u", text: "a" });
    await h.gateway.submit({ sessionKey: "flaky:x", messageId: "2", userId: "u", text: "b" });
    await done.promise;
    await h.gateway.idle();
    expect(shown).toEqual(["one", "two"]);
    expect(await h.store.outbox.pending("flaky:x")).toEqual([]);
  });

  it("records token usage per request", async () => {
    h = await startHarness();
    h.fake.script({ content: [{ type: "text", text: "ok" }], usage: { input_tokens: 120, output_tokens: 7 } });
    const submitted = await h.gateway.submit({ sessionKey: "console:t", messageId: "u1", userId: "alice", text: "count me" });
    await h.gateway.idle();
    expect(submitted.status).toBe("accepted");
    expect(await h.store.requests.get((submitted as { requestId: string }).requestId)).toMatchObject({ status: "done", inputTokens: 120, outputTokens: 7 });
  });
});
