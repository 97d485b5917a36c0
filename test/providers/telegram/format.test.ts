import { describe, expect, it } from "vitest";
import { markdownToTelegram, splitFormatted, withHeader, type Formatted } from "../../../providers/telegram/format.js";
import { cutPosition } from "../../../src/gateway/chunking.js";

function spans(f: Formatted): string[] {
  return f.entities.map((e) => `${e.type}${"language" in e && e.language ? `:${e.language}` : ""}=${f.text.slice(e.offset, e.offset + e.length)}`);
}

describe("markdownToTelegram", () => {
  it("renders the Markdown models write as text with entities, leaving special characters alone", () => {
    const f = markdownToTelegram(
      "# Plan\n\nHello **bold _both_** and `a<b>&c` with [docs](https://example.com) ~~old~~.\n\n```ts\nconst x = 1 < 2;\n```\n\n- one\n- two\n\n> careful",
    );
    expect(f.text).toBe("Plan\n\nHello bold both and a<b>&c with docs old.\n\nconst x = 1 < 2;\n\n• one\n• two\n\ncareful");
    expect(spans(f)).toEqual([
      "bold=Plan",
      "italic=both",
      "bold=bold both",
      "code=a<b>&c",
      "text_link=docs",
      "strikethrough=old",
      "pre:ts=const x = 1 < 2;",
      "blockquote=careful",
    ]);
  });

  it("counts offsets in UTF-16 units, so entities after an emoji land on the right text", () => {
    const f = markdownToTelegram("🎉🎉 **yes**");
    expect(spans(f)).toEqual(["bold=yes"]);
    expect(f.entities[0]!.offset).toBe(5);
  });
});

describe("splitFormatted", () => {
  it("splits a 10,000-character answer on paragraph boundaries, each part within the limit, formatting intact", () => {
    const paragraph = (i: number) => `Paragraph ${i} has **bold words** and ${"filler ".repeat(60)}end.`;
    const markdown = Array.from({ length: 22 }, (_, i) => paragraph(i)).join("\n\n");
    const f = markdownToTelegram(markdown);
    expect(f.text.length).toBeGreaterThan(10_000);
    const parts = splitFormatted(f);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) {
      expect(part.text.length).toBeLessThanOrEqual(4096);
      expect(part.text.startsWith("Paragraph ")).toBe(true);
      expect(part.text.endsWith("end.")).toBe(true);
      for (const e of part.entities) expect(part.text.slice(e.offset, e.offset + e.length)).toBe("bold words");
    }
    expect(parts.map((p) => p.text).join("\n\n")).toBe(f.text);
    expect(parts.reduce((n, p) => n + p.entities.length, 0)).toBe(22);
  });

  it("closes and reopens a code block that crosses a cut, keeping its language", () => {
    const code = Array.from({ length: 400 }, (_, i) => `line ${i} = compute(${i});`).join("\n");
    const parts = splitFormatted(markdownToTelegram(`Intro.\n\n\`\`\`python\n${code}\n\`\`\``));
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts.slice(1)) {
      expect(part.entities).toEqual([{ type: "pre", offset: 0, length: part.text.length, language: "python" }]);
    }
    expect(parts.flatMap((p) => p.text.split("\n")).filter((l) => l.startsWith("line "))).toHaveLength(400);
  });

  it("falls back to word and then hard cuts, never splitting a surrogate pair", () => {
    const emoji = `a${"😀".repeat(3000)}`; // 6001 UTF-16 units, no spaces; unit 4096 is inside an emoji
    const parts = splitFormatted({ text: emoji, entities: [] });
    expect(parts.map((p) => p.text.length)).toEqual([4095, 1906]);
    expect(parts.map((p) => p.text).join("")).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    const words = splitFormatted({ text: "word ".repeat(1000).trim(), entities: [] });
    expect(words.every((p) => p.text.length <= 4096 && !p.text.endsWith(" ") && p.text.endsWith("word"))).toBe(true);
  });
});

describe("cutPosition (shared chunking)", () => {
  const graphemes = (s: string) => [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(s)].map((g) => g.segment);

  it("never splits a grapheme cluster, even in a text without whitespace", () => {
    // An 11-unit ZWJ family, a 4-unit flag, a 4-unit skin-tone emoji, a letter with a combining accent.
    for (const cluster of ["👨‍👩‍👧‍👦", "🇺🇦", "👍🏽", "e\u0301"]) {
      const text = `a${cluster.repeat(Math.ceil(6000 / cluster.length))}`;
      const parts = splitFormatted({ text, entities: [] });
      expect(parts.map((p) => p.text).join("")).toBe(text);
      for (const part of parts) {
        expect(part.text.length).toBeLessThanOrEqual(4096);
        expect(graphemes(part.text).filter((g) => g !== "a" && g !== cluster)).toEqual([]);
      }
    }
  });

  it("still cuts at whitespace when there is some, and a cluster longer than the limit between code points", () => {
    expect(cutPosition("ab cd", 0, 4)).toBe(3);
    const zalgo = `x${"\u0301".repeat(20)}`;
    expect(cutPosition(zalgo, 0, 8)).toBe(8);
  });
});

describe("withHeader", () => {
  it("puts a bold speaker line above the text and shifts the entities", () => {
    const f = withHeader("🧩 interview", markdownToTelegram("Where **to**?"));
    expect(f.text).toBe("🧩 interview\nWhere to?");
    expect(spans(f)).toEqual(["bold=🧩 interview", "bold=to"]);
  });
});
