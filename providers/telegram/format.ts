import { marked, type Token, type Tokens } from "marked";
import type { MessageEntity } from "grammy/types";
import { cutPosition, formattable } from "../../src/gateway/index.js";

/** Text plus Telegram entities: offsets and lengths in UTF-16 code units, as the Bot API counts. */
export interface Formatted {
  text: string;
  entities: MessageEntity[];
}

export const TELEGRAM_LIMIT = 4096;

type EntityType = "bold" | "italic" | "strikethrough" | "code" | "pre" | "blockquote" | "text_link";

class Builder {
  text = "";
  entities: MessageEntity[] = [];

  wrap(type: EntityType, inner: () => void, extra: { url?: string; language?: string } = {}): void {
    const start = this.text.length;
    inner();
    const length = this.text.length - start;
    if (length === 0) return;
    if (type === "text_link") this.entities.push({ type, offset: start, length, url: extra.url ?? "" });
    else if (type === "pre") this.entities.push({ type, offset: start, length, ...(extra.language ? { language: extra.language } : {}) });
    else this.entities.push({ type, offset: start, length });
  }

  add(text: string): void {
    this.text += text;
  }

  /** Ends a block: blocks are separated by one blank line. */
  breakBlock(): void {
    if (this.text !== "" && !this.text.endsWith("\n\n")) this.text += this.text.endsWith("\n") ? "\n" : "\n\n";
  }
}

/**
 * Not `/\n+$/`: a regular expression retries that from every newline of a long run in the middle of the text
 * (50 000 newlines between two words took 21 s); trimEnd() for `\s+$` likewise.
 */
function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === "\n") end--;
  return text.slice(0, end);
}

/** Renders the Markdown a model writes as Telegram text + entities (no parse_mode, so nothing to mis-escape). */
export function markdownToTelegram(markdown: string): Formatted {
  // Too long or too deeply nested to format at a bounded cost: sent as it was written, every word intact.
  if (!formattable(markdown)) return { text: markdown.trim(), entities: [] };
  const b = new Builder();
  blocks(b, marked.lexer(markdown), "");
  return trim({ text: b.text, entities: b.entities });
}

function blocks(b: Builder, tokens: Token[], indent: string): void {
  for (const token of tokens) {
    switch (token.type) {
      case "space":
        break;
      case "heading":
      case "paragraph":
        if (token.type === "heading") b.wrap("bold", () => inline(b, (token as Tokens.Heading).tokens));
        else inline(b, (token as Tokens.Paragraph).tokens);
        b.breakBlock();
        break;
      case "code": {
        const code = token as Tokens.Code;
        b.wrap("pre", () => b.add(code.text), code.lang ? { language: code.lang.split(/\s/)[0]! } : {});
        b.breakBlock();
        break;
      }
      case "blockquote":
        b.wrap("blockquote", () => {
          blocks(b, (token as Tokens.Blockquote).tokens, indent);
          b.text = b.text.trimEnd();
        });
        b.breakBlock();
        break;
      case "list": {
        const list = token as Tokens.List;
        list.items.forEach((item, i) => {
          const bullet = list.ordered ? `${Number(list.start || 1) + i}. ` : "• ";
          b.add(`${indent}${item.task ? (item.checked ? "☑ " : "☐ ") : ""}${bullet}`);
          listItem(b, item.tokens, `${indent}   `);
          if (!b.text.endsWith("\n")) b.add("\n");
        });
        b.breakBlock();
        break;
      }
      case "hr":
        b.add("———");
        b.breakBlock();
        break;
      case "table": {
        const table = token as Tokens.Table;
        const rows = [table.header.map((c) => c.text), ...table.rows.map((r) => r.map((c) => c.text))];
        b.wrap("pre", () => b.add(rows.map((r) => r.join(" | ")).join("\n")));
        b.breakBlock();
        break;
      }
      default:
        if ("tokens" in token && Array.isArray(token.tokens)) inline(b, token.tokens as Token[]);
        else b.add("raw" in token ? String(token.raw) : "");
        b.breakBlock();
    }
  }
}

function listItem(b: Builder, tokens: Token[], indent: string): void {
  for (const token of tokens) {
    if (token.type === "text") inline(b, (token as Tokens.Text).tokens ?? [token]);
    else if (token.type === "list") {
      if (!b.text.endsWith("\n")) b.add("\n");
      blocks(b, [token], indent);
      b.text = withoutTrailingNewlines(b.text);
    } else if (token.type === "space") continue;
    else {
      blocks(b, [token], indent);
      b.text = withoutTrailingNewlines(b.text);
    }
  }
}

function inline(b: Builder, tokens: Token[]): void {
  for (const token of tokens) {
    switch (token.type) {
      case "strong":
        b.wrap("bold", () => inline(b, (token as Tokens.Strong).tokens));
        break;
      case "em":
        b.wrap("italic", () => inline(b, (token as Tokens.Em).tokens));
        break;
      case "del":
        b.wrap("strikethrough", () => inline(b, (token as Tokens.Del).tokens));
        break;
      case "codespan":
        b.wrap("code", () => b.add((token as Tokens.Codespan).text));
        break;
      case "link": {
        const link = token as Tokens.Link;
        if (/^(https?|tg|mailto):/i.test(link.href)) b.wrap("text_link", () => inline(b, link.tokens), { url: link.href });
        else inline(b, link.tokens);
        break;
      }
      case "image":
        b.add((token as Tokens.Image).text || (token as Tokens.Image).href);
        break;
      case "br":
        b.add("\n");
        break;
      case "text":
        if ("tokens" in token && token.tokens?.length) inline(b, token.tokens);
        else b.add(token.text);
        break;
      default:
        b.add("text" in token ? String(token.text) : String(token.raw));
    }
  }
}

/** Drops leading/trailing whitespace (Telegram strips it, which would shift entities) and fixes entities. */
function trim(f: Formatted): Formatted {
  return slice(f, 0, f.text.length);
}

/** The part [from, to) of a formatted text, entities clipped to it, whitespace trimmed at both ends. */
export function slice(f: Formatted, from: number, to: number): Formatted {
  while (from < to && /\s/.test(f.text[from]!)) from++;
  while (to > from && /\s/.test(f.text[to - 1]!)) to--;
  const entities: MessageEntity[] = [];
  for (const e of f.entities) {
    const start = Math.max(e.offset, from);
    const end = Math.min(e.offset + e.length, to);
    if (end > start) entities.push({ ...e, offset: start - from, length: end - start });
  }
  return { text: f.text.slice(from, to), entities };
}

/**
 * Splits into messages of at most `limit` UTF-16 units, cutting at a paragraph break, else a line
 * break, else a space, never inside a surrogate pair. Entities crossing a cut continue in the next
 * message (a code block is closed and reopened with its language).
 */
export function splitFormatted(f: Formatted, limit = TELEGRAM_LIMIT): Formatted[] {
  const chunks: Formatted[] = [];
  let start = 0;
  while (f.text.length - start > limit) {
    const cut = cutPosition(f.text, start, limit);
    const chunk = slice(f, start, cut);
    if (chunk.text !== "") chunks.push(chunk);
    start = cut;
  }
  const rest = slice(f, start, f.text.length);
  if (rest.text !== "") chunks.push(rest);
  return chunks;
}

/** Prepends a bold header line (who is speaking) to a formatted text. */
export function withHeader(header: string, f: Formatted): Formatted {
  const prefix = `${header}\n`;
  return {
    text: prefix + f.text,
    entities: [{ type: "bold", offset: 0, length: header.length }, ...f.entities.map((e) => ({ ...e, offset: e.offset + prefix.length }))],
  };
}
