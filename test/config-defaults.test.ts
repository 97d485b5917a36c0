// The documented defaults are the configured ones, and the app runs with them: the call limits, the iteration
// limit and the compaction threshold as the configuration table and .env.example state them, and call_agent's 30 s
// timeout firing at 30 s (not a millisecond earlier) in an app built by createApp from an environment that sets none
// of them.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import type { OutboundMessage } from "../src/gateway/types.js";
import { silentLogger } from "../src/log.js";
import { MAX_TIMEOUT_MS } from "../src/runtime/tools/call-agent.js";
import { deferred } from "./helpers/deferred.js";
import { agentFiles, writeDefinitions } from "./helpers/harness.js";
import { resultTexts, speaker } from "./helpers/requests.js";
import { lastUserText, reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "./fakes/anthropic/server.js";

/** The design's defaults (seeds 000-002): what an admin gets without setting anything. */
const DEFAULTS = {
  MAX_ITERATIONS: 25,
  AGENT_CALL_DEPTH_MAX: 5,
  AGENT_CALL_TIMEOUT_MS: 30_000,
  AGENT_CONCURRENT_CALLS_MAX: 10,
  AGENT_CALL_QUEUE_MAX: 20,
  COMPACTION_THRESHOLD: 0.7,
};

const root = join(import.meta.dirname, "..");

describe("configured defaults", () => {
  it("are the design's: depth 5, timeout 30 s (capped at 5 min), 10 calls per target and 20 waiting, compaction at 0.7, 25 iterations", () => {
    const config = loadConfig({});
    expect(Object.fromEntries(Object.keys(DEFAULTS).map((name) => [name, config[name as keyof typeof DEFAULTS]]))).toEqual(DEFAULTS);
    expect(MAX_TIMEOUT_MS).toBe(5 * 60_000);
    // The cap holds for the variable too: a longer default is refused with the variable's name.
    expect(() => loadConfig({ AGENT_CALL_TIMEOUT_MS: "300001" })).toThrow(/AGENT_CALL_TIMEOUT_MS: must be a whole number from 1000 to 300000/);
  });

  it("are the ones the configuration table and .env.example state", () => {
    const table = readFileSync(join(root, "docs/admin/configuration.md"), "utf8");
    const example = readFileSync(join(root, ".env.example"), "utf8");
    const documented = (name: string): string[] => {
      // The table: | `A` / `B` | `10` / `20` | … ; .env.example: a comment ending "Default: 25" (or "Defaults: 10 and 20") above A=
      const row = table.split("\n").find((line) => line.startsWith("|") && line.split("|")[1]!.includes(`\`${name}\``));
      const names = [...row!.split("|")[1]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]);
      const values = [...row!.split("|")[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      const lines = example.split("\n");
      const at = lines.findIndex((line) => line === `${name}=`);
      const comment = lines.slice(0, at).reverse().find((line) => /Defaults?: /.test(line))!;
      const stated = [...comment.split(/Defaults?: /)[1]!.matchAll(/[\d.]+/g)].map((m) => m[0]);
      return [values[names.indexOf(name)]!, stated[names.indexOf(name)] ?? stated[0]!];
    };
    for (const [name, value] of Object.entries(DEFAULTS)) {
      expect(documented(name), name).toEqual([String(value), String(value)]);
    }
  });
});

describe("an app built from the defaults", () => {
  let app: App | undefined;
  let fake: FakeAnthropic | undefined;
  let dir = "";
  afterEach(async () => {
    vi.useRealTimers();
    await app?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
    app = fake = undefined;
  });

  async function start(files: Record<string, string>): Promise<{ app: App; seen: OutboundMessage[] }> {
    fake = await startFakeAnthropic();
    const defs = writeDefinitions(files);
    dir = defs.root;
    const env = { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_MAX_RETRIES: "0", DATA_DIR: join(dir, "data"), SKILLS_DIR: defs.skills, AGENTS_DIR: defs.agents, MEMORY: "off" };
    app = await createApp(loadConfig(env), silentLogger());
    const seen: OutboundMessage[] = [];
    app.gateway.register({ prefix: "console", deliver: async (m) => void seen.push(m) });
    return { app, seen };
  }

  it("times a call_agent call out at 30 s, not a millisecond earlier (fake clock)", async () => {
    const { app, seen } = await start(agentFiles("slow"));
    const calleeAsked = deferred<void>();
    fake!.fallback((req) => {
      if (speaker(req) === "slow") {
        calleeAsked.resolve();
        return { hang: true };
      }
      const [result] = resultTexts(req);
      return result ? text(`main got: ${result.content}`) : reply(toolUse("call_agent", { agent: "slow", message: "think it over" }));
    });
    // From here on, only the test moves the clock (the call's deadline, lease renewals, the SDK's own timeout).
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    await app.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "console:alice", text: "think" });
    await calleeAsked.promise;

    await vi.advanceTimersByTimeAsync(29_999);
    expect(seen).toEqual([]);
    expect(fake!.calls.filter((c) => speaker(c.body) === "main")).toHaveLength(1);

    await vi.advanceTimersByTimeAsync(1);
    vi.useRealTimers();
    await app.gateway.idle();
    expect(seen.map((m) => m.text)).toEqual(["main got: call to slow timed out after 30 s"]);
  });

  it("refuses a call six levels below main, naming the chain", async () => {
    const { app, seen } = await start(agentFiles("a", "b", "c", "d", "e", "f"));
    const next: Record<string, string> = { main: "a", a: "b", b: "c", c: "d", d: "e", e: "f" };
    fake!.fallback((req) => {
      const [result] = resultTexts(req);
      if (result) return text(speaker(req) === "main" ? `main got: ${result.content}` : result.content);
      return reply(toolUse("call_agent", { agent: next[speaker(req)]!, message: lastUserText(req) }));
    });
    await app.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "console:alice", text: "go deep" });
    await app.gateway.idle();
    expect(seen.map((m) => m.text)).toEqual(["main got: call depth limit 5 reached: main → a → b → c → d → e"]);
  });

  it("lets 10 calls to one agent run and 20 wait; the next one hears 'target busy'", async () => {
    const { app, seen } = await start(agentFiles("busy"));
    const release = deferred<void>();
    const allIn = deferred<void>();
    const refused = deferred<OutboundMessage>();
    let running = 0;
    fake!.fallback(async (req) => {
      if (speaker(req) === "busy") {
        if (++running === 10) allIn.resolve();
        await release.promise;
        return text("done");
      }
      const [result] = resultTexts(req);
      return result ? text(`main got: ${result.content}`) : reply(toolUse("call_agent", { agent: "busy", message: lastUserText(req) }));
    });
    app.gateway.register({
      prefix: "chat",
      deliver: async (m) => {
        seen.push(m);
        if (m.text.includes("target busy")) refused.resolve(m);
      },
    });
    const submit = (i: number) => app.gateway.submit({ sessionKey: `chat:s${i}`, messageId: "m", userId: `chat:u${i}`, text: `job ${i}` });
    for (let i = 1; i <= 10; i++) await submit(i);
    await allIn.promise;
    for (let i = 11; i <= 31; i++) await submit(i);
    // Which of the 21 late calls comes last to the limiter depends on the order of their model answers.
    expect((await refused.promise).text).toBe("main got: target busy: 10 calls to busy are running and 20 are waiting; try again later");
    release.resolve();
    await app.gateway.idle();
    expect(seen.map((m) => m.text).sort()).toEqual([...Array<string>(30).fill("main got: done"), (await refused.promise).text].sort());
  });
});
