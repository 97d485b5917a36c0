// A group member's private data never reaches another member's task: what memory tools returned in one member's task
// is not carried into the next member's task through the shared main history or the recent-artifacts hint (after a
// restart either), and only a task owner's own words are read for their memories. Real grammY against the fake Bot
// API, the real gateway, runtime and memory tools, the strict fake model.
import { describe, expect, it } from "vitest";
import { COMPACTION_PROMPT } from "../../src/runtime/compaction.js";
import { extractMemories } from "../../src/runtime/memory/extract.js";
import { HIDDEN_RESULT } from "../../src/runtime/memory/private-results.js";
import { silentLogger } from "../../src/log.js";
import { AnthropicModel } from "../../src/llm/anthropic.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { lastUserText, reply, systemText, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { agentFile, counterIds, skillFile } from "../helpers/harness.js";
import { ALICE, BOB, useTelegramWorld } from "../helpers/telegram-world.js";
import { commitStep } from "../helpers/steps.js";

const GROUP = -1007788;
const KEY = `telegram:${GROUP}`;
const group = { chatId: GROUP, chatType: "supergroup" as const };
const ALICES_SECRET = "Alice keeps her passport scan at https://vault.example/alice/passport.pdf";

const world = useTelegramWorld({
  ...skillFile("interview", "Ask."),
  ...agentFile("secretary", "You are the secretary.", "memory: true\ncarryover: true\nmode: batch\n"),
});

const isExtraction = (req: MessagesRequest) => (req as { tool_choice?: { name?: string } }).tool_choice?.name === "save_memories";
const agentCalls = () => world.model.accepted().filter((r) => !isExtraction(r));
/** Everything a request shows the model about the conversation: its messages and its system prompt. */
const seen = (req: MessagesRequest) => `${JSON.stringify(req.messages)}\n${systemText(req)}`;

async function boot() {
  const started = await world.boot({}, [], { memory: true });
  await started.h.gateway.recover();
  // Memory extraction after each task finds nothing to keep.
  world.model.fallback((req) => (isExtraction(req) ? reply(toolUse("save_memories", { memories: [] })) : text("(unscripted)")));
  return started;
}

describe("a member's memories in a shared conversation", () => {
  it("stay out of the next member's task, in the history and the artifacts hint, also after a restart, and come back for their owner", async () => {
    let { h } = await boot();
    await h.store.memories.save(`telegram:${ALICE}`, { add: [{ id: "mem-alice", text: ALICES_SECRET }] });
    const mention = (words: string) => `@${world.tg.botUsername} ${words}`;

    world.model.script(reply(toolUse("recall", { query: "passport" })), text("Found it, Alice."));
    world.tg.userMessage({ ...group, fromId: ALICE, text: mention("where is my passport?") });
    expect((await world.nth(GROUP, 1)).text).toBe("Found it, Alice.");
    await h.gateway.idle();
    // Alice's own task read it, and the hint picked the link up.
    expect(seen(agentCalls().at(-1)!)).toContain("vault.example/alice/passport.pdf");
    expect(systemText(agentCalls().at(-1)!)).toContain("Recent artifacts from tools (most recent last): https://vault.example/alice/passport.pdf");

    // Bob's task: main hands him to a skill, the process restarts, then main reads its history back from the log.
    world.model.script(reply(toolUse("use_skill", { name: "interview", message: "help Bob" })), text("What for, Bob?"));
    world.tg.userMessage({ ...group, fromId: BOB, text: mention("I need a hand") });
    expect((await world.nth(GROUP, 2)).text).toBe("🧩 interview\nWhat for, Bob?");
    await h.gateway.idle();
    await world.stopProviders();
    ({ h } = await boot());
    world.model.script(reply(toolUse("complete", { result: "a cover letter" })), text("On it, Bob."));
    world.tg.userMessage({ ...group, fromId: BOB, text: "a cover letter" });
    expect((await world.nth(GROUP, 3)).text).toBe("On it, Bob.");
    await h.gateway.idle();

    const bobs = agentCalls().slice(2);
    // The last is main again, reading the skill's result.
    expect(bobs.map(lastUserText)).toEqual(["I need a hand", "help Bob", "a cover letter", ""]);
    for (const call of bobs) expect(seen(call)).not.toMatch(/vault\.example|passport scan/);
    const mainAfterRestart = bobs.at(-1)!;
    expect(JSON.stringify(mainAfterRestart.messages)).toContain(HIDDEN_RESULT);
    expect(systemText(mainAfterRestart)).not.toContain("Recent artifacts");
    expect(world.model.rejected()).toEqual([]);

    // Alice's next task sees her own result again.
    world.model.script(text("Still in your vault."));
    world.tg.userMessage({ ...group, fromId: ALICE, text: mention("and is it still there?") });
    expect((await world.nth(GROUP, 4)).text).toBe("Still in your vault.");
    await h.gateway.idle();
    expect(seen(agentCalls().at(-1)!)).toContain("vault.example/alice/passport.pdf");
    // What each member's task gave the memory extraction: their own words only.
    const extractions = world.model
      .accepted()
      .filter(isExtraction)
      .map((r) => JSON.stringify(r.messages));
    expect(extractions.filter((e) => e.includes("a cover letter")).every((e) => !/vault|passport/.test(e))).toBe(true);
  });
});

