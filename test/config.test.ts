// The configuration: an entry point's defaults and the environment (a variable set to nothing, `LOG_LEVEL=` copied
// from .env.example, is unset, so it does not beat the default: `npm run chat` logs errors only unless LOG_LEVEL says
// otherwise); errors that say where a value came from; and the documented defaults, which are the configured ones
// (the call limits, the iteration limit and the compaction threshold as the configuration table and .env.example state them), with
// an app built by createApp from an environment that sets none of them running by them (call_agent's 30 s timeout
// firing at 30 s, not a millisecond earlier). The settings that would open a door are in test/security/config.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp, type App } from "../src/app.js";
import { apiKeysOf, ConfigError, loadConfig, loadDotEnv, withDefaults } from "../src/config.js";
import type { OutboundMessage } from "../src/gateway/types.js";
import { silentLogger } from "../src/log.js";
import { MAX_TIMEOUT_MS } from "../src/runtime/tools/call-agent.js";
import { deferred } from "./helpers/deferred.js";
import { agentFiles, writeDefinitions } from "./helpers/harness.js";
import { resultTexts, speaker } from "./helpers/requests.js";
import { lastUserText, reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "./fakes/anthropic/server.js";

describe("withDefaults", () => {
  it("keeps a default when the variable is empty or blank", () => {
    expect(loadConfig(withDefaults({ LOG_LEVEL: "error" }, { LOG_LEVEL: "" })).LOG_LEVEL).toBe("error");
    expect(loadConfig(withDefaults({ LOG_LEVEL: "error" }, { LOG_LEVEL: "  " })).LOG_LEVEL).toBe("error");
  });

  it("lets a variable that is set win over the default", () => {
    expect(loadConfig(withDefaults({ LOG_LEVEL: "error" }, { LOG_LEVEL: "debug" })).LOG_LEVEL).toBe("debug");
  });

  it("leaves variables without a default alone, and an empty one is unset as before", () => {
    const env = withDefaults({ LOG_LEVEL: "error" }, { DATA_DIR: "/srv/sb", LOG_FORMAT: "", HTTP_PORT: undefined });
    expect(env).toEqual({ LOG_LEVEL: "error", DATA_DIR: "/srv/sb" });
    const config = loadConfig(env);
    expect(config.DATA_DIR).toBe("/srv/sb");
    expect(config.LOG_FORMAT).toBeUndefined();
    expect(config.HTTP_PORT).toBe(8787);
  });

  it("without defaults, an empty LOG_LEVEL means the schema's default", () => {
    expect(loadConfig(withDefaults({}, { LOG_LEVEL: "" })).LOG_LEVEL).toBe("info");
  });
});

describe("configuration errors say where the value came from", () => {
  function problem(dotEnv: string | null, env: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), "switchboard-env-"));
    try {
      const path = join(dir, ".env");
      if (dotEnv !== null) writeFileSync(path, dotEnv);
      const sourceOf = loadDotEnv(path, env);
      loadConfig(withDefaults({}, env), sourceOf);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    throw new Error("expected a configuration error");
  }

  it("names .env for a value read from it, and the environment for one set there", () => {
    const message = problem("# copied from .env.example\nHTTP_PORT=80800\nLOG_LEVEL=info\n", { MAX_ITERATIONS: "lots" });
    const lines = message.split("\n");
    expect(lines[0]).toBe("Invalid configuration:");
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}HTTP_PORT \(set in \/.*\/\.env\): must be a whole number from 0 to 65535, got "80800"$/));
    expect(lines).toContain('  MAX_ITERATIONS (set in the environment): must be a whole number ≥ 1, got "lots"');
    expect(lines).toHaveLength(3);
  });

  it("says when the environment's value hides a right one in .env", () => {
    const message = problem("HTTP_PORT=8080\n", { HTTP_PORT: "http" });
    expect(message).toMatch(/HTTP_PORT \(set in the environment, which wins over \/.*\/\.env\): must be a whole number/);
  });

  it("names no source for a variable that is missing rather than wrong", () => {
    const message = problem(null, { HTTP_JWT_JWKS_URL: "https://idp.example/jwks.json", HTTP_JWT_AUDIENCE: "switchboard" });
    expect(message).toContain("  HTTP_JWT_ISSUER: HTTP_JWT_JWKS_URL is set: also set HTTP_JWT_ISSUER");
  });

  it("loads .env under the environment, like Node's --env-file", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchboard-env-"));
    const path = join(dir, ".env");
    writeFileSync(path, 'DATA_DIR=/from/file\nLOG_LEVEL=debug\nSKILLS_DIR="./my skills"\n');
    const env: Record<string, string> = { DATA_DIR: "/from/env" };
    loadDotEnv(path, env);
    rmSync(dir, { recursive: true, force: true });
    expect(env).toEqual({ DATA_DIR: "/from/env", LOG_LEVEL: "debug", SKILLS_DIR: "./my skills" });
  });
});

