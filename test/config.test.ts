// An entry point's defaults and the environment: a variable set to nothing (`LOG_LEVEL=` copied from .env.example)
// is unset, so it does not beat the default (`npm run chat` logs errors only unless LOG_LEVEL says otherwise).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiKeysOf, ConfigError, loadConfig, loadDotEnv, withDefaults } from "../src/config.js";

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
    expect(loadConfig({ HTTP_STORED_BYTES_PER_USER_MAX: "0", HTTP_SESSIONS_PER_USER_MAX: "0" })).toMatchObject({ HTTP_STORED_BYTES_PER_USER_MAX: 0, HTTP_SESSIONS_PER_USER_MAX: 0 });
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
