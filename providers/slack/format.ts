import { marked, type Token, type Tokens } from "marked";
import { cutPosition, formattable } from "../../src/gateway/index.js";

/** Slack shows up to 40,000 characters but long messages collapse; keep each part readable. */
export const SLACK_CHUNK = 3500;
const FENCE = "```";

/**
 * `&`, `<` and `>` are control characters in mrkdwn, inside code too: Slack reads `<!channel>` in a code span as
 * a ping and drops `<String, List<Integer>>` as a bad link, and shows `&lt;` as `<` everywhere.
 */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** Renders the Markdown a model writes as Slack mrkdwn. */
export function markdownToMrkdwn(markdown: string): string {
  // Too long or too deeply nested to format at a bounded cost: sent as it was written, every word intact.
  if (!formattable(markdown)) return escapeMrkdwn(markdown).trim();
  return blocks(marked.lexer(markdown), "").join("\n\n").trim();
}

function blocks(tokens: Token[], indent: string): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    switch (token.type) {
      case "space":
        break;
      case "heading":
        out.push(`*${inline((token as Tokens.Heading).tokens)}*`);
        break;
      case "paragraph":
        out.push(inline((token as Tokens.Paragraph).tokens));
        break;
      case "code":
        out.push(`${FENCE}\n${escapeMrkdwn((token as Tokens.Code).text)}\n${FENCE}`);
        break;
      case "blockquote":
        out.push(
          blocks((token as Tokens.Blockquote).tokens, "")
            .join("\n\n")
            .split("\n")
            .map((line) => `> ${line}`)
            .join("\n"),
        );
        break;
      case "list": {
        const list = token as Tokens.List;
        const items = list.items.map((item, i) => {
          const bullet = list.ordered ? `${Number(list.start || 1) + i}. ` : "• ";
          const body = item.tokens
            .map((t) => (t.type === "text" ? inline((t as Tokens.Text).tokens ?? [t]) : blocks([t], `${indent}   `).join("\n")))
            .filter((s) => s !== "")
            .join("\n");
          return `${indent}${bullet}${body}`;
        });
        out.push(items.join("\n"));
        break;
      }
      case "hr":
        out.push("———");
        break;
      case "table": {
        const table = token as Tokens.Table;
        const rows = [table.header.map((c) => escapeMrkdwn(c.text)), ...table.rows.map((r) => r.map((c) => escapeMrkdwn(c.text)))];
        out.push(`${FENCE}\n${rows.map((r) => r.join(" | ")).join("\n")}\n${FENCE}`);
        break;
      }
      default:
        out.push("tokens" in token && Array.isArray(token.tokens) ? inline(token.tokens as Token[]) : escapeMrkdwn(token.raw));
    }
  }
  return out;
}

function inline(tokens: Token[]): string {
  return tokens
    .map((token) => {
      switch (token.type) {
        case "strong":
          return `*${inline((token as Tokens.Strong).tokens)}*`;
        case "em":
          return `_${inline((token as Tokens.Em).tokens)}_`;
        case "del":
          return `~${inline((token as Tokens.Del).tokens)}~`;
        case "codespan":
          return `\`${escapeMrkdwn((token as Tokens.Codespan).text)}\``;
        case "link": {
          const link = token as Tokens.Link;
          const label = inline(link.tokens);
          return /^(https?|mailto):/i.test(link.href) ? `<${link.href}|${label.replaceAll("|", "¦")}>` : label;
        }
        case "image":
          return escapeMrkdwn((token as Tokens.Image).text || (token as Tokens.Image).href);
        case "br":
          return "\n";
        case "text":
          return "tokens" in token && token.tokens?.length ? inline(token.tokens) : escapeMrkdwn(token.text);
        case "escape":
          return escapeMrkdwn(token.text);
        default:
          return escapeMrkdwn("text" in token ? String(token.text) : token.raw);
      }
    })
    .join("");
}

/**
 * Splits mrkdwn into parts of at most `limit` characters at paragraph → line → word boundaries.
 * A code block cut in two is closed at the end of one part and reopened at the start of the next.
 */
export function splitMrkdwn(text: string, limit = SLACK_CHUNK): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    // Leave room to close and reopen a code block.
    const cut = entityBoundary(rest, cutPosition(rest, 0, limit - 2 * (FENCE.length + 1)));
    let part = rest.slice(0, cut).trimEnd();
    rest = rest.slice(cut).trimStart();
    if ((part.split(FENCE).length - 1) % 2 === 1) {
      part = `${part}\n${FENCE}`;
      rest = `${FENCE}\n${rest}`;
    }
    if (part !== "") parts.push(part);
  }
  if (rest.trim() !== "") parts.push(rest);
  return parts;
}

/** Moves a cut that would fall inside `&amp;`, `&lt;` or `&gt;` to before it, so no part ends with half an entity. */
function entityBoundary(text: string, cut: number): number {
  const amp = text.lastIndexOf("&", cut - 1);
  if (amp >= 0 && cut - amp < 5 && /^&(amp|lt|gt);/.test(text.slice(amp, amp + 5)) && amp + text.slice(amp).indexOf(";") >= cut) {
    return amp > 0 ? amp : cut;
  }
  return cut;
}
