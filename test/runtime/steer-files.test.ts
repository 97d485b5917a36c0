// MID_TURN=steer with files: a message the owner sends while the agent works joins the running frame with its files,
// shown to the model like any message's (they used to be dropped: only the text joined).
import { afterEach, expect, it } from "vitest";
import { acceptFile } from "../../src/files/intake.js";
import { reply, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { heldTool } from "../helpers/tools.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

type Block = { type: string; text?: string; title?: string };
const lastUser = (req: MessagesRequest) => req.messages.at(-1)!.content as Block[];

it("a steered message's CSV reaches the running frame as a document, after the tool results", async () => {
  const search = heldTool();
  h = await startHarness({ tools: [search.tool], midTurn: "steer" });
  h.fake.script(reply(toolUse("search_flights", { to: "Lisbon" }, "toolu_s")), text("Using your dates: 2 flights."));
  await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "find flights to Lisbon" });
  await search.started;
  const dates = await acceptFile({ name: "dates.csv", bytes: Buffer.from("from,to\n2026-06-01,2026-06-08\n") }, { maxFileBytes: 1024 * 1024 });
  const steered = await h.gateway.submit({ sessionKey: "console:t", messageId: "m2", userId: "alice", text: "these dates", files: [dates] });
  expect(steered.status).toBe("accepted");
  await h.delivered((m) => m.kind === "notice");
  search.release();
  await h.gateway.idle();

  const calls = h.fake.accepted();
  expect(calls).toHaveLength(2);
  expect(h.fake.rejected()).toEqual([]);
  const blocks = lastUser(calls[1]!);
  expect(blocks.map((b) => b.type)).toEqual(["tool_result", "text", "text", "document"]);
  expect(blocks[1]!.text).toBe("these dates");
  expect(blocks[2]!.text).toMatch(/^\[Attached file: dates\.csv \(text\/csv, /);
  expect(blocks[3]!.title).toBe("dates.csv");
});
