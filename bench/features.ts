// What the wave-3 features cost per message, beside a message that does not use them, in the same run: a message
// with an image (decoded and re-encoded on the way in, downscaled into the model's block), a workspace tool call
// (Read, Write; Bash in the bubblewrap sandbox), an MCP tool call (a stdio round trip to a real MCP server). Each
// tool scenario also runs a tool that does nothing (`noop`), so the engine's cost of a tool round (a second model
// call, one more step committed) is told apart from the tool's own.
import { createRequire } from "node:module";
import pino from "pino";
import sharp from "sharp";
import { createMcp, createTools } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { acceptFile } from "../src/files/intake.js";
import type { ReceivedFile } from "../src/files/types.js";
import type { ModelRequest } from "../src/llm/types.js";
import { parseMcpConfig } from "../src/mcp/config.js";
import { systemClock, systemTimers } from "../src/runtime/deps.js";
import { ToolRegistry } from "../src/runtime/tools/registry.js";
import type { Tool } from "../src/runtime/tools/tool.js";
import { startWorkspace } from "../src/workspace/start.js";
import { benchWorld, percentile, ScriptModel } from "./world.js";
import type { Result } from "./scenarios.js";

const silent = pino({ level: "silent" });
const ms = (values: number[], p: number) => +percentile(values, p).toFixed(3);

let counter = 0;
/** Sends one message (with its files) and resolves when it was answered and its reply delivered; ms. */
async function sendWith(world: ReturnType<typeof benchWorld>, session: string, text: string, files?: ReceivedFile[]): Promise<number> {
  const start = performance.now();
  const result = await world.gateway.submit({ sessionKey: `bench:${session}`, messageId: `f${++counter}`, userId: "u", text, ...(files ? { files } : {}) });
  if (result.status !== "accepted") throw new Error(`not accepted: ${JSON.stringify(result)}`);
  await world.gateway.whenDone(result.requestId);
  return performance.now() - start;
}

/** A camera-sized photo (1 600 × 1 200, JPEG), different each time: noise, so no two compress alike. */
function photo(i: number): Promise<Buffer> {
  return sharp({
    create: { width: 1600, height: 1200, channels: 3, background: { r: (i * 37) % 256, g: 120, b: 80 }, noise: { type: "gaussian", mean: 128, sigma: 24 } },
  })
    .jpeg({ quality: 85 })
    .toBuffer();
}

const imageBlockBytes = (request: ModelRequest): number => {
  let n = 0;
  for (const message of request.messages) {
    for (const block of message.content as Array<{ type: string; source?: { type: string; data?: string } }>) {
      if (block.type === "image" && block.source?.type === "base64") n += block.source.data?.length ?? 0;
    }
  }
  return n;
};

/** A message with a photo, against a text message, alternated in one world (80 of each). */
export async function imageMessage(): Promise<Result> {
  let blockBytes = 0;
  const world = benchWorld(
    new ScriptModel((req) => {
      blockBytes = Math.max(blockBytes, imageBlockBytes(req));
      return [{ type: "text", text: "A nice photo." }];
    }),
  );
  const count = 80;
  const photos = await Promise.all(Array.from({ length: count }, (_, i) => photo(i)));
  const intake: number[] = [];
  const withImage: number[] = [];
  const text: number[] = [];
  const bytesBefore = world.dbBytes();
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    text.push(await sendWith(world, `t${i}`, "what do you see?"));
    const start = performance.now();
    const file = await acceptFile({ name: `photo-${i}.jpg`, bytes: photos[i]!, declaredMime: "image/jpeg" }, { maxFileBytes: 20 * 1024 * 1024 });
    intake.push(performance.now() - start);
    if (!file.ok) throw new Error(`the photo was refused: ${file.reason}`);
    withImage.push((await sendWith(world, `i${i}`, "what do you see?", [file])) + intake.at(-1)!);
  }
  const used = process.cpuUsage(cpu);
  const dbBytes = world.dbBytes() - bytesBefore;
  await world.close();
  world.remove();
  return {
    scenario: "image-message",
    messages: count,
    photo_kb: Math.round(photos.reduce((n, p) => n + p.length, 0) / count / 1024),
    p50_ms: ms(withImage, 50),
    p99_ms: ms(withImage, 99),
    intake_p50_ms: ms(intake, 50),
    text_p50_ms: ms(text, 50),
    model_block_kb: Math.round(blockBytes / 1024),
    // The process's CPU time (every thread: libvips encodes on its own) per photo and text message.
    cpu_ms_per_pair: +((used.user + used.system) / count / 1000).toFixed(1),
    // The database file and its WAL, grown by one text and one image message.
    db_kb_per_pair: Math.round(dbBytes / count / 1024),
  };
}

