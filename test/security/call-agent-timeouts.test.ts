// call_agent's timeouts must hold against callees that do not cooperate: a tool that ignores its abort
// signal, and two chats whose agents wait for each other's slots. Virtual time: nothing here sleeps, and
// the deadlines are reached only by advancing the clock (or, for the deadlock, never).
import { afterEach, describe, expect, it } from "vitest";
import { CallLimiter, TargetBusyError } from "../../src/runtime/call-limiter.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { lastUserText, reply, text, toolUse, type FakeReply } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { agentFiles, startHarness, type Harness } from "../helpers/harness.js";
import { heldTool } from "../helpers/tools.js";
import { resultTexts, speaker } from "../helpers/requests.js";
import { VirtualTime } from "../sim/virtual-time.js";

let h: Harness;
let releaseStuck: (() => void) | null = null;
afterEach(async () => {
  releaseStuck?.(); // let an abandoned callee finish before its store closes
  releaseStuck = null;
  await h?.close();
  h = undefined!;
});

/** A tool that ignores its abort signal and returns only when the test says so. */
function stuckTool() {
  const entered = deferred<void>();
  const release = deferred<void>();
  const tool: Tool = {
    spec: { name: "stuck", description: "Never notices a cancel.", input_schema: { type: "object" } },
    idempotent: true,
    run: async () => {
      entered.resolve();
      await release.promise;
      return { content: "finally done" };
    },
  };
  return { tool, entered: entered.promise, release: () => release.resolve() };
}

describe("a callee that ignores its abort signal", () => {
  it("answers the caller with the timeout at the deadline, holds the slot until the callee stops, then closes it in the log", { timeout: 5_000 }, async () => {
    const time = new VirtualTime();
    const limiter = new CallLimiter(1, 0);
    const stuck = stuckTool();
    releaseStuck = stuck.release;
    h = await startHarness({ files: agentFiles("slow"), tools: [stuck.tool], timers: time, limiter });
    h.fake.fallback((req) => {
      if (speaker(req) === "slow") return reply(toolUse("stuck", {}));
      const [result] = resultTexts(req);
      if (result) return text(`main got: ${result.content}${result.error ? " (error)" : ""}`);
      return reply(toolUse("call_agent", { agent: "slow", message: lastUserText(req), timeout_ms: 1000 }));
    });

    await h.gateway.submit({ sessionKey: "console:s1", messageId: "m1", userId: "alice", text: "think" });
    await stuck.entered;
    time.advance(999);
    time.advance(1);
    const answer = await h.delivered((m) => m.sessionKey === "console:s1");
    expect(answer.text).toBe("main got: call to slow timed out after 1 s (error)");
    await h.gateway.idle();

    // The tool still hangs: the callee keeps its slot, so the cap of one still holds for everyone.
    expect(limiter.inFlight("slow")).toBe(1);
    expect((await h.store.steps.openAgentSessions("console:s1")).map((s) => s.agentName)).toEqual(["agent:slow"]);
    await h.gateway.submit({ sessionKey: "console:s2", messageId: "m2", userId: "bob", text: "think too" });
    const refused = await h.delivered((m) => m.sessionKey === "console:s2");
    expect(refused.text).toBe("main got: target busy: 1 calls to slow are running and 0 are waiting; try again later (error)");

    stuck.release();
    await limiter.idle();
    expect(limiter.inFlight("slow")).toBe(0);
    expect(await h.store.steps.openAgentSessions("console:s1")).toEqual([]);
    const closed = (await h.store.steps.log("console:s1")).filter((e) => e.type === "agent_session_complete");
    expect(closed.map((e) => e.payload)).toEqual([
      expect.objectContaining({
        agent_name: "agent:slow",
        is_error: true,
        result: "call to slow timed out after 1 s",
        note: "the caller had already given up waiting; nobody received this result",
      }),
    ]);
    expect(time.now() - Date.UTC(2026, 0, 1)).toBe(1000);
  });

  it("a callee that closes itself before its caller's step commits keeps its log in order (started, then ended)", { timeout: 5_000 }, async () => {
    const time = new VirtualTime();
    const flights = heldTool();
    h = await startHarness({ files: agentFiles("slow"), tools: [flights.tool], timers: time });
    const calleeIn = deferred<void>();
    h.fake.fallback((req) => {
      if (speaker(req) === "slow") {
        calleeIn.resolve();
        return { hang: true };
      }
      if (resultTexts(req).length > 0) return text("main is done");
      // The caller's step goes on after the call: it commits only once search_flights is back.
      return reply(toolUse("call_agent", { agent: "slow", message: "look it up", timeout_ms: 1000 }), toolUse("search_flights", {}));
    });
    await h.gateway.submit({ sessionKey: "console:s1", messageId: "m1", userId: "alice", text: "think" });
    await calleeIn.promise;
    // The deadline: the caller moves on to search_flights; the callee's aborted call ends and it closes itself.
    time.advance(1000);
    await flights.started;
    await h.runtime.limiter.idle();
    flights.release();
    expect((await h.delivered((m) => m.sessionKey === "console:s1")).text).toBe("main is done");
    await h.gateway.idle();
    const log = await h.store.steps.log("console:s1");
    const callee = log.filter((e) => e.agentSessionId !== null && log.some((s) => s.type === "agent_session" && s.agentSessionId === e.agentSessionId));
    expect(callee.map((e) => e.type)).toEqual(["agent_session", "message", "agent_session_complete"]);
    expect(await h.store.steps.openAgentSessions("console:s1")).toEqual([]);
  });

  it("a caller waiting in the queue gives up at its own deadline and says why", { timeout: 5_000 }, async () => {
    const time = new VirtualTime();
    const queued = deferred<void>();
    // Tells the test when a call has joined the queue, so it moves the clock only then.
    const limiter = new (class extends CallLimiter {
      override acquire(...args: Parameters<CallLimiter["acquire"]>) {
        const slot = super.acquire(...args);
        if (this.queued(args[0]) > 0) queued.resolve();
        return slot;
      }
    })(1, 1);
    h = await startHarness({ files: agentFiles("busy"), timers: time, limiter });
    const firstIn = deferred<void>();
    const release = deferred<FakeReply>();
    h.fake.fallback((req) => {
      if (speaker(req) === "busy") {
        firstIn.resolve();
        return release.promise;
      }
      const [result] = resultTexts(req);
      if (result) return text(`main got: ${result.content}`);
      return reply(toolUse("call_agent", { agent: "busy", message: lastUserText(req), timeout_ms: lastUserText(req) === "first" ? 60_000 : 2_000 }));
    });
    await h.gateway.submit({ sessionKey: "console:s1", messageId: "m1", userId: "alice", text: "first" });
    await firstIn.promise;
    await h.gateway.submit({ sessionKey: "console:s2", messageId: "m2", userId: "bob", text: "second" });
    // The second call waits in the queue; the wait counts against its 2 s.
    await queued.promise;
    time.advance(2_000);
    const gaveUp = await h.delivered((m) => m.sessionKey === "console:s2");
    expect(gaveUp.text).toBe("main got: call to busy timed out after 2 s waiting for a free slot (1 call to busy still running). Try again later.");
    release.resolve(text("done at last"));
    expect((await h.delivered((m) => m.sessionKey === "console:s1")).text).toBe("main got: done at last");
  });
});

