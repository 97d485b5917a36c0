// call_agent: a non-interactive call that cannot loop, hang or crash — through the real SDK and the strict fake.
import { afterEach, describe, expect, it } from "vitest";
import { CallLimiter, TargetBusyError } from "../../src/runtime/call-limiter.js";
import { capResult, clampTimeout } from "../../src/runtime/tools/call-agent.js";
import { lastUserText, reply, systemText, text, toolUse, type FakeReply } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { agentFiles, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { resultTexts, speaker } from "../helpers/requests.js";
import { manualTimeouts } from "../helpers/timers.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

describe("call_agent", () => {
  it("runs the target in batch mode and returns its final text as the tool result", async () => {
    h = await startHarness({ files: agentFiles("researcher") });
    h.fake.script(
      reply(toolUse("call_agent", { agent: "researcher", message: "best month for Lisbon?" }, "toolu_call")),
      (req) => {
        expect(systemText(req)).toContain("you cannot talk with the user");
        expect(lastUserText(req)).toBe("best month for Lisbon?");
        return text("May or October.");
      },
      (req) => {
        expect(resultTexts(req)).toEqual([{ content: "May or October.", error: false }]);
        return text("Go in May.");
      },
    );
    expect(await h.say("when should I go?")).toEqual(["main: Go in May."]);
    expect(await h.runtime.stacks.hasActive("console:t")).toBe(false);
  });

  it("returns the report_back value when given an output_schema", async () => {
    h = await startHarness({ files: agentFiles("researcher") });
    const schema = { type: "object", properties: { month: { type: "string" } }, required: ["month"] };
    h.fake.script(
      reply(toolUse("call_agent", { agent: "researcher", message: "best month?", output_schema: schema })),
      reply(toolUse("report_back", { month: "May" })),
      (req) => {
        expect(resultTexts(req)).toEqual([{ content: '{"month":"May"}', error: false }]);
        return text("May.");
      },
    );
    await h.send("go");
  });

  it("refuses a call deeper than the depth limit, naming the chain", async () => {
    h = await startHarness({ files: agentFiles("a", "b", "c", "d", "e", "f") });
    const nextOf: Record<string, string> = { main: "a", a: "b", b: "c", c: "d", d: "e", e: "f" };
    const seen: string[] = [];
    h.fake.fallback((req) => {
      const who = speaker(req);
      const [result] = resultTexts(req);
      if (result) {
        seen.push(`${who} got: ${result.content}`);
        return text(`${who} done`);
      }
      return reply(toolUse("call_agent", { agent: nextOf[who]!, message: `from ${who}` }));
    });
    await h.send("go deep");
    expect(seen[0]).toBe("e got: call depth limit 5 reached: main → a → b → c → d → e");
    expect(seen.slice(1)).toEqual(["d got: e done", "c got: d done", "b got: c done", "a got: b done", "main got: a done"]);
  });

  it("refuses a cycle: a → b → a", async () => {
    h = await startHarness({ files: agentFiles("a", "b") });
    h.fake.script(
      reply(toolUse("call_agent", { agent: "a", message: "x" })),
      reply(toolUse("call_agent", { agent: "b", message: "y" })),
      reply(toolUse("call_agent", { agent: "a", message: "z" })),
      (req) => {
        expect(resultTexts(req)).toEqual([{ content: "cycle detected: a → b → a", error: true }]);
        return text("b gives up");
      },
      text("a done"),
      text("main done"),
    );
    expect(await h.say("go")).toEqual(["main: main done"]);
  });

  it("the interactive hand-overs share the depth rule", async () => {
    h = await startHarness({ files: agentFiles("a", "b"), callDepthMax: 1 });
    h.fake.script(reply(toolUse("use_agent", { name: "a", message: "x" })), reply(toolUse("use_agent", { name: "b", message: "y" })), (req) => {
      expect(resultTexts(req)).toEqual([{ content: "call depth limit 1 reached: main → a", error: true }]);
      return text("a cannot go deeper");
    });
    expect(await h.say("go")).toEqual(["agent:a: a cannot go deeper"]);
  });

  it("names the available agents when the target does not exist, and refuses oversized messages", async () => {
    h = await startHarness({ files: agentFiles("researcher") });
    h.fake.script(
      reply(toolUse("call_agent", { agent: "nobody", message: "x" }), toolUse("call_agent", { agent: "researcher", message: "é".repeat(60 * 1024) })),
      (req) => {
        expect(resultTexts(req)).toEqual([
          { content: 'there is no agent named "nobody"; available: researcher', error: true },
          { content: "the message is 120 KiB; call_agent accepts at most 100 KiB. Send a summary or the relevant part.", error: true },
        ]);
        return text("ok");
      },
    );
    await h.send("go");
  });

  it("times out: the callee's model call is cancelled, its frame closed in the log, the caller told", async () => {
    const clock = manualTimeouts();
    h = await startHarness({ files: agentFiles("slow"), timers: clock.timers });
    const calleeCalled = deferred<void>();
    h.fake.script(
      reply(toolUse("call_agent", { agent: "slow", message: "think", timeout_ms: 0 })),
      () => {
        calleeCalled.resolve();
        return { hang: true };
      },
      (req) => {
        expect(resultTexts(req)).toEqual([{ content: "call to slow timed out after 1 s", error: true }]);
        return text("The slow agent did not answer in time.");
      },
    );
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "go" });
    await calleeCalled.promise;
    expect(clock.delays()).toEqual([1000]); // timeout_ms 0 was clamped to the minimum
    clock.fireAll();
    await h.gateway.idle();
    expect(h.seen.map((m) => m.text)).toEqual(["The slow agent did not answer in time."]);
    const closed = (await h.store.steps.log("console:t")).filter((e) => e.type === "agent_session_complete");
    expect(closed.map((e) => e.payload)).toEqual([expect.objectContaining({ agent_name: "agent:slow", is_error: true, result: "call to slow timed out after 1 s" })]);
  });

  it("a timeout closes nested batch frames and answers the tool uses they will never run", async () => {
    const clock = manualTimeouts();
    h = await startHarness({ files: agentFiles("outer", "inner"), timers: clock.timers });
    const innerCalled = deferred<void>();
    h.fake.script(
      reply(toolUse("call_agent", { agent: "outer", message: "go" })),
      // use_agent inside a batch run nests on the same batch stack.
      reply(toolUse("use_agent", { name: "inner", message: "deeper" }, "toolu_inner"), toolUse("complete", { result: "x" }, "toolu_later")),
      () => {
        innerCalled.resolve();
        return { hang: true };
      },
      text("timed out, sorry"),
    );
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "go" });
    await innerCalled.promise;
    clock.fireAll();
    await h.gateway.idle();
    // Found by the simulation: toolu_later stayed without a result.
    const answered = (await h.store.steps.log("console:t")).filter((e) => e.type === "tool_result").map((e) => (e.payload as { tool_use_id: string }).tool_use_id);
    expect(answered).toEqual(expect.arrayContaining(["toolu_inner", "toolu_later"]));
    expect(await h.store.steps.openAgentSessions("console:t")).toEqual([]);
  });

  it("caps calls in flight per target: others wait in a bounded queue, then get 'target busy'", async () => {
    h = await startHarness({ files: agentFiles("busy"), limiter: new CallLimiter(1, 1) });
    const release = deferred<FakeReply>();
    const firstIn = deferred<void>();
    h.fake.fallback((req) => {
      if (speaker(req) === "busy") {
        firstIn.resolve();
        return release.promise;
      }
      const [result] = resultTexts(req);
      return result ? text(`main got: ${result.content}`) : reply(toolUse("call_agent", { agent: "busy", message: lastUserText(req) }));
    });
    for (const session of ["s1", "s2", "s3"]) {
      await h.gateway.submit({ sessionKey: `console:${session}`, messageId: session, userId: "u", text: session });
      if (session === "s1") await firstIn.promise;
    }
    const busy = await h.delivered((m) => m.sessionKey === "console:s3");
    expect(busy.text).toBe("main got: target busy: 1 calls to busy are running and 1 are waiting; try again later");
    release.resolve(text("finally"));
    await h.gateway.idle();
    expect(h.seen.filter((m) => m.sessionKey !== "console:s3").map((m) => m.text)).toEqual(["main got: finally", "main got: finally"]);
  });
});

