import type { DestinationStream } from "pino";
import { loggerFor, type LogPlan, type Logger } from "../../src/log.js";

const WARN = 40;

/**
 * The terminal's share of the log while the terminal chat runs there (the log file has everything, in full):
 * warnings and errors, one line each, written by the chat above its prompt, never inside it or inside a reply being
 * streamed. A line about the chat's own conversation is left out: the chat already said it, in its own words
 * ("Sorry, I could not finish that: …"), and the ids and fields are for the file.
 */
export class TerminalLog implements DestinationStream {
  private sink: ((line: string) => void) | null = null;

  constructor(private readonly fallback: (text: string) => void = (text) => void process.stderr.write(text)) {}

  /** From now on, lines go to `sink` (the chat's notice), until detach(). */
  attach(sink: (line: string) => void): void {
    this.sink = sink;
  }

  /** The chat stopped drawing: lines go straight to stderr again. */
  detach(): void {
    this.sink = null;
  }

  write(chunk: string): void {
    const line = terminalLine(chunk);
    if (line === null) return;
    if (this.sink) this.sink(line);
    else this.fallback(`${line}\n`);
  }
}

/** "! Telegram is unreachable at …", or null for what the terminal does not show. */
export function terminalLine(chunk: string): string | null {
  let record: { level?: unknown; msg?: unknown; session?: unknown; err?: { message?: unknown } };
  try {
    record = JSON.parse(chunk) as typeof record;
  } catch {
    // Not a log record (the logger's own note that it cannot open its file): as it is.
    const text = chunk.trim();
    return text === "" ? null : text;
  }
  if (typeof record.level !== "number" || record.level < WARN) return null;
  if (typeof record.session === "string" && record.session.startsWith("console:")) return null;
  const msg = typeof record.msg === "string" ? record.msg : "";
  const cause = typeof record.err?.message === "string" ? record.err.message.split("\n")[0]! : "";
  return `! ${msg}${cause && !msg.includes(cause) ? `: ${cause}` : ""}`;
}

/**
 * The logger of a process whose terminal chat runs on a TTY: the plan's file gets every line as JSON, the
 * terminal gets TerminalLog's lines. Otherwise (a service, a pipe) simply the plan's logger, and no TerminalLog.
 */
export function terminalLogger(plan: LogPlan, secrets: readonly string[]): { log: Logger; terminal: TerminalLog | null } {
  if (plan.to !== "file") return { log: loggerFor(plan, secrets), terminal: null };
  const terminal = new TerminalLog();
  return { log: loggerFor({ ...plan, stderr: { ...plan.stderr, format: "json", colors: false } }, secrets, terminal), terminal };
}