describe("TOOL_RESULT_MAX_TOKENS", () => {
  it("defaults to 10 000 tokens and takes a whole number from 250", () => {
    expect(loadConfig({}).TOOL_RESULT_MAX_TOKENS).toBe(10_000);
    expect(loadConfig({ TOOL_RESULT_MAX_TOKENS: "2500" }).TOOL_RESULT_MAX_TOKENS).toBe(2500);
    expect(() => loadConfig({ TOOL_RESULT_MAX_TOKENS: "100" })).toThrow('TOOL_RESULT_MAX_TOKENS: must be a whole number from 250 to 1000000, got "100"');
  });
});

describe("per-user caps of the HTTP API", () => {
  it("have defaults, take sizes with units, 0 for no cap, and a bad value names the variable", () => {
    const defaults = loadConfig({});
    expect([defaults.HTTP_SESSIONS_PER_USER_MAX, defaults.HTTP_STREAMS_PER_USER_MAX, defaults.HTTP_STORED_BYTES_PER_USER_MAX]).toEqual([500, 8, 200_000_000]);
    expect(loadConfig({ HTTP_STORED_BYTES_PER_USER_MAX: "512KiB" }).HTTP_STORED_BYTES_PER_USER_MAX).toBe(524_288);
    expect(loadConfig({ HTTP_STORED_BYTES_PER_USER_MAX: "1.5 GB" }).HTTP_STORED_BYTES_PER_USER_MAX).toBe(1_500_000_000);
    expect(loadConfig({ HTTP_STORED_BYTES_PER_USER_MAX: "0", HTTP_SESSIONS_PER_USER_MAX: "0" })).toMatchObject({
      HTTP_STORED_BYTES_PER_USER_MAX: 0,
      HTTP_SESSIONS_PER_USER_MAX: 0,
    });
    expect(() => loadConfig({ HTTP_STORED_BYTES_PER_USER_MAX: "lots" })).toThrow(/HTTP_STORED_BYTES_PER_USER_MAX: must be a size such as 100MB/);
    expect(() => loadConfig({ HTTP_STREAMS_PER_USER_MAX: "-1" })).toThrow(/HTTP_STREAMS_PER_USER_MAX: must be a whole number ≥ 0/);
  });
});

describe("model resilience settings", () => {
  it("reads MODEL_FALLBACKS as model ids in order, aliases resolved, and names a word that is not a model", () => {
    expect(loadConfig({ MODEL_FALLBACKS: "haiku, claude-opus-5-5,haiku" }).MODEL_FALLBACKS).toEqual(["claude-haiku-5-5", "claude-opus-5-5"]);
    expect(loadConfig({}).MODEL_FALLBACKS).toEqual([]);
    expect(() => loadConfig({ MODEL_FALLBACKS: "haiku,gpt-4o" })).toThrow(/MODEL_FALLBACKS.*"gpt-4o" is not a model/);
  });

  it("takes ANTHROPIC_API_KEY and ANTHROPIC_API_KEYS together, each key once, the single one first", () => {
    expect(apiKeysOf(loadConfig({ ANTHROPIC_API_KEY: "sk-a", ANTHROPIC_API_KEYS: "sk-b, sk-a,,sk-c" }))).toEqual(["sk-a", "sk-b", "sk-c"]);
    expect(apiKeysOf(loadConfig({}))).toEqual([]);
  });
});

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
      const comment = lines
        .slice(0, at)
        .reverse()
        .find((line) => /Defaults?: /.test(line))!;
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
    const env = {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_MAX_RETRIES: "0",
      DATA_DIR: join(dir, "data"),
      SKILLS_DIR: defs.skills,
      AGENTS_DIR: defs.agents,
      MEMORY: "off",
    };
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
