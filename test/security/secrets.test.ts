// Secrets never reach a log line or a configuration error: scrubbed by value, wherever and however encoded.
import { Bot } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { scrub, secretsOf } from "../../src/secrets.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";

// Shaped like a real token (id, colon, 35 characters), so the generic pattern has something to find too.
const TOKEN = "7012345678:AAHk3v-9Qz_xY12ab34CD56ef78GH90ijKL";
const SLACK = "xoxb-1111-2222-secretslackvalue";
const HTTP_TOKEN = "http-api-token-42";

function capture(secrets: string[], level = "debug") {
  const lines: string[] = [];
  const log = createLogger(level, { write: (line: string) => void lines.push(line) }, secrets);
  return {
    log,
    lines,
    text: () => lines.join(""),
    /** Every line is still one JSON object: scrubbing must not break the log format. */
    parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

let tg: FakeTelegram | null = null;
afterEach(async () => {
  await tg?.close();
  tg = null;
});

describe("log lines", () => {
  it("keep the bot token out of a real grammY error from a Bot API that fails", async () => {
    tg = await startFakeTelegram({ token: TOKEN });
    const { log, text, parsed } = capture([TOKEN]);
    const bot = new Bot(TOKEN, { client: { apiRoot: tg.url } });
    tg.failNext("getMe", { error_code: 500, description: "Internal Server Error" });
    const refused = await bot.api.getMe().catch((error: unknown) => error);
    log.error({ err: refused }, "telegram call failed");
    // A closed port: grammY's HttpError carries the request URL, token included, in its message and stack.
    const url = tg.url;
    await tg.close();
    tg = null;
    const down = new Bot(TOKEN, { client: { apiRoot: url } });
    const unreachable = await down.api.sendMessage(1, "hi").catch((error: unknown) => error);
    expect(String((unreachable as { error?: unknown }).error)).toContain(TOKEN); // the leak this guards against
    log.child({ provider: "telegram" }).warn({ err: unreachable }, "telegram request failed");

    expect(text()).not.toContain(TOKEN);
    expect(text()).not.toContain(TOKEN.split(":")[1]);
    expect(text()).toContain("[redacted]");
    expect(parsed()).toHaveLength(2);
  });

  it("scrub a configured secret in a URL, a stack, a nested object, a key, and URL-encoded", () => {
    const secret = "s3cr3t value/with:specials";
    const { log, text, parsed } = capture([secret]);
    log.info(`calling https://api.example.com/v1?key=${encodeURIComponent(secret)}&x=1`);
    log.info(`form body: key=${new URLSearchParams({ k: secret }).toString().slice(2)}`);
    log.info(`lower-case escapes: ${encodeURIComponent(secret).toLowerCase()}`);
    const error = new Error(`request to https://h/${secret}/x failed`);
    log.error({ err: error }, "failed");
    log.warn({ request: { headers: { "x-custom": `Bearer ${secret}` }, list: [secret], [secret]: 1 } }, "nested");
    log.info({ quoted: `say "${secret}"\n\tthen stop` }, "escaped");
    expect(text()).not.toContain("s3cr3t");
    expect(text()).not.toContain(encodeURIComponent("s3cr3t value"));
    expect(parsed().map((l) => l.msg)).toEqual([
      "calling https://api.example.com/v1?key=[redacted]&x=1",
      "form body: key=[redacted]",
      "lower-case escapes: [redacted]",
      "failed",
      "nested",
      "escaped",
    ]);
    const [, , , failed, nested, escaped] = parsed();
    expect((failed!.err as { stack: string }).stack).toMatch(/^Error: request to https:\/\/h\/\[redacted\]\/x failed\n/);
    expect(nested!.request).toEqual({ headers: { "x-custom": "Bearer [redacted]" }, list: ["[redacted]"], "[redacted]": 1 });
    expect(escaped!.quoted).toBe('say "[redacted]"\n\tthen stop');
  });

  it("scrub a Telegram bot token nobody configured, raw or URL-encoded", () => {
    const { log, text } = capture([]);
    log.info(`GET https://api.telegram.org/bot${TOKEN}/getUpdates`);
    log.info({ url: `https://api.telegram.org/bot${encodeURIComponent(TOKEN)}/getMe` }, "encoded");
    expect(text()).not.toContain(TOKEN.split(":")[1]);
    expect(text()).toContain("https://api.telegram.org/bot[redacted]/getUpdates");
  });

  it("scrub every secret of a loaded configuration, HTTP API tokens included", () => {
    const config = loadConfig({
      ANTHROPIC_API_KEY: "sk-ant-configured-key",
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_WEBHOOK_SECRET: "hook-secret-1",
      SLACK_BOT_TOKEN: SLACK,
      SLACK_APP_TOKEN: "xapp-app-level-value",
      SLACK_SIGNING_SECRET: "signing-secret-value",
      HTTP_API_TOKENS: `${HTTP_TOKEN}:alice,second-token-xyz:bob`,
    });
    const secrets = secretsOf(config);
    for (const s of ["sk-ant-configured-key", TOKEN, "hook-secret-1", SLACK, "xapp-app-level-value", "signing-secret-value", HTTP_TOKEN, "second-token-xyz"]) {
      expect(secrets).toContain(s);
    }
    const { log, text } = capture(secrets);
    log.info({ auth: `Bearer ${HTTP_TOKEN}`, slack: { response: `invalid_auth for ${SLACK}` } }, `key sk-ant-configured-key and second-token-xyz`);
    for (const s of secrets) expect(text()).not.toContain(s);
  });

  it("keep redacting by key", () => {
    const { log, text } = capture([]);
    log.info({ token: "short", headers: { authorization: "Basic abc" }, config: { ANTHROPIC_API_KEY: "k" } }, "keys");
    expect(text()).not.toContain("short");
    expect(text()).not.toContain("Basic abc");
  });
});

describe("secretsOf", () => {
  it("finds *_TOKEN, *_SECRET, *_KEY and *_PASSWORD values, URL passwords, and HTTP tokens as a record or a Map", () => {
    const secrets = secretsOf({
      HTTP_API_TOKENS: new Map([["map-token-1", "alice"]]),
      OTHER_SERVICE_PASSWORD: "hunter22",
      WEBHOOK_SIGNING_KEY: "signing-key-9",
      SOME_SECRET: "another-secret",
      DATABASE_URL: "postgres://app:db%40pass@db.internal:5432/switchboard",
      MODEL_CONTEXT_TOKENS: { "*": 200000 },
      LOG_LEVEL: "info",
      ANTHROPIC_API_KEY: undefined,
    });
    expect(secrets.sort()).toEqual(["another-secret", "db%40pass", "db@pass", "hunter22", "map-token-1", "signing-key-9"].sort());
    expect(secretsOf({ HTTP_API_TOKENS: { "record-token": "bob" } })).toEqual(["record-token"]);
  });

  it("ignores secrets under 4 characters instead of redacting ordinary words", () => {
    expect(secretsOf({ X_TOKEN: "abc" })).toEqual([]);
    expect(scrub("abc abcd", ["abc", "abcd"])).toBe("abc [redacted]");
  });
});

describe("scrub", () => {
  it("removes secrets from an error text meant for a user or a model", () => {
    const message = `fetch https://x.example/bot${TOKEN}/sendMessage?k=${encodeURIComponent("p@ss word!")} failed`;
    expect(scrub(message, ["p@ss word!"])).toBe("fetch https://x.example/bot[redacted]/sendMessage?k=[redacted] failed");
  });
});

describe("configuration errors", () => {
  function problem(env: Record<string, string>): string {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    throw new Error("expected a configuration error");
  }

  it("name the position of a bad HTTP_API_TOKENS entry, not its characters", () => {
    const message = problem({ HTTP_API_TOKENS: "good-token-111:alice,leakyTokenWithoutUser" });
    expect(message).toContain("HTTP_API_TOKENS: entry 2 must be token:user");
    expect(message).not.toContain("leaky");
    expect(message).not.toContain("good-token");
  });

  it("never echo a malformed secret value", () => {
    const values = {
      TELEGRAM_BOT_TOKEN: "not-a-bot-token-SECRETVALUE",
      TELEGRAM_WEBHOOK_SECRET: "bad secret with spaces SECRETVALUE",
      SLACK_BOT_TOKEN: "xoxp-user-token-SECRETVALUE",
      SLACK_APP_TOKEN: "wrong-prefix-SECRETVALUE",
    };
    const message = problem(values);
    for (const name of Object.keys(values)) expect(message).toContain(name);
    expect(message).not.toContain("SECRETVALUE");
  });
});
