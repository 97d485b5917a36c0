import { existsSync, readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { z } from "zod";
import { isKnownModel, MODEL_ALIASES } from "./catalog/models.js";
import { DEFAULT_MAX_TOKENS, DEFAULT_MODEL } from "./llm/anthropic.js";
import { DEFAULT_TRANSCRIPTION_MODEL } from "./llm/transcription.js";
import { parsePrices } from "./llm/prices.js";
import { parseAllowlist } from "./net/allowlist.js";
import { DEFAULT_RESULT_TOKENS } from "./runtime/result-bound.js";
import { checkZone } from "./schedules/zone.js";

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

/** A whole number in [min, max] (unbounded above when max is omitted), `fallback` when unset. */
const wholeNumber = (fallback: number, min: number, max = Infinity) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        const range = max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`;
        ctx.addIssue({ code: "custom", message: `must be a whole number ${range}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const positiveInt = (fallback: number) => wholeNumber(fallback, 1);

/** An amount in USD, 0 when unset; `zero` says what 0 means in the error message. */
const usdAmount = (zero: string) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return 0;
    const n = Number(v);
    if (!(n >= 0) || !Number.isFinite(n)) {
      ctx.addIssue({ code: "custom", message: `must be an amount in USD such as 5 or 0.50 (0 for ${zero}), got "${v}"` });
      return z.NEVER;
    }
    return n;
  });

/** A duration such as 24h, 30m, 90s or 1500 (ms), at least 1 s; `fallback` (ms) when unset. */
const duration = (fallback: number) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return fallback;
    const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(v);
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m?.[2] ?? "ms") as "ms"];
    const ms = m ? Math.round(Number(m[1]) * unit) : NaN;
    if (!(ms >= 1000)) {
      ctx.addIssue({ code: "custom", message: `must be a duration such as 24h, 30m or 90s (at least 1 s), got "${v}"` });
      return z.NEVER;
    }
    return ms;
  });

/**
 * OTEL_EXPORTER_OTLP_HEADERS as the OpenTelemetry SDK reads it: comma-separated name=value pairs, values
 * percent-decoded. Parsed here so that a typo is an error at startup and every value is known as a credential.
 * Problems name the entry by position only: any part of it may be the secret.
 */
const headerList = optionalText.transform((v, ctx) => {
  const headers = new Map<string, string>();
  for (const [index, entry] of (v ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)
    .entries()) {
    const at = entry.indexOf("=");
    const name = entry.slice(0, at).trim();
    let value: string | null = null;
    try {
      value = decodeURIComponent(
        entry
          .slice(at + 1)
          .split(";")[0]!
          .trim(),
      );
    } catch {
      value = null;
    }
    if (at <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || !value) {
      ctx.addIssue({ code: "custom", message: `entry ${index + 1} must be name=value with a header name and a percent-encoded value (comma-separated pairs)` });
      return z.NEVER;
    }
    headers.set(name, value);
  }
  return headers;
});

/** A size such as 100MB, 512KiB, 1GB or 1048576 (bytes); 0 means no cap; `fallback` (bytes) when unset. */
const byteSize = (fallback: number) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return fallback;
    const m = /^(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?$/i.exec(v);
    const units: Record<string, number> = { b: 1, kb: 1e3, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };
    const bytes = m ? Math.round(Number(m[1]) * units[(m[2] ?? "b").toLowerCase()]!) : NaN;
    if (!Number.isSafeInteger(bytes)) {
      ctx.addIssue({ code: "custom", message: `must be a size such as 100MB, 512KiB or 1GB (0 for no cap), got "${v}"` });
      return z.NEVER;
    }
    return bytes;
  });

