// A call_agent callee that runs on after its caller stopped waiting: it must never commit any part of the step
// its caller is in the middle of. (Found by the simulation, seeds 817 and 1440: the callee flushed the caller's
// journal, so the caller's "tool about to run" mark could be cleared on disk before the call's result was.)
import { afterEach, describe, expect, it } from "vitest";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { agentFiles, startHarness, type Harness } from "../helpers/harness.js";
import { resultTexts, speaker } from "../helpers/requests.js";
import { manualTimeouts } from "../helpers/timers.js";
import { heldTool } from "../helpers/tools.js";

let h: Harness;
/** Held tools still waiting when a test fails: released first, so the gateway can stop. */
let holds: Array<() => void> = [];
afterEach(async () => {
  for (const release of holds) release();
  holds = [];
  await h?.close();
  h = undefined!;
});

/** A side-effecting tool (so a mark is committed before it runs); `ran` resolves at its first run. */
function ledgerTool() {
  const ran = deferred<void>();
  let runs = 0;
  const tool: Tool = {
    spec: { name: "ledger", description: "Records a booking.", input_schema: { type: "object" } },
    idempotent: false,
    run: async () => {
      runs++;
      ran.resolve();
      return { content: "recorded" };
    },
  };
  return { tool, ran: ran.promise, runs: () => runs };
}

function toolResultIds(rows: Array<{ type: string; payload: unknown }>): string[] {
  return rows.filter((e) => e.type === "tool_result").map((e) => (e.payload as { tool_use_id: string }).tool_use_id);
}

describe("call_agent: a callee whose caller gave up", () => {
  it("commits only its own rows: the caller's unfinished step stays uncommitted until the caller ends it", async () => {
    const clock = manualTimeouts();
    const stubborn = heldTool("think_hard", "thought"); // it does not notice its abort
    const ledger = ledgerTool();
    const search = heldTool();
    holds = [stubborn.release, search.release];
    h = await startHarness({ files: agentFiles("slow"), timers: clock.timers, tools: [stubborn.tool, ledger.tool, search.tool] });
    h.fake.fallback((req) => {
      const results = resultTexts(req);
      if (speaker(req) === "slow") {
        // The callee thinks (ignoring its abort), then books: two tool uses in one message.
        return results.length === 0 ? reply(toolUse("think_hard", {}, "toolu_think"), toolUse("ledger", {}, "toolu_book")) : text("booked");
      }
      if (results.length === 0)
        return reply(toolUse("call_agent", { agent: "slow", message: "book it", timeout_ms: 5_000 }, "toolu_call"), toolUse("search_flights", {}, "toolu_search"));
      return text(`main saw: ${results.map((r) => r.content).join(" | ")}`);
    });

    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "go" });
    await stubborn.started;
    clock.fireAll(); // the call's deadline: main stops waiting and goes on to its next tool, which holds
    await search.started;
    stubborn.release(); // the abandoned callee runs on: its booking commits a mark first
    await ledger.ran;

    // Main is still in the middle of its step (search_flights runs): nothing of that step is on disk yet.
    const midway = await h.store.steps.log("console:t");
    expect(toolResultIds(midway)).not.toContain("toolu_call");
    const main = (await h.store.steps.frames("console:t"))[0]!;
    expect(main.runningToolUseId).toBe("toolu_call");

    search.release();
    await h.gateway.idle();
    await h.runtime.limiter.idle();
    expect(h.seen.map((m) => m.text)).toEqual(["main saw: call to slow timed out after 5 s | 3 flights to Lisbon"]);
    const rows = await h.store.steps.log("console:t");
    expect(toolResultIds(rows).filter((id) => id === "toolu_call")).toHaveLength(1);
    expect(toolResultIds(rows)).toEqual(expect.arrayContaining(["toolu_think", "toolu_book"]));
    expect(await h.store.steps.openAgentSessions("console:t")).toEqual([]);
    expect(ledger.runs()).toBe(1);
  });
});
