// Images from an MCP server are hostile input: through the whole path (the fault server over stdio, the real
// runtime, the strict fake Messages API), a JPEG called a PNG, a decompression bomb and a broken PNG
// each become a line saying why they are not shown; the good image is kept as a file of the conversation and
// reaches the model as one image block. Nothing crashes, and nothing else is stored. (Bad base64 cannot come from
// a server built on the SDK, which checks its own output: test/mcp/result.test.ts shows it.)
import { afterEach, expect, it } from "vitest";
import type { McpManager } from "../../src/mcp/manager.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { faultServer, mcpConfig, startMcp } from "../helpers/mcp.js";
import { toolResults } from "../helpers/requests.js";

let h: Harness | undefined;
let manager: McpManager | undefined;
afterEach(async () => {
  await h?.close();
  await manager?.close();
  h = manager = undefined;
});

it("shows the one good image as an image block and says why each hostile one is not shown", async () => {
  manager = (await startMcp(mcpConfig({ fault: faultServer({ env: { FAULT_IMAGES: "1" } }) }))).manager;
  h = await startHarness({ mcp: manager });
  let result: { content: string; error: boolean } | undefined;
  let blocks: Array<{ type: string; source?: { media_type: string } }> = [];
  h.fake.script(reply(toolUse("mcp__fault__hostile_images", {}, "toolu_imgs")), (req) => {
    result = toolResults(req)[0];
    blocks = req.messages.at(-1)!.content as typeof blocks;
    return text("One image came through.");
  });
  expect(await h.say("show me the images")).toEqual(["main: One image came through."]);
  expect(h.fake.rejected()).toEqual([]);
  expect(result!.content.split("\n")).toEqual([
    "[image not shown: the data is not a image/png image]",
    expect.stringMatching(/^\[image not shown: "fault-hostile_images\.png" is 20000.20000 .*; send a smaller image\.\]$/),
    expect.stringMatching(/^\[image not shown: "fault-hostile_images\.png" looks like an image but could not be read/),
    expect.stringMatching(/^\[image: fault-hostile_images\.png \(image\/png, \d+ bytes\), file id \S+; shown to you after this result\]$/),
  ]);
  expect(result!.error).toBe(false);
  expect(blocks.filter((b) => b.type === "image").map((b) => b.source?.media_type)).toEqual(["image/png"]);
  expect((await h.store.files.ofSession("console:t")).map((f) => f.name)).toEqual(["fault-hostile_images.png"]);
});
