// MCP tools through the whole path: the real servers from npm (server-everything, server-filesystem) and the fault
// server, the real runtime and gateway, the real Anthropic SDK against the strict fake Messages API. What the model is
// offered and what it gets back are asserted where the model sees them: in the requests the fake receives.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { McpManager } from "../../src/mcp/manager.js";
import { reply, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { agentFile, startHarness, type Harness } from "../helpers/harness.js";
import { everythingStdio, faultServer, filesystemStdio, mcpConfig, recordingObserver, startMcp } from "../helpers/mcp.js";
import { heldTimeouts } from "../helpers/timers.js";
import { toolResults } from "../helpers/requests.js";

let h: Harness | undefined;
let manager: McpManager | undefined;
let dir = "";
afterEach(async () => {
  await h?.close();
  await manager?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = manager = undefined;
  dir = "";
});

const offered = (req: MessagesRequest) => (req.tools ?? []).map((t) => t.name);

describe("MCP tools through the whole path", () => {
  it("server-everything over stdio: the model is offered its tools and gets echo, get-sum and get-tiny-image as tool_results", async () => {
    manager = (await startMcp(mcpConfig({ everything: everythingStdio() }))).manager;
    h = await startHarness({ mcp: manager });
    h.fake.script(
      (req) => {
        expect(offered(req)).toEqual(
          expect.arrayContaining(["mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image", "mcp__everything__get-env"]),
        );
        const echo = req.tools!.find((t) => t.name === "mcp__everything__echo")!;
        expect(echo).toMatchObject({ description: "Echoes back the input string", input_schema: { type: "object", properties: { message: { type: "string" } } } });
        return reply(
          toolUse("mcp__everything__echo", { message: "hello" }, "toolu_echo"),
          toolUse("mcp__everything__get-sum", { a: 2, b: 40 }, "toolu_sum"),
          toolUse("mcp__everything__get-tiny-image", {}, "toolu_img"),
        );
      },
      (req) => {
        expect(toolResults(req)).toEqual([
          { id: "toolu_echo", content: "Echo: hello", error: false },
          { id: "toolu_sum", content: "The sum of 2 and 40 is 42.", error: false },
          {
            id: "toolu_img",
            content: expect.stringMatching(
              /^Here's the image you requested:\n\[image: everything-get-tiny-image\.png \(image\/png, [\d.]+ (KB|bytes)\), file id \S+; shown to you after this result\]\nThe image above is the MCP logo\.$/,
            ),
            error: false,
          },
        ]);
        // The image itself follows the results in the same user message, as an image block the API validates.
        const blocks = req.messages.at(-1)!.content as Array<{ type: string; source?: { media_type: string; data: string } }>;
        const image = blocks.find((b) => b.type === "image");
        expect(image?.source?.media_type).toBe("image/png");
        expect(Buffer.from(image!.source!.data, "base64").subarray(1, 4).toString()).toBe("PNG");
        return text("Echoed, summed, and fetched the logo.");
      },
    );
    expect(await h.say("try the tools")).toEqual(["main: Echoed, summed, and fetched the logo."]);
    expect(h.fake.rejected()).toEqual([]);
    // Kept with the conversation, by the step that committed the result naming it.
    expect((await h.store.files.ofSession("console:t")).map((f) => [f.name, f.mime, f.requestId])).toEqual([["everything-get-tiny-image.png", "image/png", null]]);
  });

  it("get-env shows the server's own environment and none of the gateway's secrets", async () => {
    const secrets = {
      ANTHROPIC_API_KEY: "sk-ant-api03-gateway-secret",
      TELEGRAM_BOT_TOKEN: "123456789:AAgatewaysecretgatewaysecretgatewaysec",
      DATABASE_URL: "postgres://sb:db-password@db/sb",
    };
    const gateway = { ...process.env, ...secrets };
    manager = (await startMcp(mcpConfig({ everything: everythingStdio({ env: { SERVER_SETTING: "given-by-mcp-json" } }) }), { env: gateway })).manager;
    h = await startHarness({ mcp: manager });
    h.fake.script(reply(toolUse("mcp__everything__get-env", {}, "toolu_env")), (req) => {
      const [result] = toolResults(req);
      const env = JSON.parse(result!.content) as Record<string, string>;
      expect(Object.keys(env).sort()).toEqual(["HOME", "PATH", "SERVER_SETTING"].filter((k) => k !== "HOME" || process.env.HOME !== undefined));
      for (const secret of Object.values(secrets)) expect(result!.content).not.toContain(secret);
      return text("It sees only what mcp.json gives it.");
    });
    expect(await h.say("what does the server see?")).toEqual(["main: It sees only what mcp.json gives it."]);
  });

  it("an agent limited to one MCP tool is offered only that one; main is offered them all", async () => {
    manager = (await startMcp(mcpConfig({ everything: everythingStdio() }))).manager;
    h = await startHarness({ mcp: manager, files: agentFile("adder", "You add numbers.", "tools: mcp__everything__get-sum\n") });
    h.fake.script(
      (req) => {
        expect(offered(req).filter((n) => n.startsWith("mcp__"))).toHaveLength(manager!.list().length);
        return reply(toolUse("use_agent", { name: "adder", message: "add 1 and 2" }));
      },
      (req) => {
        expect(offered(req)).toEqual(["complete", "mcp__everything__get-sum"]);
        // The model naming a tool it was not offered (models do): scripted on purpose.
        return {
          ...reply(toolUse("mcp__everything__echo", { message: "not mine" }, "toolu_x"), toolUse("mcp__everything__get-sum", { a: 1, b: 2 }, "toolu_y")),
          allowUnoffered: true,
        };
      },
      (req) => {
        expect(toolResults(req)).toEqual([
          { id: "toolu_x", content: 'tool "mcp__everything__echo" is not available to agent:adder; available: complete, mcp__everything__get-sum', error: true },
          { id: "toolu_y", content: "The sum of 1 and 2 is 3.", error: false },
        ]);
        return reply(toolUse("complete", { result: "3" }));
      },
      text("1 + 2 = 3"),
    );
    expect(await h.say("add 1 and 2")).toEqual(["main: 1 + 2 = 3"]);
  });

  it("server-filesystem: reading needs no approval; write_file (destructive) waits for the owner, then writes", async () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-fs-"));
    writeFileSync(join(dir, "notes.txt"), "buy milk");
    manager = (await startMcp(mcpConfig({ files: filesystemStdio(dir) }))).manager;
    h = await startHarness({ mcp: manager });
    const target = join(dir, "todo.txt");
    h.fake.script(
      reply(
        toolUse("mcp__files__read_text_file", { path: join(dir, "notes.txt") }, "toolu_read"),
        toolUse("mcp__files__write_file", { path: target, content: "buy milk\ncall Bob" }, "toolu_write"),
      ),
    );
    const shown = await h.send("copy my notes into a todo list");
    const prompt = shown.find((m) => m.approvalId);
    expect(prompt?.text).toMatch(/^🔐 main wants to run mcp__files__write_file: MCP server files, tool write_file\n/);
    expect(existsSync(target)).toBe(false);
    h.fake.script((req) => {
      expect(toolResults(req)).toEqual([
        { id: "toolu_read", content: "buy milk", error: false },
        { id: "toolu_write", content: `Successfully wrote to ${target}`, error: false },
      ]);
      return text("Done: todo.txt has your notes.");
    });
    await h.gateway.decide(prompt!.approvalId!, "alice", "approve");
    await h.gateway.idle();
    expect(readFileSync(target, "utf8")).toBe("buy milk\ncall Bob");
    expect(h.seen.at(-1)?.text).toBe("Done: todo.txt has your notes.");
  });

  it('"approval": "always" asks before a read-only tool; a definition\'s requires_approval covers MCP names', async () => {
    manager = (await startMcp(mcpConfig({ careful: everythingStdio({ approval: "always" }), everything: everythingStdio() }))).manager;
    h = await startHarness({ mcp: manager, files: agentFile("guarded", "Be guarded.", "tools: mcp__everything__*\nrequires_approval: [mcp__everything__echo]\n") });
    h.fake.script(reply(toolUse("mcp__careful__get-sum", { a: 1, b: 1 }, "toolu_c")));
    const asked = (await h.send("add")).find((m) => m.approvalId);
    expect(asked?.text).toMatch(/^🔐 main wants to run mcp__careful__get-sum: MCP server careful, tool get-sum\n/);
    h.fake.script(text("ok"));
    await h.gateway.decide(asked!.approvalId!, "alice", "deny");
    await h.gateway.idle();
    h.fake.script(
      reply(toolUse("use_agent", { name: "guarded", message: "echo hi" })),
      reply(toolUse("mcp__everything__get-sum", { a: 1, b: 1 }, "toolu_s"), toolUse("mcp__everything__echo", { message: "hi" }, "toolu_e")),
    );
    const second = (await h.send("delegate")).find((m) => m.approvalId);
    expect(second?.text).toMatch(/^🔐 agent:guarded wants to run mcp__everything__echo: MCP server everything, tool echo\n/);
    expect(toolResults(h.fake.accepted().at(-1)!)).toEqual([]);
  });

  it("a killed server comes back, and its tools work again through the model", async () => {
    const watch = recordingObserver();
    const retry = heldTimeouts(1000);
    manager = (await startMcp(mcpConfig({ fault: faultServer() }), { observer: watch.observer, timers: retry.timers })).manager;
    h = await startHarness({ mcp: manager });
    h.fake.script(reply(toolUse("mcp__fault__pid", {}, "toolu_pid")), text("noted"));
    await h.say("which process?");
    const pid = Number(toolResults(h.fake.accepted().at(-1)!)[0]!.content);
    const down = watch.disconnected("fault");
    process.kill(pid, "SIGKILL");
    await down;
    // The model calls it from memory: a server that is down offers no tools.
    h.fake.script({ ...reply(toolUse("mcp__fault__echo", { text: "anyone?" }, "toolu_down")), allowUnoffered: true }, (req) => {
      expect(toolResults(req)[0]).toMatchObject({
        error: true,
        content: expect.stringMatching(/^mcp__fault__echo cannot be called now: the MCP server fault is not connected \(the server process exited \(signal SIGKILL\)/),
      });
      expect(offered(req).filter((n) => n.startsWith("mcp__"))).toEqual([]);
      return text("The server is down.");
    });
    expect(await h.say("echo something")).toEqual(["main: The server is down."]);
    // The reconnect's backoff (1 s) runs out.
    const back = watch.connected("fault");
    retry.fire();
    await back;
    h.fake.script(reply(toolUse("mcp__fault__echo", { text: "back again" }, "toolu_up")), (req) => {
      expect(toolResults(req)).toEqual([{ id: "toolu_up", content: "back again", error: false }]);
      return text("It is back.");
    });
    expect(await h.say("and now?")).toEqual(["main: It is back."]);
  });

  it("a hung call ends with an is_error tool_result after MCP_TOOL_TIMEOUT_MS, and the server is told it was cancelled", async () => {
    const started = await startMcp(mcpConfig({ fault: faultServer() }), { settings: { toolTimeoutMs: 300 } });
    manager = started.manager;
    h = await startHarness({ mcp: manager });
    h.fake.script(reply(toolUse("mcp__fault__hang", {}, "toolu_hang")), (req) => {
      expect(toolResults(req)).toEqual([
        { id: "toolu_hang", error: true, content: expect.stringMatching(/^mcp__fault__hang timed out: the MCP server fault sent no answer and no progress for 0.3 s/) },
      ]);
      return text("That tool hung.");
    });
    expect(await h.say("hang")).toEqual(["main: That tool hung."]);
    await started.waitFor("(stderr): cancelled: no answer within 300 ms");
  });

  it("/cancel and shutdown cancel a call in flight: the server gets notifications/cancelled", async () => {
    const started = await startMcp(mcpConfig({ fault: faultServer() }));
    manager = started.manager;
    h = await startHarness({ mcp: manager });
    h.fake.script(reply(toolUse("mcp__fault__hang", {}, "toolu_1")));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "hang" });
    await started.waitFor("hang: waiting to be cancelled");
    expect((await h.say("/cancel")).join("\n")).toMatch(/cancel/i);
    await started.waitFor("(stderr): cancelled: the turn was cancelled");
    expect(started.lines.filter((l) => l.msg.includes("(stderr): cancelled:"))).toHaveLength(1);
    // And a call in flight when the gateway stops.
    h.fake.script(reply(toolUse("mcp__fault__hang", {}, "toolu_2")));
    await h.gateway.submit({ sessionKey: "console:u", messageId: "m2", userId: "alice", text: "hang again" });
    await started.waitFor("hang: waiting to be cancelled", 2);
    await h.gateway.stop();
    await started.waitFor("(stderr): cancelled: the turn was cancelled", 2);
  });

  it("server-everything's long-running operation: its progress keeps the call alive past the timeout", async () => {
    manager = (await startMcp(mcpConfig({ everything: everythingStdio() }), { settings: { toolTimeoutMs: 1200 } })).manager;
    h = await startHarness({ mcp: manager });
    h.fake.script(reply(toolUse("mcp__everything__trigger-long-running-operation", { duration: 2, steps: 4 }, "toolu_long")), (req) => {
      expect(toolResults(req)).toEqual([{ id: "toolu_long", content: "Long running operation completed. Duration: 2 seconds, Steps: 4.", error: false }]);
      return text("Finished.");
    });
    expect(await h.say("run the long one")).toEqual(["main: Finished."]);
  });
});
