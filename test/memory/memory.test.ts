// Long-term memory through the real path: the gateway, the runtime, the real SDK against the strict fake Messages
// API, a real SQLite store. Facts are extracted after a task (a forced save_memories call), recalled at the start
// of later tasks of the same user only, and kept or dropped by the remember/recall/forget tools.
import { afterEach, describe, expect, it } from "vitest";
import { reply, systemText, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { heldStep } from "../helpers/deferred.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

/** The extraction's answer: a forced save_memories call. */
const save = (...memories: Array<{ text: string; kind?: string; replaces?: string[] }>) => reply(toolUse("save_memories", { memories }));
const isExtraction = (req: MessagesRequest) => (req as { tool_choice?: { name?: string } }).tool_choice?.name === "save_memories";
const mainCalls = () => h.fake.accepted().filter((r) => !isExtraction(r));
const extractionCalls = () => h.fake.accepted().filter(isExtraction);
const texts = async (user: string) => (await h.store.memories.list(user)).map((m) => m.text);

describe("memory across conversations", () => {
  it("a fact told in one task is recalled after /reset and in a new chat of the same user, never for another user", async () => {
    h = await startHarness({ memory: true });
    h.fake.script(text("Nice to meet you, Ana!"), save({ text: "Name is Ana.", kind: "identity" }, { text: "Lives in Lisbon.", kind: "context" }));
    expect(await h.say("Hi, I'm Ana and I live in Lisbon. Can you help me plan trips?", { user: "console:ana" })).toEqual(["main: Nice to meet you, Ana!"]);
    // Extracted right after the answer went out, from the user's own words, with save_memories forced.
    const [extraction] = extractionCalls();
    expect(extraction!.model).toBe("claude-memory-test");
    expect(JSON.stringify(extraction!.messages)).toContain("I'm Ana and I live in Lisbon");
    expect(JSON.stringify(extraction!.messages)).toContain("Switchboard: Nice to meet you, Ana!");
    expect(await texts("console:ana")).toEqual(["Name is Ana.", "Lives in Lisbon."]);

    await h.say("/reset", { user: "console:ana" });
    h.fake.script(text("You're Ana."), save());
    await h.say("what's my name?", { user: "console:ana" });
    expect(systemText(mainCalls().at(-1)!)).toContain("Name is Ana.");

    h.fake.script(text("Lisbon, right?"), save());
    await h.say("where do I live again?", { user: "console:ana", session: "another-chat" });
    expect(systemText(mainCalls().at(-1)!)).toContain("Lives in Lisbon.");

    // Another user, in a new chat and in the same chat: their model requests never hold Ana's facts.
    const before = h.fake.accepted().length;
    h.fake.script(text("I don't know yet."), save(), text("No idea."), save());
    await h.say("what's my name, do you know it?", { user: "console:bob", session: "bobs-chat" });
    await h.say("/reset", { user: "console:ana" });
    await h.say("who am I, can you tell me?", { user: "console:bob" });
    const bobs = h.fake.accepted().slice(before);
    expect(bobs.filter(isExtraction)).toHaveLength(2);
    // (The extraction's own instructions use Lisbon as an example; what matters is what it is given about users.)
    for (const call of bobs) expect(JSON.stringify(call.messages) + (isExtraction(call) ? "" : systemText(call))).not.toMatch(/Ana|Lisbon/);
    expect(await texts("console:bob")).toEqual([]);
  });

  it("a group task recalls only its owner's memories", async () => {
    h = await startHarness({ memory: true });
    await h.store.memories.save("console:bob", { add: [{ id: "m-bob", text: "Bob's passport expires in May." }] });
    await h.store.memories.save("console:ana", { add: [{ id: "m-ana", text: "Ana prefers trains." }] });
    h.fake.script(text("Trains it is."), save());
    await h.say("plan our team trip by train", { user: "console:ana", session: "group" });
    const system = systemText(mainCalls().at(-1)!);
    expect(system).toContain("Ana prefers trains.");
    expect(system).not.toContain("passport");
  });

  it("a newer fact replaces the one it updates instead of piling up", async () => {
    h = await startHarness({ memory: true });
    await h.store.memories.save("console:ana", { add: [{ id: "m-porto", text: "Lives in Porto." }] });
    h.fake.script(text("Congratulations on the move!"), save({ text: "Lives in Lisbon.", replaces: ["m-porto"] }));
    await h.say("I just moved from Porto to Lisbon!", { user: "console:ana" });
    expect(await texts("console:ana")).toEqual(["Lives in Lisbon."]);
    // The extraction was shown the kept fact with its id, so it could name it.
    expect(JSON.stringify(extractionCalls()[0]!.messages)).toContain("[m-porto] Lives in Porto.");
  });

  it("a malformed save_memories answer stores nothing, and the job is not retried", async () => {
    h = await startHarness({ memory: true });
    h.fake.script(text("Noted."), reply(toolUse("save_memories", { memories: "Name is Ana" })));
    await h.say("My name is Ana, remember me please.", { user: "console:ana" });
    expect(await texts("console:ana")).toEqual([]);
    expect(await h.store.memories.pendingJobs()).toEqual([]);
    expect(extractionCalls()).toHaveLength(1);
  });

  it("secrets are never stored, whether the extraction or the user proposes them", async () => {
    h = await startHarness({ memory: true });
    h.fake.script(
      text("Done."),
      save({ text: "Password for the bank is hunter2." }, { text: "Card number 4111 1111 1111 1111." }, { text: "Uses the bank's app daily." }),
    );
    await h.say("Log in with password hunter2 and pay with 4111 1111 1111 1111", { user: "console:ana" });
    expect(await texts("console:ana")).toEqual(["Uses the bank's app daily."]);

    h.fake.script(reply(toolUse("remember", { text: "My password is hunter2" }, "toolu_r")), text("I won't keep that."), save());
    await h.say("remember my password is hunter2", { user: "console:ana" });
    const result = JSON.stringify(mainCalls().at(-1)!.messages.at(-1));
    expect(result).toContain("never kept");
    expect(await texts("console:ana")).toEqual(["Uses the bank's app daily."]);
  });

  it("credentials written the way people write them (a door PIN, a login pair, backup codes, in German) are not kept", async () => {
    h = await startHarness({ memory: true });
    h.fake.script(
      text("Noted."),
      save({ text: "Door PIN 4711." }, { text: "Router login admin / Sommer2024." }, { text: "Backup-Codes: 2231-9981, 1120-7764" }, { text: "Uses the VPN daily." }),
    );
    await h.say("The door PIN is 4711, router admin / Sommer2024, backup codes 2231-9981 1120-7764. I use the VPN every day.", { user: "console:ana" });
    expect(await texts("console:ana")).toEqual(["Uses the VPN daily."]);

    h.fake.script(reply(toolUse("remember", { text: "Mein WLAN-Passwort lautet Sommerwiese" }, "toolu_r")), text("Das speichere ich nicht."), save());
    await h.say("Merk dir: mein WLAN-Passwort lautet Sommerwiese", { user: "console:ana" });
    expect(JSON.stringify(mainCalls().at(-1)!.messages.at(-1))).toContain("never kept");
    expect(await texts("console:ana")).toEqual(["Uses the VPN daily."]);
  });

  it("trivial tasks (a few words, only commands) are not sent for extraction", async () => {
    h = await startHarness({ memory: true });
    h.fake.script(text("Hello!"));
    await h.say("hi", { user: "console:ana" });
    await h.say("/status", { user: "console:ana" });
    expect(extractionCalls()).toEqual([]);
    expect(await h.store.memories.pendingJobs()).toEqual([]);
  });

  it("a failed extraction is retried, and its tokens count in the session's usage", async () => {
    h = await startHarness({ memory: true });
    const retry = heldStep<ReturnType<typeof save>>();
    h.fake.script(text("Sure, Ana."), { error: { status: 529, type: "overloaded_error", message: "Overloaded", noRetry: true } }, retry.step);
    const before = (await h.store.sessions.usage("console:t")).inputTokens;
    // Not h.say: it waits for the gateway to be idle, and on a slow machine the retry (due 1 ms later) is already
    // running then, held by this test until it releases it below.
    await h.gateway.submit({ sessionKey: "console:t", messageId: "ana-1", userId: "console:ana", text: "I'm Ana, please call me that from now on." });
    await h.delivered((m) => m.text === "Sure, Ana.");
    // Tried again when its retry is due (1 ms here), without another message.
    await retry.entered;
    retry.release(save({ text: "Name is Ana." }));
    await h.gateway.idle();
    expect(await texts("console:ana")).toEqual(["Name is Ana."]);
    expect(extractionCalls()).toHaveLength(2);
    const usage = await h.store.sessions.usage("console:t");
    const mainInput = mainCalls().length; // at least one token per call
    expect(usage.inputTokens - before).toBeGreaterThan(mainInput);
  });

  it("extraction never delays the user's next message", async () => {
    h = await startHarness({ memory: true });
    const extraction = heldStep<ReturnType<typeof save>>();
    h.fake.script(text("Nice, a bike-sharing app!"), extraction.step, text("Porto has hills, yes."));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "console:ana", text: "I'm building a bike-sharing app for Lisbon." });
    await extraction.entered;
    // The extraction is still waiting for the model: the next message is answered all the same.
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m2", userId: "console:ana", text: "Is Porto hilly?" });
    expect(await h.delivered((m) => m.text === "Porto has hills, yes.")).toMatchObject({ agent: "main" });
    extraction.release(save({ text: "Is building a bike-sharing app for Lisbon.", kind: "project" }));
    await h.gateway.idle();
    expect(await texts("console:ana")).toEqual(["Is building a bike-sharing app for Lisbon."]);
  });
});