/** A comma-separated list of model ids or aliases (sonnet, haiku, opus), aliases resolved to ids. */
const modelList = optionalText.transform((v, ctx) => {
  const models: string[] = [];
  for (const name of (v ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    if (name === "inherit" || !isKnownModel(name)) {
      ctx.addIssue({
        code: "custom",
        message: `"${name}" is not a model: use ids such as claude-haiku-5-5 or the aliases ${Object.keys(MODEL_ALIASES).join(", ")}, separated by commas`,
      });
      return z.NEVER;
    }
    const id = Object.hasOwn(MODEL_ALIASES, name) ? MODEL_ALIASES[name]! : name;
    if (!models.includes(id)) models.push(id);
  }
  return models;
});

const schema = z.object({
  ANTHROPIC_API_KEY: optionalText,
  // More keys, used in turn: a key that is rate limited rests, one the API refuses (401) is dropped (README).
  ANTHROPIC_API_KEYS: optionalText.transform((v) => [
    ...new Set(
      (v ?? "")
        .split(",")
        .map((k) => k.trim())
        .filter(Boolean),
    ),
  ]),
  ANTHROPIC_BASE_URL: optionalText.pipe(z.url({ message: "must be a URL such as https://api.anthropic.com" }).optional()),
  ANTHROPIC_MODEL: optionalText.transform((v) => v ?? DEFAULT_MODEL),
  ANTHROPIC_MAX_TOKENS: positiveInt(DEFAULT_MAX_TOKENS),
  ANTHROPIC_MAX_RETRIES: wholeNumber(2, 0),
  // Models tried in order when the agent's model is overloaded, rate limited past the retries, failing or silent.
  MODEL_FALLBACKS: modelList,
  // A model failing this many calls in a row rests for MODEL_BREAKER_COOLDOWN: calls go to their fallbacks meanwhile.
  MODEL_BREAKER_FAILURES: wholeNumber(5, 1, 1000),
  MODEL_BREAKER_COOLDOWN: duration(30_000),
  // A model call that brings nothing (no answer, no streamed text) for this long is given up and tried again.
  MODEL_CALL_TIMEOUT: duration(10 * 60 * 1000),
  // Flood control: messages one user may send per minute (a burst of that many, then one every 60/N s); 0: no limit.
  USER_MESSAGES_PER_MINUTE: wholeNumber(20, 0, 10_000),
  MAX_ITERATIONS: positiveInt(25),
  MODEL_CONTEXT_TOKENS: optionalText.transform((v, ctx) => {
    // "400000" for every model, or "claude-sonnet-5-5=1000000,claude-haiku-5-5=200000" (optionally with *=…).
    const limits: Record<string, number> = {};
    for (const part of (v ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [model, tokens] = part.includes("=") ? part.split("=", 2).map((s) => s.trim()) : ["*", part];
      const n = Number(tokens);
      if (!model || !Number.isInteger(n) || n < 1000) {
        ctx.addIssue({ code: "custom", message: `"${part}" is not a token count (≥ 1000) or model=tokens pair` });
        return z.NEVER;
      }
      limits[model] = n;
    }
    return limits;
  }),
  COMPACTION_THRESHOLD: optionalText.transform((v, ctx) => {
    if (v === undefined) return 0.7;
    const n = Number(v);
    if (!(n >= 0.1 && n <= 0.95)) {
      ctx.addIssue({ code: "custom", message: `must be a share of the context window between 0.1 and 0.95, got "${v}"` });
      return z.NEVER;
    }
    return n;
  }),
  COMPACTION_KEEP_TOKENS: wholeNumber(20_000, 0, 1_000_000),
  // A tool result longer than this is cut in the live history (read_tool_result reads the rest from the log).
  TOOL_RESULT_MAX_TOKENS: wholeNumber(DEFAULT_RESULT_TOKENS, 250, 1_000_000),
  SESSION_TOKEN_BUDGET: wholeNumber(0, 0, Number.MAX_SAFE_INTEGER),
  APPROVAL_TIMEOUT: duration(24 * 3600 * 1000),
  // The price table's overrides: model=input/output[/cache_write/cache_read] in USD per million tokens.
  MODEL_PRICES: optionalText.transform((v, ctx) => {
    const parsed = parsePrices(v);
    if ("error" in parsed) {
      ctx.addIssue({ code: "custom", message: `${parsed.error}; entries are separated by commas` });
      return z.NEVER;
    }
    return parsed.prices;
  }),
  SESSION_COST_BUDGET_USD: usdAmount("no budget"),
  // Daily quotas: per user (messages, USD) in every chat together, and USD per chat; a user's day ends at their
  // midnight (UTC unless their time zone is known), a chat's at midnight UTC. 0: no limit.
  USER_DAILY_MESSAGES: wholeNumber(0, 0, Number.MAX_SAFE_INTEGER),
  USER_DAILY_USD: usdAmount("no limit"),
  CHAT_DAILY_USD: usdAmount("no limit"),
  // User ids (as /status shows them, e.g. telegram:12345) the daily quotas never limit.
  QUOTA_EXEMPT_USERS: optionalText.transform((v) => [
    ...new Set(
      (v ?? "")
        .split(",")
        .map((u) => u.trim())
        .filter(Boolean),
    ),
  ]),
  // GET /metrics: on the HTTP API's port when unset (0 picks a free port), behind METRICS_TOKEN when that is set.
  METRICS_PORT: optionalText
    .pipe(
      z
        .string()
        .regex(/^\d{1,5}$/, { message: "must be a port number" })
        .optional(),
    )
    .transform((v) => (v === undefined ? undefined : Number(v))),
  METRICS_TOKEN: optionalText,
  // The read-only admin page (/admin) and its API: comma-separated tokens, each optionally token:name.
  ADMIN_TOKENS: optionalText.transform((v) => {
    const tokens = new Map<string, string>();
    for (const [index, entry] of (v ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)
      .entries()) {
      const at = entry.lastIndexOf(":");
      if (at > 0 && at < entry.length - 1) tokens.set(entry.slice(0, at), entry.slice(at + 1));
      else tokens.set(entry, `admin ${index + 1}`);
    }
    return tokens;
  }),
  // When a request, a reply or an approval counts as stuck (npm run admin -- stuck, /admin).
  ADMIN_STUCK_AFTER: duration(5 * 60 * 1000),
  // Read by the OpenTelemetry SDK itself; checked here so that a typo is an error at startup, not a silent default.
  OTEL_EXPORTER_OTLP_PROTOCOL: optionalText.pipe(
    z.enum(["http/protobuf", "http/json", "grpc"], { message: 'must be "http/protobuf" (the default), "http/json" or "grpc"' }).optional(),
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(z.url({ message: "must be a URL such as http://localhost:4318" }).optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalText.pipe(z.url({ message: "must be a URL such as http://localhost:4318/v1/traces" }).optional()),
  // Read by the SDK itself (a vendor's API key, usually); checked here, and every value is scrubbed from the logs.
  OTEL_EXPORTER_OTLP_HEADERS: headerList,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: headerList,
  OTEL_SERVICE_NAME: optionalText.transform((v) => v ?? "switchboard"),
  // Keys the session hashes in traces (HMAC-SHA256): the same value on every replica, so traces of one chat match.
  SESSION_HASH_SECRET: optionalText.pipe(z.string().min(16, { message: "must be at least 16 characters (openssl rand -hex 32 makes one)" }).optional()),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: optionalText
    .pipe(z.enum(["true", "false"], { message: 'must be "true" or "false"' }).optional())
    .transform((v) => v === "true"),
  HTTP_HOST: optionalText.transform((v) => v ?? "127.0.0.1"),
  HTTP_PORT: wholeNumber(8787, 0, 65_535),
  HTTP_API_TOKENS: optionalText.transform((v, ctx) => {
    // A Map: a token is never looked up on an object, where `constructor` or `__proto__` would "match".
    const tokens = new Map<string, string>();
    for (const [index, pair] of (v ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)
      .entries()) {
      const at = pair.lastIndexOf(":");
      if (at <= 0 || at === pair.length - 1) {
        // By position only: any part of the entry may be the secret token.
        ctx.addIssue({ code: "custom", message: `entry ${index + 1} must be token:user (comma-separated pairs; the user follows the last ":")` });
        return z.NEVER;
      }
      tokens.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return tokens;
  }),
  // What one HTTP API user may cost the server (0: no cap); over a cap, a request gets 429 naming it.
  HTTP_SESSIONS_PER_USER_MAX: wholeNumber(500, 0),
  HTTP_STREAMS_PER_USER_MAX: wholeNumber(8, 0),
  HTTP_STORED_BYTES_PER_USER_MAX: byteSize(200 * 1000 * 1000),
  HTTP_JWT_JWKS_URL: optionalText.pipe(z.url({ message: "must be the URL of a JWKS (JSON Web Key Set)" }).optional()),
  HTTP_JWT_AUDIENCE: optionalText,
  HTTP_JWT_ISSUER: optionalText,
  HTTP_JWT_USER_CLAIM: optionalText.transform((v) =>
    (v ?? "oid,sub")
      .split(",")
      .map((c) => c.trim())
      .filter(Boolean),
  ),
  HTTP_REQUEST_TOOL: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  HTTP_REQUEST_ALLOW: optionalText.transform((v, ctx) => {
    const parsed = parseAllowlist(v);
    if ("error" in parsed) {
      ctx.addIssue({ code: "custom", message: `${parsed.error}; entries are separated by commas` });
      return z.NEVER;
    }
    return parsed.allow;
  }),
  HTTP_REQUEST_MAX_BYTES: wholeNumber(102_400, 1_024, 100 * 1024 * 1024),
  HTTP_REQUEST_TIMEOUT_MS: wholeNumber(15_000, 100, 600_000),
  // WebFetch: a page fetched through the egress guard (HTTP_REQUEST_ALLOW, HTTP_REQUEST_TIMEOUT_MS) and read by a small model.
  WEB_FETCH: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  WEB_FETCH_MODEL: optionalText.transform((v) => v ?? "haiku"),
  WEB_FETCH_MAX_BYTES: wholeNumber(2 * 1024 * 1024, 1_024, 100 * 1024 * 1024),
  // WebSearch: the Messages API's own web search tool (billed per search by Anthropic), off unless asked for.
  WEB_SEARCH: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v === "on"),
  WEB_SEARCH_MAX_USES: wholeNumber(5, 1, 50),
  // The workspace tools (Read, Write, Edit, Glob, Grep, Bash) and the sandbox Bash runs in (docs/admin/workspace.md).
  WORKSPACE: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  WORKSPACE_MAX_BYTES: wholeNumber(100 * 1024 * 1024, 1024 * 1024, 1024 ** 4),
  WORKSPACE_MAX_FILES: wholeNumber(2000, 10, 1_000_000),
  BASH_DEFAULT_TIMEOUT_MS: wholeNumber(120_000, 1000, 3_600_000),
  BASH_MAX_TIMEOUT_MS: wholeNumber(600_000, 1000, 3_600_000),
  SANDBOX_ALLOW_HOSTS: optionalText.transform((v, ctx) => {
    const parsed = parseAllowlist(v);
    if ("error" in parsed) {
      ctx.addIssue({ code: "custom", message: `${parsed.error}; entries are separated by commas` });
      return z.NEVER;
    }
    if (parsed.allow.ranges.length > 0) {
      // Addresses would bypass the check of what a name resolves to; private ones are never reachable anyway.
      ctx.addIssue({ code: "custom", message: "takes host names and *.domain wildcards only, not IP addresses or ranges" });
      return z.NEVER;
    }
    return parsed.allow;
  }),
  SANDBOX_MEMORY_MB: wholeNumber(1024, 64, 1024 * 1024),
  SANDBOX_MAX_PROCESSES: wholeNumber(128, 8, 65_536),
  SANDBOX_CONCURRENCY: wholeNumber(4, 1, 1024),
  SANDBOX_QUEUE_MAX: wholeNumber(32, 0, 100_000),
  // MCP servers (docs/admin/mcp.md): mcp.json in Claude Code's format; unset, ./mcp.json when there is one.
  MCP_CONFIG: optionalText,
  MCP_CONNECT_TIMEOUT_MS: wholeNumber(10_000, 100, 600_000),
  MCP_TOOL_TIMEOUT_MS: wholeNumber(60_000, 100, 3_600_000),
  MCP_MAX_RESULT_BYTES: wholeNumber(102_400, 1_024, 100 * 1024 * 1024),
  // Files in and out (README, Files): one file, files per message, all of a session's files (0: no cap).
  MAX_FILE_BYTES: byteSize(20 * 1024 * 1024).refine((v) => v > 0, { message: "must be a size above 0, such as 20MB" }),
  MAX_FILES_PER_MESSAGE: wholeNumber(10, 1, 100),
  MAX_SESSION_FILE_BYTES: byteSize(200 * 1024 * 1024),
  // Days a stored file's bytes are kept; 0 (the default): kept until erased.
  FILE_RETENTION_DAYS: wholeNumber(0, 0, 36_500),
  // Speech to text for voice notes: an OpenAI-compatible /audio/transcriptions endpoint (the full URL).
  TRANSCRIPTION_URL: optionalText.pipe(z.url({ message: "must be the full endpoint URL, such as https://api.openai.com/v1/audio/transcriptions" }).optional()),
  TRANSCRIPTION_API_KEY: optionalText,
  TRANSCRIPTION_MODEL: optionalText.transform((v) => v ?? DEFAULT_TRANSCRIPTION_MODEL),
  AGENT_CALL_DEPTH_MAX: wholeNumber(5, 1, 50),
  AGENT_CONCURRENT_CALLS_MAX: wholeNumber(10, 1, 1000),
  AGENT_CALL_QUEUE_MAX: wholeNumber(20, 0, 10_000),
  AGENT_CALL_TIMEOUT_MS: wholeNumber(30_000, 1_000, 300_000),
  DATA_DIR: optionalText.transform((v) => v ?? "./data"),
  // postgres://user:password@host:5432/db selects PostgreSQL (several replicas may share it); unset: SQLite in DATA_DIR.
  DATABASE_URL: optionalText.pipe(
    z
      .url({ message: "must be a URL such as postgres://switchboard:password@db.example.com:5432/switchboard" })
      .refine((v) => /^postgres(ql)?:\/\//.test(v), { message: "must start with postgres:// or postgresql://" })
      .optional(),
  ),
  SESSION_LEASE_MS: wholeNumber(15_000, 1_000, 600_000),
  SKILLS_DIR: optionalText.transform((v) => v ?? "./skills"),
  AGENTS_DIR: optionalText.transform((v) => v ?? "./agents"),
  SKILLS_LOCK: optionalText
    .pipe(z.enum(["off", "warn", "enforce"], { message: 'must be "off", "warn" or "enforce" (see docs/admin/skills.md, Locking what loads)' }).optional())
    .transform((v) => v ?? "off"),
  TELEGRAM_BOT_TOKEN: optionalText.pipe(
    z
      .string()
      .regex(/^\d+:[A-Za-z0-9_-]+$/, { message: "must look like 123456789:AA… (the token BotFather gave you)" })
      .optional(),
  ),
  TELEGRAM_API_ROOT: optionalText.pipe(z.url({ message: "must be a URL such as https://api.telegram.org" }).optional()),
  TELEGRAM_ALLOWED_USERS: optionalText.transform((v) =>
    (v ?? "")
      .split(",")
      .map((u) => u.trim())
      .filter(Boolean),
  ),
  TELEGRAM_WEBHOOK_URL: optionalText.pipe(z.url({ message: "must be the public https URL Telegram should post updates to" }).optional()),
  TELEGRAM_WEBHOOK_SECRET: optionalText.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,256}$/, { message: "may use only A-Z, a-z, 0-9, _ and - (1-256 characters)" })
      .optional(),
  ),
  TELEGRAM_WEBHOOK_PORT: positiveInt(8080),
  TELEGRAM_THROTTLE: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  // How replies stream: drafts in private chats (edits where drafts are not available), edits everywhere, or off.
  TELEGRAM_STREAMING: optionalText.pipe(z.enum(["draft", "edit", "off"], { message: 'must be "draft", "edit" or "off"' }).optional()).transform((v) => v ?? "draft"),
  TELEGRAM_MAX_RETRIES: positiveInt(3),
  SLACK_BOT_TOKEN: optionalText.pipe(z.string().startsWith("xoxb-", { message: "must be the bot token, starting with xoxb-" }).optional()),
  SLACK_APP_TOKEN: optionalText.pipe(z.string().startsWith("xapp-", { message: "must be the app-level token, starting with xapp-" }).optional()),
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_API_URL: optionalText.pipe(z.url({ message: "must be a URL such as https://slack.com/api/" }).optional()),
  SLACK_PORT: positiveInt(3000),
  SLACK_MAX_RETRIES: wholeNumber(3, 0, 10),
  SLACK_STREAMING: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  SLACK_ALLOWED_USERS: optionalText.transform((v) =>
    (v ?? "")
      .split(",")
      .map((u) => u.trim())
      .filter(Boolean),
  ),
  SLACK_ALLOWED_CHANNELS: optionalText.transform((v) =>
    (v ?? "")
      .split(",")
      .map((u) => u.trim())
      .filter(Boolean),
  ),
  // A message sent while a turn runs: wait for the turn (queue), or join the running frame at its next model call (steer).
  MID_TURN: optionalText.pipe(z.enum(["queue", "steer"], { message: 'must be "queue" or "steer"' }).optional()).transform((v) => v ?? "queue"),
  // Long-term memory per user: facts extracted after each task, recalled in later ones (docs/admin/memory.md).
  MEMORY: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  // The model that extracts memories; an alias (haiku, sonnet, opus) or a model id.
  MEMORY_MODEL: optionalText.transform((v) => v ?? "haiku"),
  // Scheduled jobs: the schedule tools, /schedules, /unschedule, /timezone and the scheduler (docs/admin/schedules.md).
  SCHEDULES: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  // A run missed while the gateway was down still runs (once) when it is less than this late; else it is skipped.
  SCHEDULE_GRACE: duration(3_600_000),
  SCHEDULE_MAX_PER_USER: wholeNumber(20, 1, 10_000),
  // The time zone of users who never sent /timezone (an IANA name); unset: UTC.
  DEFAULT_TIMEZONE: optionalText.superRefine((v, ctx) => {
    if (v === undefined) return;
    const checked = checkZone(v);
    if ("error" in checked) ctx.addIssue({ code: "custom", message: checked.error });
  }),
  // A short line ("Interview skill finished") when a child hands the conversation back.
  HANDBACK_NOTICE: optionalText.pipe(z.enum(["on", "off"], { message: 'must be "on" or "off"' }).optional()).transform((v) => v !== "off"),
  // json: one JSON object per line; pretty: for humans. Unset: pretty when logs go to a terminal, json otherwise.
  LOG_FORMAT: optionalText.pipe(z.enum(["json", "pretty"], { message: 'must be "json" or "pretty"' }).optional()),
  LOG_LEVEL: optionalText.pipe(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional()).transform((v) => v ?? "info"),
});

const checked = schema.superRefine((c, ctx) => {
  if (c.SLACK_BOT_TOKEN && !c.SLACK_APP_TOKEN && !c.SLACK_SIGNING_SECRET) {
    ctx.addIssue({
      code: "custom",
      path: ["SLACK_APP_TOKEN"],
      message: "SLACK_BOT_TOKEN is set: also set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP events)",
    });
  }
  if (c.BASH_DEFAULT_TIMEOUT_MS > c.BASH_MAX_TIMEOUT_MS) {
    ctx.addIssue({
      code: "custom",
      path: ["BASH_DEFAULT_TIMEOUT_MS"],
      message: `${c.BASH_DEFAULT_TIMEOUT_MS} is over BASH_MAX_TIMEOUT_MS (${c.BASH_MAX_TIMEOUT_MS}); lower it or raise the maximum`,
    });
  }
  // Without both, any token the key set ever signed (for any other app of the same identity provider) would pass.
  for (const name of ["HTTP_JWT_AUDIENCE", "HTTP_JWT_ISSUER"] as const) {
    if (c.HTTP_JWT_JWKS_URL && !c[name]) {
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `HTTP_JWT_JWKS_URL is set: also set ${name} (JWTs are accepted only with the audience and issuer meant for this gateway)`,
      });
    }
  }
});

