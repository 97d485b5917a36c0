import pino, { type Logger } from "pino";
import { REDACTED, secretDetector, secretScrubber } from "./secrets.js";

export type { Logger };

const REDACT = [
  "apiKey",
  "token",
  "secret",
  "password",
  "*.apiKey",
  "*.token",
  "*.secret",
  "*.password",
  "headers.authorization",
  "headers.cookie",
  "headers['x-api-key']",
  "headers['x-telegram-bot-api-secret-token']",
  "config.ANTHROPIC_API_KEY",
];

/**
 * Logs go to stderr so stdout stays free for the terminal chat and its JSONL mode.
 * Secrets are redacted by key wherever they appear in a logged object, and by value (each of `secrets`, in
 * plain, URL-encoded and JSON-escaped forms, and any Telegram bot token) wherever they appear in a line.
 */
export function createLogger(level: string, destination: pino.DestinationStream | number = 2, secrets: readonly string[] = []): Logger {
  const stream = typeof destination === "number" ? pino.destination({ fd: destination, sync: true }) : destination;
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: REDACTED },
      base: { app: "switchboard" },
      // Every line of this logger and its children passes here on its way to the stream: the one choke point.
      hooks: { streamWrite: lineScrubber(secrets) },
    },
    stream,
  );
}

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

/**
 * Scrubs one serialized JSON line. Lines are searched for the secrets as JSON would escape them; a line that
 * holds one is parsed and every string (and key) scrubbed, so what is written stays valid JSON.
 */
function lineScrubber(secrets: readonly string[]): (line: string) => string {
  const suspect = secretDetector(secrets, (form) => JSON.stringify(form).slice(1, -1));
  const scrub = secretScrubber(secrets);
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return scrub(value);
    if (typeof value === "number") return scrub(String(value)) === String(value) ? value : REDACTED;
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), walk(v)]));
    }
    return value;
  };
  return (line) => {
    if (!suspect(line)) return line;
    try {
      return `${JSON.stringify(walk(JSON.parse(line)))}${line.endsWith("\n") ? "\n" : ""}`;
    } catch {
      // Not JSON after all (a custom serializer's output): scrub the text as it is.
      return scrub(line);
    }
  };
}
