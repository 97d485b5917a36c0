// MID_TURN=steer: a message the owner sends while the agent works joins the running frame at its next model call,
// after that step's tool results, instead of waiting for the turn to end. And the hand-back notice
// (HANDBACK_NOTICE): the chat is told when a child gives the conversation back.
import { afterEach, describe, expect, it } from "vitest";
import { reply, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { heldStep } from "../helpers/deferred.js";
import { heldTool } from "../helpers/tools.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { agentLabel } from "../../src/runtime/labels.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

function lastUserContent(req: MessagesRequest): Array<{ type: string; text?: string; tool_use_id?: string }> {
  const last = req.messages[req.messages.length - 1]!;
  return typeof last.content === "string" ? [{ type: "text", text: last.content }] : (last.content as Array<{ type: string }>);
}

describe("MID_TURN=steer", () => {
  it("adds the owner's mid-turn message to the running frame after the tool results, and answers it in the same turn", async () => {
    const search = heldTool();
    h = await startHarness({ tools: [search.tool], midTurn: "steer" });
    h.fake.script(reply(toolUse("search_flights", { to: "Lisbon" }, "toolu_s")), text("Porto it is: 2 flights."));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "find flights to Lisbon" });
    await search.started;
    const second = await h.gateway.submit({ sessionKey: "console:t", messageId: "m2", userId: "alice", text: "actually, make it Porto" });
    expect(second.status).toBe("accepted");
    const notice = await h.delivered((m) => m.kind === "notice");
    expect(notice.text).toContain("I'll take this into account at my next step");
    search.release();
    await h.gateway.idle();

    // One turn: the second model call saw the tool's result first, then the correction.
    const calls = h.fake.accepted();
    expect(calls).toHaveLength(2);
    expect(lastUserContent(calls[1]!).map((b) => b.type)).toEqual(["tool_result", "text"]);
    expect(lastUserContent(calls[1]!)[1]!.text).toBe("actually, make it Porto");
    expect(h.seen.map((m) => m.text)).toEqual([notice.text, "Porto it is: 2 flights."]);
    // The steered request is finished (it was read once, by this task) and is never run on its own.
    const steered = await h.store.requests.get(second.status === "accepted" ? second.requestId : "");
    const task = (await h.store.tasks.ofSession("console:t"))[0]!;
    expect(steered).toMatchObject({ status: "done", taskId: task.id });
    const told = (await h.store.steps.log("console:t")).filter((e) => e.type === "message" && JSON.stringify(e.payload).includes("actually, make it Porto"));
    expect(told).toHaveLength(1);
  });

  it("a message that arrives while the final answer is written waits and is answered next (no model call left to join)", async () => {
    h = await startHarness({ midTurn: "steer" });
    const first = heldStep<ReturnType<typeof text>>();
    h.fake.script(first.step, text("Answer to the second."));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "first" });
    await first.entered;
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m2", userId: "alice", text: "second" });
    await h.delivered((m) => m.kind === "notice");
    first.release(text("Answer to the first."));
    await h.gateway.idle();
    expect(h.seen.filter((m) => m.kind === "message").map((m) => m.text)).toEqual(["Answer to the first.", "Answer to the second."]);
    expect(h.fake.accepted()).toHaveLength(2);
  });

  it("commands are not steered: /status is answered beside the turn, /cancel still stops it", async () => {
    const search = heldTool();
    h = await startHarness({ tools: [search.tool], midTurn: "steer" });
    h.fake.script(reply(toolUse("search_flights", {}, "toolu_s")));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "find flights" });
    await search.started;
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m2", userId: "alice", text: "/status" });
    await h.delivered((m) => /main/.test(m.text) && m.kind !== "message");
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m3", userId: "alice", text: "/cancel" });
    search.release();
    await h.gateway.idle();
    expect(h.fake.accepted()).toHaveLength(1);
    expect((await h.store.tasks.ofSession("console:t"))[0]!.status).toBe("cancelled");
    expect(JSON.stringify(await h.store.steps.log("console:t"))).not.toContain("/status");
  });

  it("with MID_TURN=queue (the default) the same message waits for its own turn", async () => {
    const search = heldTool();
    h = await startHarness({ tools: [search.tool] });
    h.fake.script(reply(toolUse("search_flights", {}, "toolu_s")), text("3 flights to Lisbon."), text("Porto: 2 flights."));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "find flights to Lisbon" });
    await search.started;
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m2", userId: "alice", text: "actually, make it Porto" });
    await h.delivered((m) => m.kind === "notice");
    search.release();
    await h.gateway.idle();
    expect(lastUserContent(h.fake.accepted()[1]!).map((b) => b.type)).toEqual(["tool_result"]);
    expect(h.seen.filter((m) => m.kind === "message").map((m) => m.text)).toEqual(["3 flights to Lisbon.", "Porto: 2 flights."]);
  });
});

describe("hand-back notice", () => {
  const FILES = skillFile("trip-interview", "Ask, then complete.");

  it("says which child handed the chat back, before the parent's next words", async () => {
    h = await startHarness({ files: FILES, handbackNotice: true });
    h.fake.script(reply(toolUse("use_skill", { name: "trip-interview", message: "plan" })), text("Where to?"));
    expect(await h.say("plan a trip")).toEqual(["skill:trip-interview: Where to?"]);
    h.fake.script(reply(toolUse("complete", { result: "Lisbon" })), text("Booked Lisbon."));
    expect(await h.say("Lisbon")).toEqual(["switchboard: Trip interview skill finished.", "main: Booked Lisbon."]);
  });

  it("says a child stopped early when it failed, and nothing with HANDBACK_NOTICE=off", async () => {
    h = await startHarness({ files: FILES, handbackNotice: true });
    h.fake.script(
      reply(toolUse("use_skill", { name: "trip-interview", message: "plan" })),
      { error: { status: 400, type: "invalid_request_error", message: "the child's request was refused", noRetry: true } },
      text("It could not finish."),
    );
    expect(await h.say("plan a trip")).toEqual(["switchboard: Trip interview skill stopped before finishing.", "main: It could not finish."]);
    await h.close();

    h = await startHarness({ files: FILES, handbackNotice: false });
    h.fake.script(reply(toolUse("use_skill", { name: "trip-interview", message: "plan" })), reply(toolUse("complete", { result: "ok" })), text("Done."));
    expect(await h.say("plan a trip")).toEqual(["main: Done."]);
  });

  it("names agents in words", () => {
    expect(agentLabel("skill:interview")).toBe("Interview skill");
    expect(agentLabel("agent:trip_planner")).toBe("Trip planner agent");
    expect(agentLabel("main")).toBe("Switchboard");
    expect(agentLabel("something-else")).toBe("something-else");
  });
});
