// server-everything in its Streamable HTTP and SSE modes (`dist/index.js streamableHttp` / `sse`, PORT from the
// environment), run as a process of its own on a loopback port: the same tools over HTTP, a server that goes away
// and comes back, and mcp.json's headers on every request.
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import type { McpManager } from "../../src/mcp/manager.js";
import type { ToolContext } from "../../src/runtime/tools/tool.js";
import { EVERYTHING, mcpConfig, recordingObserver, startMcp } from "../helpers/mcp.js";
import { heldTimeouts } from "../helpers/timers.js";
import { freePort } from "../integration/child-process.js";

let manager: McpManager | undefined;
const servers: ChildProcess[] = [];
afterEach(async () => {
  await manager?.close();
  manager = undefined;
  for (const s of servers.splice(0)) s.kill("SIGKILL");
});

/** server-everything in `mode` on `port`, resolved once it says it listens. */
function startEverything(mode: "streamableHttp" | "sse", port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, mode], { env: { PATH: process.env.PATH ?? "", PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
  servers.push(child);
  return new Promise((resolve, reject) => {
    let seen = "";
    const look = (chunk: Buffer) => {
      seen += chunk.toString();
      if (/listening on port|running on/i.test(seen)) resolve(child);
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    child.once("exit", (code) => reject(new Error(`server-everything ${mode} exited (${code}): ${seen}`)));
  });
}

const ctx = { signal: new AbortController().signal } as ToolContext;

describe("MCP over HTTP", () => {
  it("Streamable HTTP: tools, structured content and resource links, with mcp.json's headers", async () => {
    const port = await freePort();
    await startEverything("streamableHttp", port);
    const started = await startMcp(
      mcpConfig({ web: { type: "http", url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: "Bearer ${WEB_TOKEN}" } } }, { WEB_TOKEN: "web-token-0123456789" }),
    );
    manager = started.manager;
    expect(manager.views()[0]).toMatchObject({ name: "web", transport: "http", status: "connected" });
    expect(await manager.get("mcp__web__echo")!.run({ message: "over http" }, ctx)).toEqual({ content: "Echo: over http" });
    expect(await manager.get("mcp__web__get-sum")!.run({ a: 20, b: 22 }, ctx)).toEqual({ content: "The sum of 20 and 22 is 42." });
    expect(await manager.get("mcp__web__get-structured-content")!.run({ location: "Chicago" }, ctx)).toEqual({
      content: '{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}',
    });
    const links = await manager.get("mcp__web__get-resource-links")!.run({ count: 2 }, ctx);
    expect(links.content.split("\n")).toEqual([
      "Here are 2 resource links to resources available in this server:",
      // As this version of server-everything describes them (its blob resource says text/plain).
      "[resource link: demo://resource/dynamic/blob/1 (Blob Resource 1, text/plain) Resource 1: plaintext resource]",
      "[resource link: demo://resource/dynamic/text/2 (Text Resource 2, text/plain) Resource 2: plaintext resource]",
    ]);
    expect(started.text()).not.toContain("web-token-0123456789");
  });

  it("SSE, for older servers: the same tools", async () => {
    const port = await freePort();
    await startEverything("sse", port);
    manager = (await startMcp(mcpConfig({ old: { type: "sse", url: `http://127.0.0.1:${port}/sse` } }))).manager;
    expect(manager.views()[0]).toMatchObject({ transport: "sse", status: "connected" });
    expect(await manager.get("mcp__old__echo")!.run({ message: "over sse" }, ctx)).toEqual({ content: "Echo: over sse" });
  });

  it("an HTTP server that goes away answers with an error result; when it is back, the gateway reconnects", async () => {
    const port = await freePort();
    const first = await startEverything("streamableHttp", port);
    const watch = recordingObserver();
    const retry = heldTimeouts(1000);
    manager = (await startMcp(mcpConfig({ web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } }), { observer: watch.observer, timers: retry.timers })).manager;
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    const failed = await manager.get("mcp__web__echo")!.run({ message: "hello?" }, ctx);
    expect(failed).toMatchObject({ isError: true, content: expect.stringMatching(/^mcp__web__echo failed: the MCP server web could not be reached: /) });
    expect(manager.views()[0]).toMatchObject({ status: "retrying", tools: [] });
    await startEverything("streamableHttp", port);
    const back = watch.connected("web");
    retry.fire();
    await back;
    expect(await manager.get("mcp__web__echo")!.run({ message: "again" }, ctx)).toEqual({ content: "Echo: again" });
  });
});
