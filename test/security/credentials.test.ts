// Every credential the configuration can hold is known to the scrubber: the test walks the configuration schema,
// so a setting added later that holds a credential (by its name) or a URL fails here until it is covered.
import { describe, expect, it } from "vitest";
import { ConfigError, CREDENTIALS, loadConfig, SETTINGS, type Config } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { secretsOf, stringsIn, withoutCredentials } from "../../src/secrets.js";

/** Names that say "credential"; the settings listed below them only count tokens or budgets. */
const CREDENTIAL_LIKE = /TOKEN|SECRET|KEY|PASSWORD|PASSWD|HEADERS|CREDENTIAL|AUTH|COOKIE|PRIVATE/;
const NOT_CREDENTIALS = new Set(["ANTHROPIC_MAX_TOKENS", "MODEL_CONTEXT_TOKENS", "COMPACTION_KEEP_TOKENS", "SESSION_TOKEN_BUDGET", "TOOL_RESULT_MAX_TOKENS"]);

/** A valid value for every marked setting, and the secrets a log line must never show once it is loaded. */
const SAMPLES: Record<string, { env: string; secrets: string[] }> = {
  ANTHROPIC_API_KEY: { env: "sk-ant-sample-0001", secrets: ["sk-ant-sample-0001"] },
  ANTHROPIC_API_KEYS: { env: "sk-ant-sample-0015, sk-ant-sample-0016", secrets: ["sk-ant-sample-0015", "sk-ant-sample-0016"] },
  METRICS_TOKEN: { env: "metrics-token-0002", secrets: ["metrics-token-0002"] },
  ADMIN_TOKENS: { env: "admin-token-0003:ops,admin-token-0004", secrets: ["admin-token-0003", "admin-token-0004"] },
  OTEL_EXPORTER_OTLP_HEADERS: {
    env: "Authorization=Bearer%20otlp-bearer-0005,x-api-key=otlp-key-0006",
    secrets: ["Bearer otlp-bearer-0005", "otlp-bearer-0005", "otlp-key-0006"],
  },
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: { env: "api-key = otlp-traces-0007", secrets: ["otlp-traces-0007"] },
  SESSION_HASH_SECRET: { env: "session-hash-secret-0008", secrets: ["session-hash-secret-0008"] },
  HTTP_API_TOKENS: { env: "http-token-0009:alice", secrets: ["http-token-0009"] },
  TELEGRAM_BOT_TOKEN: { env: "123456789:AAHsampleToken0010xxxxxxxxxxxxxxxxxx", secrets: ["123456789:AAHsampleToken0010xxxxxxxxxxxxxxxxxx"] },
  TELEGRAM_WEBHOOK_SECRET: { env: "webhook-secret-0011", secrets: ["webhook-secret-0011"] },
  SLACK_BOT_TOKEN: { env: "xoxb-sample-0012", secrets: ["xoxb-sample-0012"] },
  SLACK_APP_TOKEN: { env: "xapp-sample-0013", secrets: ["xapp-sample-0013"] },
  SLACK_SIGNING_SECRET: { env: "signing-secret-0014", secrets: ["signing-secret-0014"] },
  TRANSCRIPTION_API_KEY: { env: "sk-transcribe-0015", secrets: ["sk-transcribe-0015"] },
};

/** Settings other settings require, so that each walked value is judged alone. */
const COMPANIONS = { HTTP_JWT_AUDIENCE: "switchboard", HTTP_JWT_ISSUER: "https://issuer.example" };

function logged(secrets: string[], write: (log: ReturnType<typeof createLogger>) => void): string {
  const lines: string[] = [];
  write(createLogger("debug", { write: (line: string) => void lines.push(line) }, secrets));
  return lines.join("");
}

