import { describe, expect, it } from "vitest";
import { markdownToMrkdwn, splitMrkdwn } from "../../../providers/slack/format.js";
import { renderReply } from "../../../providers/slack/outbound.js";

describe("markdownToMrkdwn", () => {
  it("converts the Markdown models write to Slack mrkdwn and escapes control characters", () => {
    expect(
      markdownToMrkdwn(
        "# Plan\n\nHello **bold** and *it* ~~old~~ `x<y>` with [docs](https://example.com) & <tags>.\n\n```js\nif (a < b) {}\n```\n\n- one\n- two\n\n> careful",
      ),
    ).toBe(
      "*Plan*\n\nHello *bold* and _it_ ~old~ `x&lt;y&gt;` with <https://example.com|docs> &amp; &lt;tags&gt;.\n\n```\nif (a &lt; b) {}\n```\n\n• one\n• two\n\n> careful",
    );
  });

  it("escapes &, < and > inside code spans, code blocks and tables, where Slack still reads them as markup", () => {
    expect(markdownToMrkdwn("Use `Map<String, List<Integer>>`, never `<!channel>` or `a && b`.")).toBe(
      "Use `Map&lt;String, List&lt;Integer&gt;&gt;`, never `&lt;!channel&gt;` or `a &amp;&amp; b`.",
    );
    expect(markdownToMrkdwn("```java\nMap<String, List<Integer>> m; // <@U0BOB>\n```")).toBe("```\nMap&lt;String, List&lt;Integer&gt;&gt; m; // &lt;@U0BOB&gt;\n```");
    expect(markdownToMrkdwn("| type | ping |\n|---|---|\n| List<T> | <!here> & co |")).toBe("```\ntype | ping\nList&lt;T&gt; | &lt;!here&gt; &amp; co\n```");
  });
});

describe("splitMrkdwn", () => {
  it("splits on paragraph boundaries below the limit", () => {
    const text = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}: ${"word ".repeat(100)}end.`).join("\n\n");
    const parts = splitMrkdwn(text);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(3500);
      expect(part).toMatch(/^Paragraph \d+: [\s\S]*end\.$/);
    }
    expect(parts.join("\n\n")).toBe(text);
  });

  it("keeps code blocks intact by closing and reopening them across parts", () => {
    const code = Array.from({ length: 700 }, (_, i) => `line ${i};`).join("\n");
    const parts = splitMrkdwn(`Intro\n\n\`\`\`\n${code}\n\`\`\``);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(3500);
      expect((part.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(parts.join("\n").match(/line \d+;/g)).toHaveLength(700);
  });

  it("never cuts an escaped character in half", () => {
    const text = `${"x".repeat(3490)}&lt;&gt;&amp;`;
    const parts = splitMrkdwn(text);
    expect(parts.join("")).toBe(text);
    for (const part of parts) expect(part).not.toMatch(/&(a|am|l|g)?$|^(mp|p|t)?;/);
  });
});

describe("renderReply", () => {
  it("labels a subagent's message with who is speaking", () => {
    const parts = renderReply({ id: "o", sessionKey: "slack:T:C", requestId: null, agent: "skill:interview", depth: 2, text: "Where **to**?", kind: "message" });
    expect(parts).toEqual(["*🧩 interview*\nWhere *to*?"]);
  });
});