describe("a child that reads its owner's memories", () => {
  it("carries over only its own owner's previous run, never another member's", async () => {
    const { h } = await world.boot({}, [], { memory: true });
    await h.gateway.recover();
    world.model.fallback((req) => (isExtraction(req) ? reply(toolUse("save_memories", { memories: [] })) : text("(unscripted)")));
    await h.store.memories.save(`telegram:${ALICE}`, { add: [{ id: "mem-alice", text: ALICES_SECRET }] });
    const mention = (words: string) => `@${world.tg.botUsername} ${words}`;
    const secretaryCall = () =>
      agentCalls()
        .filter((r) => systemText(r).includes("You are the secretary"))
        .at(-1)!;

    world.model.script(
      reply(toolUse("use_agent", { name: "secretary", message: "file the passport" })),
      text("Filed: passport scan at https://vault.example/alice/passport.pdf"),
      text("Filed, Alice."),
    );
    world.tg.userMessage({ ...group, fromId: ALICE, text: mention("file my passport") });
    expect((await world.nth(GROUP, 1)).text).toBe("Filed, Alice.");
    await h.gateway.idle();
    expect(systemText(secretaryCall())).toContain("vault.example");

    world.model.script(reply(toolUse("use_agent", { name: "secretary", message: "file the invoice" })), text("Filed: invoice."), text("Filed, Bob."));
    world.tg.userMessage({ ...group, fromId: BOB, text: mention("file my invoice") });
    expect((await world.nth(GROUP, 2)).text).toBe("Filed, Bob.");
    await h.gateway.idle();
    expect(lastUserText(secretaryCall())).toBe("file the invoice");
    expect(seen(secretaryCall())).not.toMatch(/vault\.example|passport/);

    world.model.script(reply(toolUse("use_agent", { name: "secretary", message: "file the visa" })), text("Filed: visa."), text("Filed again, Alice."));
    world.tg.userMessage({ ...group, fromId: ALICE, text: mention("file my visa") });
    expect((await world.nth(GROUP, 3)).text).toBe("Filed again, Alice.");
    expect(lastUserText(secretaryCall())).toContain(
      "A summary of your previous run in this conversation:\nFiled: passport scan at https://vault.example/alice/passport.pdf",
    );
  });
});

