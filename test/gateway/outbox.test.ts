// The outbox's answers to what platforms say when a delivery fails: refused for good (undeliverable once, never
// re-queued), "wait N s" (the scheduler waits that long), "the chat moved" (the conversation follows it), and
// indicators a previous process left behind. Real runtime and store; a sink that answers like a platform would.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DeliveryError, type OutboundMessage, type ProviderSink } from "../../src/gateway/types.js";
import { lastUserText, startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { startHarness, type Harness, type HarnessOptions } from "../helpers/harness.js";
import { manualTimeouts } from "../helpers/timers.js";

let h: Harness | undefined;
let fake: FakeAnthropic | undefined;
let dir = "";
afterEach(async () => {
  await h?.close(true);
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = fake = undefined;
  dir = "";
});

async function persistent(extra: HarnessOptions = {}): Promise<HarnessOptions> {
  fake = await startFakeAnthropic();
  dir = mkdtempSync(join(tmpdir(), "switchboard-outbox-"));
  return { fake, dbFile: join(dir, "db.sqlite"), ...extra };
}

/** A platform sink: `refuse` decides per message whether (and how) the platform says no. */
function platform(refuse: (m: OutboundMessage) => DeliveryError | null = () => null) {
  const shown: Array<{ key: string; text: string }> = [];
  const attempts: string[] = [];
  const sink: ProviderSink = {
    prefix: "tg",
    deliver: async (m) => {
      attempts.push(m.text);
      const error = refuse(m);
      if (error) throw error;
      shown.push({ key: m.sessionKey, text: m.text });
    },
  };
  return { sink, shown, attempts };
}

const send = (h: Harness, key: string, id: string, text: string) => h.gateway.submit({ sessionKey: key, messageId: id, userId: "telegram:7", text });

describe("a delivery the platform refuses for good", () => {
  it("is marked undeliverable once, shown in /status, and never sent again, not even after a restart", async () => {
    const options = await persistent();
    h = await startHarness(options);
    let blocked = true;
    const tg = platform((m) =>
      blocked && m.text === "first answer"
        ? new DeliveryError("403: Forbidden: bot was blocked by the user", { kind: "permanent", reason: "bot was blocked by the user" })
        : null,
    );
    h.gateway.register(tg.sink);
    fake!.script(text("first answer"));
    await send(h, "tg:1", "1", "hello");
    await h.gateway.idle();
    expect(tg.attempts).toEqual(["first answer"]);
    expect((await h.store.outbox.undeliverable("tg:1")).map((o) => [o.text, o.failure])).toEqual([["first answer", "bot was blocked by the user"]]);
    expect(await h.store.outbox.pending("tg:1")).toEqual([]);

    blocked = false;
    await send(h, "tg:1", "2", "/status");
    await h.gateway.idle();
    expect(tg.shown.at(-1)?.text).toMatch(/1 reply could not be delivered \(last: bot was blocked by the user\)\.$/);
    await h.close(true);

    h = await startHarness(options);
    const after = platform();
    h.gateway.register(after.sink);
    await h.gateway.recover();
    await h.gateway.idle();
    expect(after.attempts).toEqual([]);
  });

  it("does not hold back the replies after it", async () => {
    h = await startHarness();
    const tg = platform((m) =>
      m.sessionKey === "tg:1:topic:9" ? new DeliveryError("400: message thread not found", { kind: "permanent", reason: "message thread not found" }) : null,
    );
    h.gateway.register(tg.sink);
    h.fake.script(text("into the closed topic"), text("in the main chat"));
    await send(h, "tg:1:topic:9", "1", "hi");
    await send(h, "tg:1", "2", "hi");
    await h.gateway.idle();
    expect(tg.shown).toEqual([{ key: "tg:1", text: "in the main chat" }]);
  });
});

describe("a platform that asks to wait", () => {
  it("is retried after the time it asked for, not after the usual backoff", async () => {
    const clock = manualTimeouts();
    h = await startHarness({ timers: clock.timers });
    let waits = 1;
    const tg = platform(() => (waits-- > 0 ? new DeliveryError("429: Too Many Requests: retry after 300", { kind: "retry_after", ms: 300_000 }) : null));
    h.gateway.register(tg.sink);
    h.fake.script(text("patience"));
    await send(h, "tg:1", "1", "hi");
    await h.gateway.idle();
    expect(clock.delays()).toEqual([300_000]);
    expect(tg.shown).toEqual([]);
    clock.fireAll();
    await h.gateway.idle();
    expect(tg.shown).toEqual([{ key: "tg:1", text: "patience" }]);
  });
});

describe("a chat that moved", () => {
  it("moves the conversation with its history and delivers the pending reply to the new chat", async () => {
    h = await startHarness();
    const tg = platform((m) =>
      m.sessionKey === "tg:100" ? new DeliveryError("400: group chat was upgraded to a supergroup chat", { kind: "moved", to: "tg:-100200" }) : null,
    );
    h.gateway.register(tg.sink);
    h.fake.script(text("hello group"));
    await send(h, "tg:100", "1", "remember the word swordfish");
    await h.gateway.idle();
    expect(tg.shown).toEqual([{ key: "tg:-100200", text: "hello group" }]);
    expect(await h.store.sessions.find("tg:100")).toBeNull();
    expect(await h.store.requests.ofSession("tg:-100200")).toHaveLength(1);

    const seen = deferred<string>();
    h.fake.script((req) => {
      seen.resolve(JSON.stringify(req.messages));
      return text(`you said ${lastUserText(req)}`);
    });
    await send(h, "tg:-100200", "2", "what was the word?");
    await h.gateway.idle();
    expect(await seen.promise).toContain("swordfish");
    expect(tg.shown.at(-1)).toEqual({ key: "tg:-100200", text: "you said what was the word?" });
  });
});

describe("moving a conversation", () => {
  it("is refused, moving nothing, when the new chat already has a task under way", async () => {
    h = await startHarness({ files: { "skills/ask/SKILL.md": "---\nname: ask\ndescription: Asks.\n---\nAsk.\n" } });
    const tg = platform();
    h.gateway.register(tg.sink);
    h.fake.script(text("old chat"), { content: [{ type: "tool_use", id: "toolu_1", name: "use_skill", input: { name: "ask", message: "go" } }] }, text("Which one?"));
    await send(h, "tg:100", "1", "hi");
    await send(h, "tg:-1002", "2", "start something");
    await h.gateway.idle();
    expect((await h.store.tasks.active("tg:-1002"))?.status).toBe("waiting_user");
    expect(await h.store.sessions.move("tg:100", "tg:-1002")).toEqual({ refused: "tg:-1002 already has a conversation under way" });
    expect(await h.store.requests.ofSession("tg:100")).toHaveLength(1);
  });
});

describe("indicators a previous process left behind", () => {
  it("are taken back when the provider registers again, and forgotten once cleared", async () => {
    const options = await persistent();
    h = await startHarness(options);
    await h.gateway.rememberIndicator("tg:1", '{"reaction":"eyes","ts":"1.2"}');
    await h.gateway.rememberIndicator("tg:2", '{"reaction":"eyes","ts":"3.4"}');
    await h.gateway.forgetIndicator("tg:2");
    await h.close(true);

    h = await startHarness(options);
    const cleared: Array<[string, string]> = [];
    const done = deferred<void>();
    h.gateway.register({
      ...platform().sink,
      clearIndicator: async (key, data) => {
        cleared.push([key, data]);
        done.resolve();
      },
    });
    await done.promise;
    expect(cleared).toEqual([["tg:1", '{"reaction":"eyes","ts":"1.2"}']]);
    await h.gateway.idle();
    expect(await h.store.indicators.list("tg")).toEqual([]);
  });
});
