// How a request ended, as whenDone tells its waiter: the code of its failure, the one stored with it (the HTTP API
// maps the server-side ones to 500), "finished" when the engine answered. No caller reads the words.
import { afterEach, describe, expect, it } from "vitest";
import { isInternal } from "../../src/gateway/failures.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

async function outcomeOf(sessionKey: string, messageId: string, userId: string, said: string) {
  const result = await h.gateway.submit({ sessionKey, messageId, userId, text: said });
  if (result.status !== "accepted") throw new Error(`not accepted: ${result.status}`);
  return h.gateway.whenDone(result.requestId);
}

describe("a request's outcome", () => {
  it("is finished when the model answered", async () => {
    h = await startHarness();
    h.fake.script(text("Hello."));
    const outcome = await outcomeOf("console:o", "1", "alice", "hi");
    expect(outcome).toEqual({ status: "finished" });
    expect(isInternal(outcome)).toBe(false);
  });

  it("carries `quota` when a daily limit refused the message", async () => {
    h = await startHarness({ quotas: { settings: { userDailyMessages: 1 }, now: () => Date.UTC(2026, 10, 27, 12), zoneOf: async () => null } });
    h.fake.script(text("One."));
    expect(await outcomeOf("http:s1", "1", "http:alice", "first")).toEqual({ status: "finished" });
    const outcome = await outcomeOf("http:s1", "2", "http:alice", "second");
    expect(outcome).toEqual({ status: "failed", code: "quota" });
    expect(isInternal(outcome)).toBe(false);
    expect((await h.store.requests.byExternalId("http:s1", "2"))?.errorCode).toBe("quota");
  });

  it("carries `engine`, stored with the request, when the model's error ended the task", async () => {
    h = await startHarness();
    h.fake.script({ error: { status: 529, type: "overloaded_error", message: "Overloaded" } });
    const outcome = await outcomeOf("console:e", "1", "alice", "hi");
    expect(outcome).toEqual({ status: "failed", code: "engine" });
    expect(isInternal(outcome)).toBe(false);
    expect(await h.store.requests.byExternalId("console:e", "1")).toMatchObject({ status: "failed", errorCode: "engine" });
  });

  it("carries `budget` when the session's token budget is spent", async () => {
    h = await startHarness({ sessionTokenBudget: 1 });
    h.fake.script(text("Spent."));
    await outcomeOf("console:b", "1", "alice", "first");
    expect(await outcomeOf("console:b", "2", "alice", "second")).toEqual({ status: "failed", code: "budget" });
    expect((await h.store.requests.byExternalId("console:b", "2"))?.errorCode).toBe("budget");
  });

  it("carries `cancelled` for the turn a /cancel cut off", async () => {
    h = await startHarness({ files: skillFile("interview", "Ask.") });
    const called = deferred<void>();
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), () => {
      called.resolve();
      return { hang: true };
    });
    const first = await h.gateway.submit({ sessionKey: "telegram:-5", messageId: "1", userId: "telegram:1", text: "go" });
    if (first.status !== "accepted") throw new Error(first.status);
    const turn = h.gateway.whenDone(first.requestId);
    await called.promise;
    await h.gateway.submit({ sessionKey: "telegram:-5", messageId: "2", userId: "telegram:1", text: "/cancel" });
    expect(await turn).toEqual({ status: "failed", code: "cancelled" });
    expect((await h.store.requests.get(first.requestId))?.errorCode).toBe("cancelled");
  });
});
