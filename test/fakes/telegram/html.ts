// Telegram's `parse_mode: "HTML"`, ported from TDLib's parse_html (which the
// Bot API server runs). Porting the real algorithm rather than using a generic
// HTML parser matters: Telegram accepts things browsers reject (a bare `&`,
// `</>` closing any tag) and rejects things browsers accept (`<br>`, `a < b`),
// and its error messages quote byte offsets into the UTF-8 input.

import { byteLength, hasLoneSurrogate, sortEntities, TgError, type MessageEntity } from "./common.js";

const SUPPORTED_TAGS = new Set(["a", "b", "strong", "i", "em", "s", "strike", "del", "u", "ins", "tg-spoiler", "tg-emoji", "span", "pre", "code", "blockquote"]);

const SIMPLE_TAGS: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  span: "spoiler",
};

const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

// TDLib scans a NUL-terminated C string, so "end of input" behaves like "\0",
// which its is_space() counts as whitespace. `at()` reproduces that.
const isSpace = (c: string) => c === " " || c === "\t" || c === "\r" || c === "\n" || c === "\0" || c === "\v" || c === "\f";
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

interface OpenTag {
  name: string;
  argument: string;
  /** UTF-16 offset in the output text where the tag's content starts. */
  offset: number;
}

/** Decodes `&lt;`, `&#123;`, `&#x1F600;` (the `;` is optional, as in TDLib). Null if `src[pos]` starts no valid entity. */
function decodeEntity(src: string, pos: number): { text: string; end: number } | null {
  let end = pos + 1;
  let decoded: string;
  if (src[end] === "#") {
    end++;
    const hex = src[end] === "x";
    if (hex) end++;
    const digits = hex ? /^[0-9a-fA-F]*/.exec(src.slice(end))![0] : /^[0-9]*/.exec(src.slice(end))![0];
    end += digits.length;
    const code = digits ? parseInt(digits, hex ? 16 : 10) : 0;
    if (code === 0 || code >= 0x10ffff || end - pos >= 10) return null;
    decoded = String.fromCodePoint(code);
  } else {
    const name = /^[A-Za-z]*/.exec(src.slice(end))![0];
    end += name.length;
    const value = NAMED_ENTITIES[name];
    if (value === undefined) return null;
    decoded = value;
  }
  if (src[end] === ";") end++;
  return { text: decoded, end };
}

