// Chat commands are handled before the model and change the durable stack.
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/gateway/commands.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { agentFile, skillFile, startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const FILES = {
  ...skillFile("interview", "Ask."),
  ...agentFile("researcher", "Research."),
  ...agentFile("checker", "Check."),
};

/** main → skill:interview → agent:researcher → agent:checker, waiting for the user. */
async function depthFour(harness: Harness) {
  harness.fake.script(
    reply(toolUse("use_skill", { name: "interview", message: "i" }, "toolu_main")),
    reply(toolUse("use_agent", { name: "researcher", message: "r" })),
    reply(toolUse("use_agent", { name: "checker", message: "c" })),
    text("Checker asks: which one?"),
  );
  expect(await harness.say("go")).toEqual(["agent:checker: Checker asks: which one?"]);
}

describe("/cancel", () => {
  it("unwinds the whole stack at depth 3+, closes every frame as an error and says which agents stopped", async () => {
    h = await startHarness({ files: FILES });
    await depthFour(h);
    const taskId = (await h.store.tasks.active("console:t"))!.id;

    const shown = await h.send("/cancel");
    expect(shown.map((m) => [m.agent, m.text])).toEqual([["switchboard", "Cancelled. Stopped: skill:interview, agent:researcher, agent:checker."]]);
    expect((await h.store.tasks.get(taskId))?.status).toBe("cancelled");
    expect(await h.store.tasks.active("console:t")).toBeNull();
    expect(await h.store.steps.frames("console:t")).toEqual([]);
    const closed = (await h.store.steps.log("console:t"))
      .filter((e) => e.type === "agent_session_complete")
      .map((e) => e.payload as { agent_name: string; is_error: boolean });
    expect(closed).toEqual([
      expect.objectContaining({ agent_name: "agent:checker", is_error: true }),
      expect.objectContaining({ agent_name: "agent:researcher", is_error: true }),
      expect.objectContaining({ agent_name: "skill:interview", is_error: true }),
    ]);

    // The main agent's history stays valid for the strict API: its pending use_skill got an error result.
    h.fake.script(text("Fresh start."));
    expect(await h.say("something else")).toEqual(["main: Fresh start."]);
    const messages = h.fake.accepted().at(-1)!.messages;
    expect(JSON.stringify(messages)).toContain('"tool_use_id":"toolu_main"');
    expect(h.fake.rejected()).toEqual([]);
  });

  it('"cancel" or "stop" typed alone cancels while a task is active, and is a normal message otherwise', async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "i" })), text("Q?"));
    await h.send("go");
    expect(await h.say("Stop")).toEqual(["switchboard: Cancelled. Stopped: skill:interview."]);
    h.fake.script(text("Stop what?"));
    expect(await h.say("stop")).toEqual(["main: Stop what?"]);
  });

  it("with nothing running says so without calling the model", async () => {
    h = await startHarness();
    expect(await h.say("/cancel")).toEqual(["switchboard: Nothing to cancel: no task is running."]);
    expect(h.fake.calls).toHaveLength(0);
  });
});

describe("/status", () => {
  it("shows the stack with the top frame's iteration", async () => {
    h = await startHarness({ files: FILES });
    expect(await h.say("/status")).toEqual(["switchboard: Idle: no task is running. Send a message to start one."]);
    await depthFour(h);
    const [line] = await h.say("/status");
    expect(line).toMatch(/^switchboard: main → skill:interview → agent:researcher → agent:checker \(iteration 1\/25\)\ntask task_\d+: waiting user$/);
  });
});

describe("/reset", () => {
  it("stops what runs and starts a fresh history: the model no longer sees earlier messages", async () => {
    h = await startHarness({ files: FILES });
    h.fake.script(text("Noted: your name is Ana."));
    await h.send("my name is Ana");
    h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "i" })), text("Q?"));
    await h.send("interview me");
    expect(await h.say("/reset")).toEqual(["switchboard: Stopped: skill:interview. Started a fresh conversation: earlier messages are forgotten."]);
    h.fake.script(text("I don't know your name."));
    await h.send("what is my name?");
    expect(h.fake.accepted().at(-1)!.messages).toEqual([{ role: "user", content: [{ type: "text", text: "what is my name?" }] }]);
  });
});

describe("parseCommand", () => {
  it("accepts Telegram's /cmd@bot form and ignores unknown commands", () => {
    expect(parseCommand("/cancel@SwitchboardBot", false)).toBe("cancel");
    expect(parseCommand("/status now", false)).toBe("status");
    expect(parseCommand("/frobnicate", true)).toBeNull();
    expect(parseCommand("please stop the music", true)).toBeNull();
  });
});