describe("limits as units", () => {
  it("clamps timeouts to [1 s, 300 s] and survives nonsense", () => {
    expect([0, -5, 999, 1000, 45_000, 10_000_000, Number.NaN].map(clampTimeout)).toEqual([1000, 1000, 1000, 1000, 45_000, 300_000, 1000]);
  });

  it("caps a result at 1 MiB on a UTF-8 boundary with a note", () => {
    const capped = capResult("€".repeat(400_000)); // 1.2 MB, 3 bytes per character
    const [kept, note] = capped.split("\n[truncated");
    expect(Buffer.byteLength(kept!, "utf8")).toBeLessThanOrEqual(1024 * 1024);
    expect(kept!).toMatch(/^€+$/);
    expect(note).toBe(": the result was 1.1 MiB; only the first 1 MiB is shown]");
    expect(capResult("short")).toBe("short");
  });

  it("the limiter hands a freed slot to the next waiter and rejects waiters whose signal aborts", async () => {
    const limiter = new CallLimiter(1, 2);
    const never = new AbortController().signal;
    const first = await limiter.acquire("t", never);
    const aborted = new AbortController();
    const second = limiter.acquire("t", aborted.signal);
    const third = limiter.acquire("t", never);
    await expect(limiter.acquire("t", never)).rejects.toBeInstanceOf(TargetBusyError);
    aborted.abort(new Error("gave up"));
    await expect(second).rejects.toThrow("gave up");
    first();
    const release3 = await third;
    expect(limiter.inFlight("t")).toBe(1);
    release3();
    expect(limiter.inFlight("t")).toBe(0);
  });
});

describe("skills", () => {
  it("can use call_agent unless their whitelist excludes it", async () => {
    h = await startHarness({ files: { ...skillFile("s", "S."), ...skillFile("narrow", "N.", "allowed-tools: use_agent\n"), ...agentFiles("r") } });
    h.fake.script(
      reply(toolUse("use_skill", { name: "s", message: "x" })),
      (req) => {
        expect(req.tools!.map((t) => t.name)).toContain("call_agent");
        return reply(toolUse("complete", { result: "ok" }));
      },
      reply(toolUse("use_skill", { name: "narrow", message: "x" })),
      (req) => {
        expect(req.tools!.map((t) => t.name)).not.toContain("call_agent");
        return reply(toolUse("complete", { result: "ok" }));
      },
      text("done"),
    );
    await h.send("go");
    expect(h.fake.pending()).toBe(0);
  });
});