describe("memory tools and children", () => {
  it("remember, recall and forget work in plain words, on the owner's memories only", async () => {
    h = await startHarness({ memory: true });
    await h.store.memories.save("console:bob", { add: [{ id: "m-bob", text: "Lives on Rua Augusta 12." }] });
    await h.store.memories.save("console:ana", { add: [{ id: "m-addr", text: "Address is Rua do Ouro 5." }] });
    h.fake.script(reply(toolUse("remember", { text: "Prefers window seats." })), text("I'll remember that."), save());
    await h.say("remember that I prefer window seats", { user: "console:ana" });
    expect(await texts("console:ana")).toEqual(["Address is Rua do Ouro 5.", "Prefers window seats."]);

    h.fake.script(reply(toolUse("recall", { query: "seats" })), text("Window seats."), save());
    await h.say("what seats do I like?", { user: "console:ana" });
    expect(JSON.stringify(mainCalls().at(-1)!.messages.at(-1))).toContain("Prefers window seats.");

    h.fake.script(reply(toolUse("forget", { query: "address" })), text("Forgotten."), save());
    await h.say("forget my address", { user: "console:ana" });
    expect(await texts("console:ana")).toEqual(["Prefers window seats."]);
    expect(await texts("console:bob")).toEqual(["Lives on Rua Augusta 12."]);

    // Forgotten means gone from the next task's prompt too.
    h.fake.script(text("Hi."), save());
    await h.say("/reset", { user: "console:ana" });
    await h.say("hello again, it's me", { user: "console:ana" });
    expect(systemText(mainCalls().at(-1)!)).not.toContain("Rua do Ouro");
  });

  it("hostile tool input from the model gets an error result and changes nothing", async () => {
    h = await startHarness({ memory: true });
    await h.store.memories.save("console:ana", { add: [{ id: "m1", text: "Prefers trains." }] });
    h.fake.script(
      reply(
        toolUse("remember", { text: 42 }, "toolu_1"),
        toolUse("remember", { text: "x".repeat(5000) }, "toolu_2"),
        toolUse("forget", { query: "" }, "toolu_3"),
        toolUse("forget", { query: "NEAR( \" * -- '); DROP TABLE memories;" }, "toolu_4"),
        toolUse("recall", { query: { $gt: "" } }, "toolu_5"),
      ),
      text("Done."),
      save(),
    );
    expect(await h.say("please do odd things with my memory", { user: "console:ana" })).toEqual(["main: Done."]);
    const results = (mainCalls().at(-1)!.messages.at(-1)!.content as Array<{ type: string; is_error?: boolean }>).filter((b) => b.type === "tool_result");
    expect(results.map((r) => r.is_error === true)).toEqual([true, true, true, false, false]);
    expect(await texts("console:ana")).toEqual(["Prefers trains."]);
  });

  it("/forget removes a fact from every later model request", async () => {
    h = await startHarness({ memory: true });
    await h.store.memories.save("console:ana", {
      add: [
        { id: "m1", text: "Lives in Lisbon." },
        { id: "m2", text: "Prefers trains." },
      ],
    });
    expect(await h.say("/forget 1", { user: "console:ana" })).toEqual([expect.stringContaining("Lives in Lisbon")]);
    h.fake.script(text("Trains, then."), save());
    await h.say("how should I travel to Porto?", { user: "console:ana" });
    const system = systemText(mainCalls().at(-1)!);
    expect(system).toContain("Prefers trains.");
    expect(system).not.toContain("Lisbon");
    expect(JSON.stringify(extractionCalls().at(-1)!.messages)).not.toContain("Lives in Lisbon");
  });

  it("a child sees the memories only when its definition says memory: true, and never gets the tools", async () => {
    h = await startHarness({
      memory: true,
      files: { ...skillFile("planner", "Plan.", "memory: true\n"), ...skillFile("quiz", "Ask.") },
    });
    await h.store.memories.save("console:ana", { add: [{ id: "m1", text: "Prefers trains." }] });
    h.fake.script(reply(toolUse("use_skill", { name: "planner", message: "plan" })), text("Train or bus?"));
    await h.say("plan a trip to Porto", { user: "console:ana" });
    const planner = mainCalls().at(-1)!;
    expect(systemText(planner)).toContain("Prefers trains.");
    expect((planner.tools ?? []).map((t) => t.name)).not.toContain("remember");

    await h.say("/reset", { user: "console:ana" });
    h.fake.script(reply(toolUse("use_skill", { name: "quiz", message: "quiz me" })), text("Question 1?"));
    await h.say("quiz me on trains", { user: "console:ana" });
    expect(systemText(mainCalls().at(-1)!)).not.toContain("Prefers trains.");
  });
});