describe("credential settings", () => {
  it("every setting whose name says it holds a credential is marked in CREDENTIALS, and every mark is a setting", () => {
    const credentialLike = SETTINGS.filter((name) => CREDENTIAL_LIKE.test(name) && !NOT_CREDENTIALS.has(name));
    expect(credentialLike.length).toBeGreaterThan(10);
    expect(credentialLike.filter((name) => CREDENTIALS[name] === undefined)).toEqual([]);
    expect(Object.keys(CREDENTIALS).filter((name) => !SETTINGS.includes(name as keyof Config))).toEqual([]);
    expect([...NOT_CREDENTIALS].filter((name) => !SETTINGS.includes(name as keyof Config))).toEqual([]);
  });

  it("every marked setting's credentials are scrubbed from log lines once the configuration is loaded", () => {
    expect(Object.keys(CREDENTIALS).filter((name) => !(name in SAMPLES))).toEqual([]);
    const config = loadConfig(Object.fromEntries(Object.entries(SAMPLES).map(([name, s]) => [name, s.env])));
    const secrets = secretsOf(config);
    const expected = Object.values(SAMPLES).flatMap((s) => s.secrets);
    expect(expected.filter((s) => !secrets.includes(s))).toEqual([]);
    const text = logged(secrets, (log) => {
      log.info({ env: Object.fromEntries(Object.entries(SAMPLES).map(([name, s]) => [name, s.env])) }, `sent ${expected.join(" and ")}`);
      log.warn({ err: new Error(`collector said 401 for x-api-key otlp-key-0006 (${encodeURIComponent("Bearer otlp-bearer-0005")})`) }, "export failed");
    });
    for (const secret of expected) expect(text).not.toContain(secret);
  });

  it("a password in any setting that keeps a URL is scrubbed, whatever the setting is called", () => {
    const password = "walk-pass-4321";
    const accepted: string[] = [];
    for (const name of SETTINGS) {
      for (const url of [`https://walk-user:${password}@example.com/x`, `postgres://walk-user:${password}@db.example.com:5432/x`]) {
        let config: Config;
        try {
          config = loadConfig({ ...COMPANIONS, [name]: url });
        } catch (error) {
          if (error instanceof ConfigError) continue;
          throw error;
        }
        if (!stringsIn(config[name]).includes(url)) continue;
        accepted.push(name);
        expect(secretsOf(config), name).toContain(password);
      }
    }
    // The walk is not vacuous: the URL settings (and free-text ones) were among those that kept the URL.
    for (const name of [
      "DATABASE_URL",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      "ANTHROPIC_BASE_URL",
      "HTTP_JWT_JWKS_URL",
      "SLACK_API_URL",
      "TELEGRAM_API_ROOT",
      "TRANSCRIPTION_URL",
      "TELEGRAM_WEBHOOK_URL",
      "ANTHROPIC_MODEL",
    ]) {
      expect(accepted).toContain(name);
    }
  });

  it("the collector's basic-auth credentials in OTEL_EXPORTER_OTLP_ENDPOINT never reach a log line", () => {
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector-user:collector%40pass-77@otlp.example.com:4318" });
    const secrets = secretsOf(config);
    expect(secrets).toEqual(expect.arrayContaining(["collector%40pass-77", "collector@pass-77"]));
    const text = logged(secrets, (log) => {
      log.error({ err: new Error(`connect ECONNREFUSED for ${config.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`) }, "export failed");
      log.info(`exporting to https://collector-user:collector@pass-77@otlp.example.com:4318`);
    });
    expect(text).not.toContain("pass-77");
    expect(withoutCredentials(config.OTEL_EXPORTER_OTLP_ENDPOINT!)).toBe("https://[redacted]@otlp.example.com:4318");
    expect(withoutCredentials("https://otlp.example.com:4318/v1/traces")).toBe("https://otlp.example.com:4318/v1/traces");
  });

  it("a token used as a URL's user name counts; a plain role name does not", () => {
    const token = "glc_0123456789abcdefABCDEF";
    expect(secretsOf(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `https://${token}@otlp.example.com` }))).toContain(token);
    expect(secretsOf(loadConfig({ DATABASE_URL: "postgres://switchboard@db.example.com/switchboard" }))).toEqual([]);
  });

  it("variables the schema does not know (a skill's env: token) are scrubbed by their name; settings that are words are not", () => {
    const config = loadConfig({});
    const secrets = secretsOf(config, {
      GITHUB_TOKEN: "ghp_skilltoken0123456789",
      FEATURE_KEY: "true",
      PROXY_URL: "http://proxy-user:proxy-pass-9@proxy:3128",
      LOG_LEVEL: "info",
    });
    expect(secrets.sort()).toEqual(["ghp_skilltoken0123456789", "proxy-pass-9"]);
  });

  it("a request's own credentials (a user's JWT, a cookie, a proxy's authorization) are redacted by key, also one level down", () => {
    const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";
    const text = logged([], (log) => {
      log.warn({ req: { method: "POST", headers: { authorization: `Bearer ${jwt}`, cookie: "sid=s3ss10n", "proxy-authorization": "Basic cHJveHk6cHc=" } } }, "refused");
      log.warn({ headers: { authorization: `Bearer ${jwt}` } }, "refused at the top level");
    });
    expect(text).not.toMatch(/eyJhbGci|s3ss10n|cHJveHk6cHc=/);
    expect(text).toContain('"method":"POST"');
  });

  it("a malformed OTEL_EXPORTER_OTLP_HEADERS entry is named by position, its value never echoed", () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=ok-value-1,LEAKYVALUEWITHOUTNAME" })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS: entry 2 must be name=value/,
    );
    let thrown: unknown = null;
    try {
      loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=ok-value-1,LEAKYVALUEWITHOUTNAME", SESSION_HASH_SECRET: "short-LEAKY" });
    } catch (error) {
      thrown = error;
    }
    expect(String(thrown)).toContain("SESSION_HASH_SECRET: must be at least 16 characters");
    expect(String(thrown)).not.toMatch(/LEAKY|ok-value/);
  });
});
