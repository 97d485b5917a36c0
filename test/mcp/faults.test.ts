// The fault server (test/fakes/mcp/fault-server.ts) through the MCP manager: every way a server can misbehave ends in
// a clear, bounded result, and the gateway goes on.
import { afterEach, describe, expect, it } from "vitest";
import type { McpManager } from "../../src/mcp/manager.js";
import type { ToolContext, ToolOutput } from "../../src/runtime/tools/tool.js";
import { faultServer, mcpConfig, recordingObserver, startMcp } from "../helpers/mcp.js";
import { heldTimeouts } from "../helpers/timers.js";

const API_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
let manager: McpManager | undefined;
afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

function run(name: string, input: Record<string, unknown> = {}, signal = new AbortController().signal): Promise<ToolOutput> {
  const tool = manager!.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.run(input, { signal } as ToolContext);
}

describe("a misbehaving MCP server", () => {
  it("a call that hangs ends with an error result at the timeout, and the server is sent notifications/cancelled", async () => {
    const deadline = heldTimeouts(7_777);
    const started = await startMcp(mcpConfig({ fault: faultServer() }), { timers: deadline.timers, settings: { toolTimeoutMs: 7_777 } });
    manager = started.manager;
    const result = run("mcp__fault__hang");
    await started.waitFor("hang: waiting to be cancelled");
    deadline.fire();
    expect(await result).toEqual({
      content:
        "mcp__fault__hang timed out: the MCP server fault sent no answer and no progress for 7.777 s (MCP_TOOL_TIMEOUT_MS), so the call was cancelled. It may or may not have had its effect.",
      isError: true,
    });
    await started.waitFor("(stderr): cancelled: no answer within 7777 ms");
    expect(JSON.parse((await run("mcp__fault__cancellations")).content)).toEqual(["no answer within 7777 ms"]);
  });

  it("a call cancelled by its turn (/cancel, shutdown) sends notifications/cancelled too", async () => {
    const started = await startMcp(mcpConfig({ fault: faultServer() }));
    manager = started.manager;
    const turn = new AbortController();
    const result = run("mcp__fault__hang", {}, turn.signal);
    await started.waitFor("hang: waiting to be cancelled");
    turn.abort();
    expect(await result).toEqual({ content: "mcp__fault__hang was cancelled before the MCP server fault answered", isError: true });
    await started.waitFor("(stderr): cancelled: the turn was cancelled");
  });

  it("progress notifications keep a slow call alive past the timeout", async () => {
    const started = await startMcp(mcpConfig({ fault: faultServer() }), { settings: { toolTimeoutMs: 400 } });
    manager = started.manager;
    expect(await run("mcp__fault__progress", { steps: 8, ms: 100 })).toEqual({ content: "done after 8 steps" });
  });

  it("a server that crashes mid-call answers with an error result, comes back, and its tools work again", async () => {
    const watch = recordingObserver();
    const started = await startMcp(mcpConfig({ fault: faultServer() }), { observer: watch.observer });
    manager = started.manager;
    const back = watch.connected("fault");
    const crashed = await run("mcp__fault__crash");
    expect(crashed.isError).toBe(true);
    expect(crashed.content).toMatch(/^mcp__fault__crash failed: the MCP server fault could not be reached: .*Connection closed/);
    // Meanwhile its tools answer that it is down, rather than not at all.
    const down = await run("mcp__fault__echo", { text: "hello?" });
    expect(down).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^mcp__fault__echo cannot be called now: the MCP server fault is (not connected|still connecting)/),
    });
    await back;
    expect(await run("mcp__fault__echo", { text: "back" })).toEqual({ content: "back" });
    expect(started.lines.some((l) => l.level === 50 && l.msg.includes("MCP server fault disconnected"))).toBe(true);
    expect(started.lines.some((l) => l.msg === "MCP server fault reconnected with 11 tools")).toBe(true);
    expect(watch.calls).toContainEqual({ server: "fault", outcome: "error" });
  });

  it("5 MB of text is cut to MCP_MAX_RESULT_BYTES with a note", async () => {
    manager = (await startMcp(mcpConfig({ fault: faultServer() }), { settings: { maxResultBytes: 64 * 1024 } })).manager;
    const result = await run("mcp__fault__huge", { bytes: 5 * 1024 * 1024 });
    expect(result.content.length).toBeLessThan(65 * 1024);
    expect(result.content.startsWith("x".repeat(64 * 1024))).toBe(true);
    expect(
      result.content.endsWith(
        "[the result was cut: it was 5.0 MB, more than the 64.0 KB a tool result may have here (MCP_MAX_RESULT_BYTES). Ask the tool for less, e.g. a smaller range or page.]",
      ),
    ).toBe(true);
  });

  it("a changed tool list is listed again: the new tool is offered and works", async () => {
    const started = await startMcp(mcpConfig({ fault: faultServer() }));
    manager = started.manager;
    expect(manager.offers("mcp__fault__late")).toBe(false);
    await run("mcp__fault__add_tool");
    await started.waitFor("MCP server fault changed its tools; it has 12 now");
    expect(manager.list().map((t) => t.spec.name)).toContain("mcp__fault__late");
    expect(await run("mcp__fault__late")).toEqual({ content: "late tool ran" });
  });

  it("an image that is not one is a note; isError is an error result", async () => {
    manager = (await startMcp(mcpConfig({ fault: faultServer() }))).manager;
    expect(await run("mcp__fault__bad_image")).toEqual({
      content: '[image not shown: the data is not a image/png image]\n[image not shown: "image/svg+xml" is not an image type the model reads (PNG, JPEG, GIF, WebP)]',
    });
    expect(await run("mcp__fault__fail")).toEqual({ content: "the tool failed on purpose", isError: true });
  });

  it("a hostile tool list: odd names made to fit, huge descriptions cut, huge schemas and broken entries left out, each logged", async () => {
    const started = await startMcp(mcpConfig({ evil: faultServer({ env: { FAULT_LIST: "hostile" } }) }));
    manager = started.manager;
    const tools = manager.list();
    for (const t of tools) expect(t.spec.name).toMatch(API_NAME);
    expect(tools.map((t) => t.spec.name)).toEqual([
      "mcp__evil__dotted_name_with_spaces",
      expect.stringMatching(/^mcp__evil__avery_long_very_long_very_long_very_long_ver_[0-9a-f]{8}$/),
      expect.stringMatching(/^mcp__evil__dotted_name_with_spaces_[0-9a-f]{8}$/),
      "mcp__evil__loud",
      "mcp__evil__echo",
    ]);
    expect(tools.find((t) => t.spec.name === "mcp__evil__loud")!.spec.description).toHaveLength(2001);
    const notes = started.lines.filter((l) => l.msg.startsWith("MCP server evil: ")).map((l) => l.msg);
    expect(notes).toEqual(
      expect.arrayContaining([
        'MCP server evil: tool "dotted.name/with spaces" is offered as mcp__evil__dotted_name_with_spaces (the Messages API takes A-Z, a-z, 0-9, _ and -, at most 64 characters)',
        expect.stringMatching(/^MCP server evil: tool "enormous" is left out: its input schema is \d+ bytes, more than 32768$/),
        "MCP server evil: tool #6 of the list is left out: inputSchema: Invalid input: expected object, received undefined",
        'MCP server evil: tool "echo" is listed twice; the second is left out',
      ]),
    );
  });

  it("tools/list is read page after page", async () => {
    manager = (await startMcp(mcpConfig({ fault: faultServer({ env: { FAULT_PAGE_SIZE: "3" } }) }))).manager;
    expect(manager.list()).toHaveLength(11);
    expect(await run("mcp__fault__delete_everything")).toEqual({ content: "deleted everything" });
  });

  it("a server slower than MCP_CONNECT_TIMEOUT_MS does not hold up the start: it joins when it is up, and says so", async () => {
    const watch = recordingObserver();
    const up = watch.connected("slow");
    const started = await startMcp(mcpConfig({ slow: faultServer({ env: { FAULT_DELAY_MS: "500" } }) }), {
      settings: { connectTimeoutMs: 100 },
      observer: watch.observer,
    });
    manager = started.manager;
    expect(manager.views()[0]!.status).toBe("connecting");
    expect(manager.list()).toEqual([]);
    expect(started.lines.find((l) => l.level === 40)?.msg).toBe(
      "MCP servers still connecting after 100 ms (MCP_CONNECT_TIMEOUT_MS): slow; their tools join when they are up",
    );
    await up;
    await started.waitFor("MCP server slow connected with 11 tools");
    expect(await run("mcp__slow__echo", { text: "late but here" })).toEqual({ content: "late but here" });
  });

  it("a server that cannot start is logged and retried; its tools answer why they are unavailable", async () => {
    const started = await startMcp(mcpConfig({ gone: { command: "/nonexistent/mcp-server" } }));
    manager = started.manager;
    const [view] = manager.views();
    expect(view).toMatchObject({ name: "gone", status: "retrying", tools: [], lastError: expect.stringContaining("ENOENT") });
    expect(started.lines.find((l) => l.level === 50)?.msg).toMatch(
      /^MCP server gone could not connect: spawn \/nonexistent\/mcp-server ENOENT.*Its tools are unavailable; trying again in 1 s$/,
    );
    expect(await run("mcp__gone__anything")).toEqual({
      content: expect.stringMatching(/^mcp__gone__anything cannot be called now: the MCP server gone is not connected \(spawn .* ENOENT\)/),
      isError: true,
    });
  });

  it("stderr is logged line by line, with mcp.json's secrets redacted; the server sees only its own environment", async () => {
    const secret = "fault-secret-0123456789";
    const started = await startMcp(mcpConfig({ fault: faultServer({ env: { FAULT_SECRET: "${FAULT_SECRET}" } }) }, { FAULT_SECRET: secret }));
    manager = started.manager;
    await started.waitFor("fault server ready");
    expect(started.text()).not.toContain(secret);
    expect(started.lines.find((l) => l.msg.includes("fault server ready"))?.msg).toMatch(
      /^MCP server fault \(stderr\): fault server ready \(pid \d+, secret check: \[redacted\]\)$/,
    );
  });
});