/** A tool that does nothing: what a tool round costs the engine, whatever the tool. */
const noop: Tool = {
  spec: { name: "noop", description: "Does nothing.", input_schema: { type: "object", properties: {} } },
  idempotent: true,
  run: () => Promise.resolve({ content: "done" }),
};

/** Main calls `call(text)` once, then answers. */
function toolModel(call: (text: string) => [string, Record<string, unknown>] | null) {
  return new ScriptModel((req, use) => {
    const last = req.messages.at(-1)!;
    if (last.content.some((b) => b.type === "tool_result")) {
      const failed = last.content.find((b) => b.type === "tool_result" && b.is_error);
      if (failed) throw new Error(`a tool failed: ${JSON.stringify(failed).slice(0, 300)}`);
      return [{ type: "text", text: "ok" }];
    }
    const said = last.content.find((b) => b.type === "text");
    const wanted = call(said?.type === "text" ? said.text : "");
    return wanted ? [use(...wanted)] : [{ type: "text", text: "ok" }];
  });
}

/** Runs each kind of message `rounds` times, the kinds alternated; the latencies per kind. */
async function alternate(world: ReturnType<typeof benchWorld>, kinds: string[], rounds: number): Promise<Map<string, number[]>> {
  const out = new Map(kinds.map((k) => [k, [] as number[]]));
  for (let i = 0; i < rounds; i++) for (const kind of kinds) out.get(kind)!.push(await sendWith(world, `${kind}${i % 20}`, kind));
  return out;
}

function perKind(latencies: Map<string, number[]>, baseline: string): Record<string, number> {
  const baselineValues = latencies.get(baseline)!;
  const figures: Record<string, number> = {};
  for (const [kind, values] of latencies) {
    figures[`${kind}_p50_ms`] = ms(values, 50);
    figures[`${kind}_p99_ms`] = ms(values, 99);
    // The median of the differences between the rounds' pairs: the load of the moment cancels out of each pair.
    if (kind !== baseline && kind !== "text")
      figures[`${kind}_own_ms`] = ms(
        values.map((v, i) => v - baselineValues[i]!),
        50,
      );
  }
  return figures;
}

/** Read, Write and Bash in the session's workspace (Bash in the bubblewrap sandbox when it can run here). */
export async function workspaceTool(): Promise<Result> {
  const calls: Record<string, [string, Record<string, unknown>]> = {
    noop: ["noop", {}],
    write: ["Write", { file_path: "notes.md", content: "# Notes\n\nA line of notes.\n".repeat(40) }],
    read: ["Read", { file_path: "notes.md" }],
    bash: ["Bash", { command: "wc -l notes.md" }],
  };
  let world = benchWorld(toolModel(() => null));
  const config = loadConfig({ DATA_DIR: world.root, WORKSPACE: "on" });
  const started = await startWorkspace(config, { timers: systemTimers, clock: systemClock, log: silent, store: world.store });
  world.remove();
  const { registry } = createTools(config, undefined, undefined, undefined, undefined, started);
  const bash = registry.names().includes("Bash");
  const kinds = ["text", "noop", "write", "read", ...(bash ? ["bash"] : [])];
  world = benchWorld(
    toolModel((text) => calls[text] ?? null),
    world.root,
    undefined,
    null,
    new ToolRegistry([noop, ...started.tools]),
  );
  // Every session has the file before it is read.
  for (let s = 0; s < 20; s++) await sendWith(world, `read${s}`, "write");
  const latencies = await alternate(world, kinds, 60);
  await world.close();
  world.remove();
  return {
    scenario: "workspace-tool",
    rounds: 60,
    sandbox: bash ? "bubblewrap" : `none (${started.off.Bash ?? "Bash is off"})`,
    ...perKind(latencies, "noop"),
  };
}

const require = createRequire(import.meta.url);

/** One call of server-everything's `echo` over stdio, against a tool that does nothing. */
export async function mcpCall(): Promise<Result> {
  const mcpConfig = parseMcpConfig(
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [require.resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"] } },
    }),
    "mcp.json",
    {},
  );
  const mcp = createMcp(loadConfig({}), mcpConfig, { log: silent });
  await mcp.start();
  const calls: Record<string, [string, Record<string, unknown>]> = { noop: ["noop", {}], mcp: ["mcp__everything__echo", { message: "hello" }] };
  const world = benchWorld(
    toolModel((text) => calls[text] ?? null),
    undefined,
    undefined,
    null,
    new ToolRegistry([noop], mcp),
  );
  try {
    const latencies = await alternate(world, ["text", "noop", "mcp"], 100);
    return { scenario: "mcp-call", rounds: 100, ...perKind(latencies, "noop") };
  } finally {
    await world.close();
    world.remove();
    await mcp.close();
  }
}