/** Returns the plain text and entities, or throws a 400 "can't parse entities" TgError. */
export function parseHtml(src: string): { text: string; entities: MessageEntity[] } {
  const at = (i: number) => src[i] ?? "\0";
  const byteOffset = (i: number) => byteLength(src.slice(0, i));
  const fail = (detail: string): never => {
    throw new TgError(400, `Bad Request: can't parse entities: ${detail}`);
  };

  let out = "";
  const open: OpenTag[] = [];
  const entities: MessageEntity[] = [];

  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "&") {
      const entity = decodeEntity(src, i);
      if (entity) {
        out += entity.text;
        i = entity.end - 1;
        continue;
      }
      // Not an entity: TDLib keeps the `&` literally (no error).
    }
    if (c !== "<") {
      out += c;
      continue;
    }

    const begin = i++;
    if (at(i) !== "/") {
      // ---- start tag
      while (!isSpace(at(i)) && at(i) !== ">") i++;
      if (i >= src.length) fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
      const name = src.slice(begin + 1, i).toLowerCase();
      if (!SUPPORTED_TAGS.has(name)) fail(`Unsupported start tag "${name}" at byte offset ${byteOffset(begin)}`);

      let argument = "";
      while (at(i) !== ">") {
        while (i < src.length && isSpace(at(i))) i++;
        if (at(i) === ">") break;
        const attrBegin = i;
        while (!isSpace(at(i)) && at(i) !== "=" && at(i) !== ">") i++;
        const attr = src.slice(attrBegin, i);
        if (attr === "") fail(`Empty attribute name in the tag "${name}" at byte offset ${byteOffset(begin)}`);
        while (i < src.length && isSpace(at(i))) i++;
        if (at(i) !== "=") {
          // The only valueless attribute Telegram understands.
          if (name === "blockquote" && attr === "expandable") {
            argument = "1";
            continue;
          }
          if (i >= src.length) fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
          fail(`Expected equal sign in declaration of an attribute of the tag "${name}" at byte offset ${byteOffset(begin)}`);
        }
        i++;
        while (i < src.length && isSpace(at(i))) i++;
        if (i >= src.length) fail(`Unclosed start tag "${name}" at byte offset ${byteOffset(begin)}`);

        let value = "";
        const quote = at(i);
        if (quote !== "'" && quote !== '"') {
          // Unquoted "name token": letters, digits, '.', '-'; case-insensitive.
          const tokenBegin = i;
          while (isAlnum(at(i)) || at(i) === "." || at(i) === "-") i++;
          value = src.slice(tokenBegin, i).toLowerCase();
          if (!isSpace(at(i)) && at(i) !== ">") fail(`Unexpected end of name token at byte offset ${byteOffset(tokenBegin)}`);
        } else {
          i++;
          while (i < src.length && at(i) !== quote) {
            const entity = at(i) === "&" ? decodeEntity(src, i) : null;
            if (entity) {
              value += entity.text;
              i = entity.end;
            } else {
              value += src[i];
              i++;
            }
          }
          if (at(i) === quote) i++;
        }
        if (i >= src.length) fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);

        if (name === "a" && attr === "href") argument = value;
        else if (name === "code" && attr === "class" && value.startsWith("language-")) argument = value.slice(9);
        else if (name === "span" && attr === "class" && value.startsWith("tg-")) argument = value.slice(3);
        else if (name === "tg-emoji" && attr === "emoji-id") argument = value;
        // Other attributes are ignored, as Telegram does.
      }
      if (name === "span" && argument !== "spoiler") fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(begin)}`);
      open.push({ name, argument, offset: out.length });
      continue;
    }

    // ---- end tag
    if (open.length === 0) fail(`Unexpected end tag at byte offset ${byteOffset(begin)}`);
    while (!isSpace(at(i)) && at(i) !== ">") i++;
    const endName = src.slice(begin + 2, i).toLowerCase();
    while (i < src.length && isSpace(at(i))) i++;
    if (at(i) !== ">") fail(`Unclosed end tag at byte offset ${byteOffset(begin)}`);
    const tag = open.pop()!;
    // `</>` closes whatever is open.
    if (endName !== "" && endName !== tag.name) {
      fail(`Unmatched end tag at byte offset ${byteOffset(begin)}, expected "</${tag.name}>", found "</${endName}>"`);
    }
    const length = out.length - tag.offset;
    if (length > 0) closeEntity(tag, length, out, entities, fail);
  }

  const unclosed = open.at(-1);
  if (unclosed) fail(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  // `&#xD800;` decodes to half a surrogate pair, which TDLib re-checks for.
  if (hasLoneSurrogate(out) && !hasLoneSurrogate(src)) {
    fail("Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units");
  }

  // Inner tags close first; Telegram reports entities ordered by offset, outer first.
  return { text: out, entities: sortEntities(entities) };
}

function closeEntity(tag: OpenTag, length: number, out: string, entities: MessageEntity[], fail: (detail: string) => never) {
  const { offset } = tag;
  const simple = SIMPLE_TAGS[tag.name];
  const last = entities.at(-1);
  const sameSpan = last !== undefined && last.offset === offset && last.length === length;
  if (simple) {
    entities.push({ type: simple, offset, length });
  } else if (tag.name === "blockquote") {
    entities.push({ type: tag.argument ? "expandable_blockquote" : "blockquote", offset, length });
  } else if (tag.name === "a") {
    // An empty href links to the text itself; an unparseable URL silently drops the link, as in TDLib.
    const url = normalizeUrl(tag.argument || out.slice(offset));
    if (url) entities.push({ type: "text_link", offset, length, url });
  } else if (tag.name === "tg-emoji") {
    if (!/^[1-9][0-9]*$/.test(tag.argument)) fail("Invalid custom emoji identifier specified");
    entities.push({ type: "custom_emoji", offset, length, custom_emoji_id: tag.argument });
  } else if (tag.name === "code") {
    // <pre><code class="language-x">…</code></pre> becomes one pre entity with a language.
    if (sameSpan && last.type === "pre") {
      if (tag.argument) last.language = tag.argument;
    } else {
      const code: MessageEntity = { type: "code", offset, length };
      if (tag.argument) pendingLanguage.set(code, tag.argument);
      entities.push(code);
    }
  } else if (tag.name === "pre") {
    if (sameSpan && last.type === "code") {
      const language = pendingLanguage.get(last);
      last.type = "pre";
      if (language) last.language = language;
    } else {
      entities.push({ type: "pre", offset, length });
    }
  }
}

/** A <code class="language-x"> only keeps its language if a <pre> wraps exactly it; remembered here till then. */
const pendingLanguage = new WeakMap<MessageEntity, string>();

function normalizeUrl(raw: string): string | null {
  const url = raw.trim();
  if (url === "") return null;
  for (const candidate of [url, `http://${url}`]) {
    try {
      const parsed = new URL(candidate);
      if (parsed.protocol === "ftp:") return null;
      if (/^(https?|tg|mailto):$/.test(parsed.protocol) || candidate !== url) return candidate;
    } catch {
      // try the next candidate
    }
  }
  return null;
}