export type Config = z.output<typeof schema>;

/** Every setting the schema knows, in its order (tests walk them). */
export const SETTINGS = Object.keys(schema.shape) as Array<keyof Config>;

/**
 * Where a credential is in a setting's value: the whole value, the tokens of a token list (ADMIN_TOKENS'
 * `token:name` entries), or the values of a header list (`Authorization=Bearer …`).
 */
export type CredentialKind = "value" | "token list" | "header list";

/**
 * The settings that hold credentials: every one of them is scrubbed from every log line (src/secrets.ts) and never
 * shown in a configuration error. URL settings need no entry: a password in any URL-valued setting is found
 * anyway. test/security/credentials.test.ts walks the schema and fails for a credential-like setting missing here.
 */
export const CREDENTIALS: { readonly [K in keyof Config]?: CredentialKind } = {
  ANTHROPIC_API_KEY: "value",
  ANTHROPIC_API_KEYS: "token list",
  METRICS_TOKEN: "value",
  ADMIN_TOKENS: "token list",
  OTEL_EXPORTER_OTLP_HEADERS: "header list",
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: "header list",
  SESSION_HASH_SECRET: "value",
  HTTP_API_TOKENS: "token list",
  TELEGRAM_BOT_TOKEN: "value",
  TELEGRAM_WEBHOOK_SECRET: "value",
  SLACK_BOT_TOKEN: "value",
  SLACK_APP_TOKEN: "value",
  SLACK_SIGNING_SECRET: "value",
  TRANSCRIPTION_API_KEY: "value",
};

