// Who can stop a request's run. Without a session budget or a daily quota the run is stopped only by its worker (a
// /cancel, the gateway stopping) and takes the worker's signal as it is; with one, the run has a controller of its
// own that a refused model call stops, and that still follows the worker's. Both ways, a /cancel stops the model
// call under way and a shutdown the tool under way.
import { afterEach, describe, expect, it } from "vitest";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, toolUse } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { startHarness, type Harness, type HarnessOptions } from "../helpers/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const SETUPS: Array<[string, HarnessOptions]> = [
  ["no budget, no quota", {}],
  ["a session token budget", { sessionTokenBudget: 1_000_000 }],
  ["a daily quota", { quotas: { settings: { userDailyUsd: 100 }, now: () => Date.UTC(2026, 10, 28, 12) } }],
];

describe.each(SETUPS)("with %s", (_name, options) => {
  it("a turn cut off by /cancel before its first commit is closed and never runs again after a restart", async () => {
    h = await startHarness(options);
    const called = deferred<void>();
    h.fake.script(() => {
      called.resolve();
      return { hang: true };
    });
    await h.gateway.submit({ sessionKey: "console:t", messageId: "1", userId: "alice", text: "think" });
    await called.promise;
    await h.gateway.submit({ sessionKey: "console:t", messageId: "2", userId: "alice", text: "/cancel" });
    await h.gateway.idle();
    expect(h.seen.map((m) => m.text).at(-1)).toBe("Cancelled.");
    expect(await h.store.tasks.active("console:t")).toBeNull();
    // Found by the simulation: the cut-off request stayed pending and ran again on the next start.
    expect(await h.store.requests.unfinished()).toEqual([]);
    expect(await h.gateway.recover()).toBe(0);
  });

  it("the gateway stopping aborts the tool under way with its reason, and the request waits to resume", async () => {
    const reasons: unknown[] = [];
    const running = deferred<void>();
    const wait: Tool = {
      spec: { name: "wait_for_it", description: "Waits until it is aborted.", input_schema: { type: "object" } },
      idempotent: true,
      run: (_input, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            reasons.push(ctx.signal.reason);
            resolve({ content: "stopped" });
          });
          running.resolve();
        }),
    };
    h = await startHarness({ ...options, tools: [wait] });
    h.fake.script(reply(toolUse("wait_for_it", {})));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "1", userId: "alice", text: "wait" });
    await running.promise;

    await h.gateway.stop();
    expect(reasons).toHaveLength(1);
    // Not a /cancel: the request is kept to resume at the next start.
    expect((await h.store.requests.unfinished()).map((r) => r.status)).toEqual(["running"]);
  });
});
