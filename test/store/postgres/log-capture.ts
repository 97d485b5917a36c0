// A pino logger whose lines a test can wait for: how the PostgreSQL tests see a reconnect happen without
// sleeping.
import pino, { type Logger } from "pino";

export interface CapturedLog {
  log: Logger;
  lines: Array<{ msg?: string; [key: string]: unknown }>;
  /** Resolves with the first line (already logged or still to come) whose message contains `text`. */
  waitFor(text: string, deadlineMs?: number): Promise<{ msg?: string }>;
}

export function captureLog(): CapturedLog {
  const lines: CapturedLog["lines"] = [];
  const waiting: Array<{ text: string; resolve: (line: { msg?: string }) => void }> = [];
  const log = pino(
    { level: "debug" },
    {
      write(chunk: string) {
        const line = JSON.parse(chunk) as { msg?: string };
        lines.push(line);
        for (const w of [...waiting]) {
          if (line.msg?.includes(w.text)) {
            waiting.splice(waiting.indexOf(w), 1);
            w.resolve(line);
          }
        }
      },
    },
  );
  return {
    log,
    lines,
    waitFor(text, deadlineMs = 10_000) {
      const already = lines.find((l) => l.msg?.includes(text));
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no log line "${text}" within ${deadlineMs} ms; logged: ${JSON.stringify(lines)}`)), deadlineMs);
        waiting.push({
          text,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}