/** ANTHROPIC_API_KEY and ANTHROPIC_API_KEYS, in that order, each once (none: the model is not configured). */
export function apiKeysOf(config: Pick<Config, "ANTHROPIC_API_KEY" | "ANTHROPIC_API_KEYS">): string[] {
  return [...new Set([...(config.ANTHROPIC_API_KEY ? [config.ANTHROPIC_API_KEY] : []), ...config.ANTHROPIC_API_KEYS])];
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Where a variable's value came from, for an error about it: `.env`, or the environment (which wins over `.env`). */
export type ValueSource = (name: string) => string | undefined;

/**
 * Reads the environment once; every problem is reported with the variable's name and, when `sourceOf` knows it,
 * where its value came from (a wrong value is fixed where it was set).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, sourceOf: ValueSource = () => undefined): Config {
  const parsed = checked.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const name = issue.path.join(".");
    const source = sourceOf(name);
    return `  ${name}${source ? ` (${source})` : ""}: ${issue.message}`;
  });
  throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
}

/**
 * Loads a .env file into `env` when present (variables already set, even to nothing, win), as Node's
 * --env-file does, and says where each value came from.
 */
export function loadDotEnv(path = ".env", env: NodeJS.ProcessEnv = process.env): ValueSource {
  const fromFile = new Set<string>();
  const overridden = new Set<string>();
  if (existsSync(path)) {
    for (const [name, value] of Object.entries(parseEnv(readFileSync(path, "utf8")))) {
      if (env[name] !== undefined) {
        overridden.add(name);
        continue;
      }
      env[name] = value;
      fromFile.add(name);
    }
  }
  return (name) => {
    if (fromFile.has(name)) return `set in ${path}`;
    if (overridden.has(name)) return `set in the environment, which wins over ${path}`;
    return env[name] !== undefined && env[name]!.trim() !== "" ? "set in the environment" : undefined;
  };
}

/**
 * An entry point's defaults under the environment. A variable set to nothing (`LOG_LEVEL=` as copied from
 * .env.example) counts as unset, so it does not override a default.
 */
export function withDefaults(defaults: Partial<Record<string, string>>, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const set = Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== "");
  return { ...defaults, ...Object.fromEntries(set) };
}

/** For entry points: loads .env and the configuration, or prints what is wrong and exits 1. */
export function loadConfigOrExit(defaults: Partial<Record<string, string>> = {}): Config {
  const sourceOf = loadDotEnv();
  try {
    return loadConfig(withDefaults(defaults, process.env), sourceOf);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
