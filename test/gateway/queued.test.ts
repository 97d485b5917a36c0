// A message that arrives while a turn runs waits for it (MID_TURN queue, the default); its sender is told at once
// instead of waiting in silence, and it is answered next, in order.
import { afterEach, expect, it } from "vitest";
import { text } from "../fakes/anthropic/server.js";
import { heldStep } from "../helpers/deferred.js";
import { startHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
afterEach(async () => h.close());

it("tells the sender of a message sent mid-turn that it waits, then answers it after the running one", async () => {
  h = await startHarness();
  const first = heldStep<ReturnType<typeof text>>();
  h.fake.script(first.step, text("Answer to the second."));
  await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "first" });
  await first.entered;
  const second = await h.gateway.submit({ sessionKey: "console:t", messageId: "m2", userId: "alice", text: "second" });
  expect(second.status).toBe("accepted");
  const notice = await h.delivered((m) => m.kind === "notice");
  expect(notice).toMatchObject({ agent: "switchboard", text: expect.stringContaining("I'll read this one as soon as I'm done") });
  // Told while the first turn still runs.
  expect(h.seen.map((m) => m.text)).toEqual([notice.text]);
  first.release(text("Answer to the first."));
  await h.gateway.idle();
  expect(h.seen.map((m) => m.text)).toEqual([notice.text, "Answer to the first.", "Answer to the second."]);
  // Once per message: a third look at the session tells nobody again.
  expect(h.seen.filter((m) => m.kind === "notice")).toHaveLength(1);
});
