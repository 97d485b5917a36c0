// Plain text that someone else controls, run through regular expressions on the event loop: a user's message checked
// for "stop!" while a task runs, and a model's reply formatted for Telegram. `/[.!]+$/` and `/\s+$/` look harmless,
// but a regular expression retries them from every character of a long run that does not reach the end.
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/gateway/commands.js";
import { markdownToTelegram } from "../../providers/telegram/format.js";

const BOUND_MS = 100;

function timed<T>(work: () => T): { result: T; ms: number } {
  const started = performance.now();
  const result = work();
  return { result, ms: performance.now() - started };
}

describe("long runs of one character cost a pass over the text", () => {
  it("a message of 50 000 dots and a letter, sent while a task runs, is not a command (it took 26 s)", () => {
    const { result, ms } = timed(() => parseCommand(`${".".repeat(50_000)}x`, true));
    expect(result).toBeNull();
    expect(ms).toBeLessThan(BOUND_MS);
    expect(parseCommand("stop!!!", true)).toBe("cancel");
    expect(parseCommand("Cancel.", true)).toBe("cancel");
  });

  it("a reply with 7000 spaces in a quote, or 7000 newlines in code before a list, is formatted in one pass", () => {
    const spaces = `> quoted${" ".repeat(7000)}still quoted`;
    const newlines = `\`\`\`\n${"\n".repeat(7000)}code\n\`\`\`\n\n- item`;
    for (const markdown of [spaces, newlines]) {
      const { result, ms } = timed(() => markdownToTelegram(markdown));
      expect(ms).toBeLessThan(BOUND_MS);
      expect(result.entities.length).toBeGreaterThan(0);
    }
  });
});