describe("a compaction in a member's task", () => {
  it("leaves what memory tools returned out of the summary that later tasks of others read", async () => {
    const { h } = await world.boot({}, [], { memory: true, contextTokens: { "*": 1500 } });
    await h.gateway.recover();
    await h.store.memories.save(`telegram:${ALICE}`, { add: [{ id: "mem-alice", text: ALICES_SECRET }] });
    const summaries: MessagesRequest[] = [];
    world.model.fallback((req) => {
      if (isExtraction(req)) return reply(toolUse("save_memories", { memories: [] }));
      if (systemText(req) === COMPACTION_PROMPT) {
        summaries.push(req);
        return text("Handoff: Alice is listing the details of a trip; keep acknowledging them.");
      }
      return text("Noted.");
    });
    const mention = (words: string) => `@${world.tg.botUsername} ${words}`;
    world.model.script(reply(toolUse("recall", { query: "passport" })), text("Found it, Alice."));
    world.tg.userMessage({ ...group, fromId: ALICE, text: mention("where is my passport?") });
    await world.nth(GROUP, 1);
    await h.gateway.idle();
    const noted = () => world.tg.sent(GROUP).filter((m) => m.text === "Noted.").length;
    for (let i = 1; summaries.length === 0 && i <= 20; i++) {
      world.tg.userMessage({ ...group, fromId: ALICE, text: mention(`detail ${i}: ${"the hotel must be near the station and ".repeat(8)}`) });
      await world.tg.waitFor("sendMessage", () => noted() === i);
      await h.gateway.idle();
    }
    expect(summaries.length).toBeGreaterThan(0);
    expect(JSON.stringify(summaries[0]!.messages)).toContain("where is my passport?");
    expect(JSON.stringify(summaries[0]!.messages)).not.toContain("vault.example");

    const before = noted();
    world.tg.userMessage({ ...group, fromId: BOB, text: mention("hi") });
    await world.tg.waitFor("sendMessage", () => noted() === before + 1);
    expect(lastUserText(agentCalls().at(-1)!)).toContain("hi");
    expect(seen(agentCalls().at(-1)!)).not.toMatch(/vault\.example|passport scan/);
    expect(world.model.rejected()).toEqual([]);
  });
});

describe("memory extraction of a task", () => {
  it("reads only the owner's words, even when someone else's message is recorded in the task", async () => {
    const store = new SqliteStore(":memory:");
    try {
      const add = async (id: string, userId: string, words: string) => {
        await store.requests.insert({ id, sessionKey: KEY, externalId: id, kind: "message", userId, text: words });
        await commitStep(store, { sessionKey: KEY, request: { id, status: "done", taskId: "t1" } });
      };
      await store.requests.insert({ id: "r0", sessionKey: KEY, externalId: "r0", kind: "message", userId: "telegram:1001", text: "I'm Alice and I live in Lisbon" });
      await commitStep(store, {
        sessionKey: KEY,
        taskCreated: { id: "t1", ownerId: "telegram:1001", requestId: "r0" },
        request: { id: "r0", status: "done", taskId: "t1" },
      });
      // Accepted into Alice's task by a version that decided ownership at the first commit.
      await add("r1", "telegram:1002", "I'm Bob and my bank PIN hint is my dog's name");
      await commitStep(store, { sessionKey: KEY, task: { id: "t1", status: "completed" } });
      world.model.script(reply(toolUse("save_memories", { memories: [{ text: "Lives in Lisbon.", kind: "context" }] })));
      const model = new AnthropicModel({ apiKey: "test-key", baseURL: world.model.url, maxRetries: 0, defaultModel: "claude-test" });
      const changes = await extractMemories(
        { store, model, modelName: "claude-memory-test", ids: counterIds(), log: silentLogger() },
        { taskId: "t1", userId: "telegram:1001", sessionKey: KEY, attempts: 1 },
      );
      const asked = JSON.stringify(world.model.accepted()[0]!.messages);
      expect(asked).toContain("I'm Alice and I live in Lisbon");
      expect(asked).not.toMatch(/Bob|PIN/);
      expect(changes?.add?.map((m) => m.text)).toEqual(["Lives in Lisbon."]);
    } finally {
      await store.close();
    }
  });
});
