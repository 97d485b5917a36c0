import pino, { type Logger } from "pino";

export type { Logger };

const REDACT = [
  "apiKey",
  "token",
  "*.apiKey",
  "*.token",
  "headers.authorization",
  "headers['x-api-key']",
  "config.ANTHROPIC_API_KEY",
];

/**
 * Logs go to stderr so stdout stays free for the terminal chat and its JSONL mode.
 * Secrets are redacted by key wherever they appear in a logged object.
 */
export function createLogger(level: string, destination: pino.DestinationStream | number = 2): Logger {
  const stream = typeof destination === "number" ? pino.destination({ fd: destination, sync: true }) : destination;
  return pino({ level, redact: { paths: REDACT, censor: "[redacted]" }, base: { app: "switchboard" } }, stream);
}

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
