// Stopping the gateway aborts every running turn through one listener on its shutdown signal (session-workers.ts),
// not one listener per turn.
import { afterEach, expect, it } from "vitest";
import { reply, toolUse } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import type { Tool } from "../../src/runtime/tools/tool.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

it("aborts the tool calls of every running turn when the gateway stops, and each of them ends", async () => {
  const running: string[] = [];
  const reasons: unknown[] = [];
  let bothRunning!: () => void;
  const both = new Promise<void>((r) => (bothRunning = r));
  const wait: Tool = {
    spec: { name: "wait_for_it", description: "Waits until it is aborted.", input_schema: { type: "object" } },
    idempotent: true,
    run: (_input, ctx) =>
      new Promise((resolve) => {
        running.push(ctx.sessionKey);
        if (running.length === 2) bothRunning();
        ctx.signal.addEventListener("abort", () => {
          reasons.push(ctx.signal.reason);
          resolve({ content: "stopped" });
        });
      }),
  };
  h = await startHarness({ tools: [wait] });
  h.fake.script(reply(toolUse("wait_for_it", {}, "toolu_a")), reply(toolUse("wait_for_it", {}, "toolu_b")));
  await h.gateway.submit({ sessionKey: "console:a", messageId: "m1", userId: "alice", text: "wait" });
  await h.gateway.submit({ sessionKey: "console:b", messageId: "m2", userId: "bob", text: "wait" });
  await both;

  await h.gateway.stop();
  expect(running.sort()).toEqual(["console:a", "console:b"]);
  expect(reasons).toHaveLength(2);
});
