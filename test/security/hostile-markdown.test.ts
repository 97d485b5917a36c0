// Markdown from the model as an attacker's: a reply is formatted for Telegram and Slack on the event loop, and its
// text can be steered by anyone who puts words in front of the model. Deep nesting made marked overflow the stack
// (a crash of that delivery) after seconds, or run for minutes; past the limits a reply is sent as plain text.
import { describe, expect, it } from "vitest";
import { formattable, MAX_FORMATTED_CHARS, MAX_MARKDOWN_NESTING } from "../../src/gateway/markdown-limits.js";
import { markdownToMrkdwn } from "../../providers/slack/format.js";
import { markdownToTelegram } from "../../providers/telegram/format.js";

/** Formatting one reply may take this long at most; the inputs below took seconds to minutes, or crashed. */
const BOUND_MS = 250;

const HOSTILE: Array<[string, string]> = [
  ["50 000 block quotes on one line", `${">".repeat(50_000)} hi`],
  ["128 levels of quote and list on one line", `${"> - ".repeat(128)}hi`],
  ["2000 nested list items", Array.from({ length: 2000 }, (_, i) => `${" ".repeat(i * 2)}- level ${i}`).join("\n")],
  [
    "a 100 KB reply of 16-deep lists",
    Array.from({ length: 16 }, (_, i) => `${" ".repeat(i * 2)}- x`)
      .join("\n")
      .concat("\n")
      .repeat(400),
  ],
];

describe("a hostile Markdown reply is delivered as plain text, quickly", () => {
  it.each(HOSTILE)("%s", { timeout: 60_000 }, (_name, markdown) => {
    const started = performance.now();
    const telegram = markdownToTelegram(markdown);
    const slack = markdownToMrkdwn(markdown);
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    expect(telegram).toEqual({ text: markdown.trim(), entities: [] });
    expect(slack).toBe(markdown.trim().replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"));
  });

  it("formats what stays within the limits as before", () => {
    const nested = Array.from({ length: MAX_MARKDOWN_NESTING }, (_, i) => `${"  ".repeat(i)}- level ${i}`).join("\n");
    expect(formattable(nested)).toBe(true);
    expect(markdownToTelegram("**bold** and `code`")).toEqual({
      text: "bold and code",
      entities: [
        { type: "bold", offset: 0, length: 4 },
        { type: "code", offset: 9, length: 4 },
      ],
    });
    expect(markdownToMrkdwn("**bold**")).toBe("*bold*");
  });

  it("counts nesting outside code blocks only, so indented code keeps its formatting", () => {
    const code = `Here:\n\n\`\`\`json\n${Array.from({ length: 20 }, (_, i) => `${"  ".repeat(i)}{"level": ${i}}`).join("\n")}\n\`\`\`\n`;
    expect(formattable(code)).toBe(true);
    expect(markdownToTelegram(code).entities).toEqual([expect.objectContaining({ type: "pre", language: "json" })]);
    expect(formattable(`${"  ".repeat(MAX_MARKDOWN_NESTING + 1)}- too deep`)).toBe(false);
    expect(formattable("x".repeat(MAX_FORMATTED_CHARS + 1))).toBe(false);
  });
});