describe("two chats whose agents call each other's busy targets", () => {
  it("refuses the wait that would deadlock at once, with a clear message, and the other call completes", { timeout: 5_000 }, async () => {
    const time = new VirtualTime(); // never advanced: nothing here may need a timeout to end
    h = await startHarness({ files: agentFiles("x", "y"), timers: time, limiter: new CallLimiter(1, 5) });
    const xIn = deferred<void>();
    const yIn = deferred<void>();
    const go = deferred<void>();
    h.fake.fallback(async (req) => {
      const who = speaker(req);
      const [result] = resultTexts(req);
      if (result) return text(`${who} got: ${result.content}`);
      const said = lastUserText(req);
      if (who === "main") return reply(toolUse("call_agent", { agent: said === "s1" ? "x" : "y", message: `for ${said}` }));
      if (said === "for s1") {
        // x of chat 1 holds x's only slot, and now calls y.
        xIn.resolve();
        await go.promise;
        return reply(toolUse("call_agent", { agent: "y", message: "from x" }));
      }
      if (said === "for s2") {
        // y of chat 2 holds y's only slot, and now calls x.
        yIn.resolve();
        await go.promise;
        return reply(toolUse("call_agent", { agent: "x", message: "from y" }));
      }
      return text(`${who} answers ${said.replace("from ", "")}`);
    });
    await h.gateway.submit({ sessionKey: "console:s1", messageId: "m1", userId: "alice", text: "s1" });
    await h.gateway.submit({ sessionKey: "console:s2", messageId: "m2", userId: "bob", text: "s2" });
    await Promise.all([xIn.promise, yIn.promise]);
    go.resolve();
    const replies = await Promise.all([h.delivered((m) => m.sessionKey === "console:s1"), h.delivered((m) => m.sessionKey === "console:s2")]);
    const texts = replies.map((m) => m.text).sort();
    // Which of the two waits closes the loop depends on which model answer arrives first; exactly one is refused.
    const refused = texts.filter((t) => /waiting would deadlock/.test(t));
    const answered = texts.filter((t) => /^main got: [xy] got: [xy] answers [xy]$/.test(t));
    expect({ refused: refused.length, answered: answered.length }).toEqual({ refused: 1, answered: 1 });
    expect(refused[0]).toMatch(
      /^main got: (x got: target busy: y is taken by calls that are waiting, directly or through their own calls, for x|y got: target busy: x is taken by calls that are waiting, directly or through their own calls, for y), which this call is running inside; waiting would deadlock\. Try again later, or do this without [xy]\.$/,
    );
    expect(time.now()).toBe(Date.UTC(2026, 0, 1));
  });

  it("refuses only a wait that can never end: a slot that may still free up is waited for", async () => {
    const never = new AbortController().signal;
    const one = new CallLimiter(1, 5);
    const x = await one.acquire("X", never);
    const y = await one.acquire("Y", never);
    const xWaitsForY = one.acquire("Y", never, x);
    await expect(one.acquire("X", never, y)).rejects.toBeInstanceOf(TargetBusyError);
    y();
    (await xWaitsForY)();
    x();
    await one.idle();

    // Two slots per target: X's second holder is not waiting for anything, so it can finish and free one.
    const two = new CallLimiter(2, 5);
    const giveUp = new AbortController();
    const x1 = await two.acquire("X", never);
    await two.acquire("X", never);
    const y1 = await two.acquire("Y", never);
    await two.acquire("Y", never);
    const x1WaitsForY = two.acquire("Y", giveUp.signal, x1);
    const y1WaitsForX = two.acquire("X", giveUp.signal, y1);
    expect([two.queued("Y"), two.queued("X")]).toEqual([1, 1]);
    giveUp.abort(new Error("test over"));
    await expect(x1WaitsForY).rejects.toThrow("test over");
    await expect(y1WaitsForX).rejects.toThrow("test over");
  });
});
