import { join } from "node:path";
import pino, { type Logger } from "pino";
import { prettyFactory } from "pino-pretty";
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
  // A request's credentials (a user's JWT, a session cookie) are secrets nobody configured: by key, one level deep too.
  ...["", "*."].flatMap((at) => [
    `${at}headers.authorization`,
    `${at}headers.cookie`,
    `${at}headers['proxy-authorization']`,
    `${at}headers['x-api-key']`,
    `${at}headers['x-telegram-bot-api-secret-token']`,
    `${at}headers['x-slack-signature']`,
  ]),
  "config.ANTHROPIC_API_KEY",
];

/**
 * Logs go to stderr so stdout stays free for the terminal chat and its JSONL mode.
 * Secrets are redacted by key wherever they appear in a logged object, and by value (each of `secrets`, in
 * plain, URL-encoded and JSON-escaped forms, and any Telegram bot token) wherever they appear in a line.
 */
export function createLogger(level: string, destination: pino.DestinationStream | number = 2, secrets: readonly string[] = []): Logger {
  const stream = typeof destination === "number" ? pino.destination({ fd: destination, sync: true }) : destination;
  return withScrubbing(level, stream, secrets);
}

export type LogFormat = "json" | "pretty";

/** Where logs go and how they look: stderr only, or a file plus the warnings (and worse) on stderr. */
export type LogPlan =
  | { to: "stderr"; level: string; format: LogFormat; colors: boolean }
  | { to: "file"; level: string; file: string; format: LogFormat; stderr: { level: string; format: LogFormat; colors: boolean } };

const SEVERITY = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/**
 * Decides where the logs of a process go. With the terminal chat on a TTY, log lines would bury the chat: they go
 * to DATA_DIR/switchboard.log and only warnings and worse reach the terminal. Otherwise (a service, a container)
 * everything goes to stderr. LOG_FORMAT chooses the format everywhere; unset, it is pretty for a terminal, JSON
 * for a file or a pipe.
 */
export function logPlan(input: { ttyChat: boolean; stderrTTY?: boolean; format: LogFormat | undefined; level: string; dataDir: string }): LogPlan {
  const stderrTTY = input.stderrTTY ?? input.ttyChat;
  const forStderr = input.format ?? (stderrTTY ? "pretty" : "json");
  const colors = forStderr === "pretty" && stderrTTY;
  if (!input.ttyChat) return { to: "stderr", level: input.level, format: forStderr, colors };
  const stricter = SEVERITY.indexOf(input.level) > SEVERITY.indexOf("warn") ? input.level : "warn";
  return {
    to: "file",
    level: input.level,
    file: join(input.dataDir, "switchboard.log"),
    format: input.format ?? "json",
    stderr: { level: stricter, format: forStderr, colors },
  };
}

/**
 * The logger a plan describes. Every destination is written synchronously, so the last line before an exit is
 * not lost, and every line is scrubbed of secrets before it is formatted. `stderr` replaces fd 2 (tests). A log
 * file that cannot be opened is reported on stderr, and the logs go there instead.
 */
export function loggerFor(plan: LogPlan, secrets: readonly string[] = [], stderr: pino.DestinationStream = pino.destination({ fd: 2, sync: true })): Logger {
  if (plan.to === "stderr") return withScrubbing(plan.level, formatted(stderr, plan.format, plan.colors), secrets);
  let file: pino.DestinationStream;
  try {
    file = pino.destination({ dest: plan.file, sync: true, mkdir: true, append: true });
  } catch (error) {
    stderr.write(`cannot write the log file ${plan.file} (${error instanceof Error ? error.message : String(error)}); logging to stderr\n`);
    return loggerFor({ to: "stderr", level: plan.level, format: plan.stderr.format, colors: plan.stderr.colors }, secrets, stderr);
  }
  const streams = pino.multistream([
    // multistream needs a level per stream; "silent" logs nothing anyway (the logger's own level filters first).
    { level: plan.level === "silent" ? "fatal" : (plan.level as pino.Level), stream: formatted(file, plan.format, false) },
    { level: plan.stderr.level === "silent" ? "fatal" : (plan.stderr.level as pino.Level), stream: formatted(stderr, plan.stderr.format, plan.stderr.colors) },
  ]);
  return withScrubbing(plan.level, streams, secrets);
}

/** Whether a line at `level` shows on stderr under `plan` (the logger's level and, for a file plan, stderr's own). */
export function reachesStderr(plan: LogPlan, level: pino.Level): boolean {
  const threshold = plan.to === "file" ? plan.stderr.level : plan.level;
  return SEVERITY.indexOf(level) >= SEVERITY.indexOf(threshold) && SEVERITY.indexOf(level) >= SEVERITY.indexOf(plan.level);
}

/** A JSON line as it is, or formatted for people (in the same call: no worker thread, no buffer to lose). */
function formatted(destination: pino.DestinationStream, format: LogFormat, colors: boolean): pino.DestinationStream {
  if (format === "json") return destination;
  const pretty = prettyFactory({ colorize: colors, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,app" });
  return { write: (line: string) => destination.write(pretty(line)) };
}

function withScrubbing(level: string, stream: pino.DestinationStream | pino.MultiStreamRes, secrets: readonly string[]): Logger {
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
