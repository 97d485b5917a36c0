// Secrets removed by value. Redaction by key misses a token inside a string (grammY puts the request URL,
// token included, into its errors' messages and stacks), so every configured secret is also searched for
// wherever it appears, in the forms it takes in URLs and JSON.

export const REDACTED = "[redacted]";

/** Shorter "secrets" would turn ordinary words of a log line into "[redacted]". */
const MIN_SECRET_LENGTH = 4;

const NAMED_SECRETS = [
  "ANTHROPIC_API_KEY",
  "TELEGRAM_BOT_TOKEN",
  "TELEGRAM_WEBHOOK_SECRET",
  "SLACK_BOT_TOKEN",
  "SLACK_APP_TOKEN",
  "SLACK_SIGNING_SECRET",
];
const SECRET_NAME = /_(?:TOKEN|SECRET|KEY|PASSWORD)$/;

/**
 * A Telegram bot token (`<bot id>:<35 characters>` today; a little slack either way), also with its colon
 * URL-encoded, found even when it was not configured (a second bot, a token pasted into a message).
 * "bot123:…" in an API URL counts.
 */
const TELEGRAM_TOKEN = /(?:(?<=bot)|(?<![A-Za-z0-9_]))\d{3,}(?::|%3[Aa])[A-Za-z0-9_-]{30,64}(?![A-Za-z0-9_-])/g;

/** The API tokens of HTTP_API_TOKENS, whether it is a token → user record, a Map or a list. */
function tokensOf(value: unknown): string[] {
  if (value instanceof Map) return [...value.keys()].filter((k): k is string => typeof k === "string");
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  if (typeof value === "object" && value !== null) return Object.keys(value);
  return typeof value === "string" ? [value] : [];
}

/** The password of a URL with credentials (`postgres://user:pass@host`), else nothing. */
function urlPassword(value: string): string[] {
  if (!value.includes("@")) return [];
  try {
    const { password } = new URL(value);
    if (!password) return [];
    const decoded = decodeURIComponent(password);
    return decoded === password ? [password] : [password, decoded];
  } catch {
    return [];
  }
}

/**
 * Every secret a configuration holds: the credentials the product knows by name, each token of HTTP_API_TOKENS,
 * any other variable named *_TOKEN, *_SECRET, *_KEY or *_PASSWORD, and passwords inside *_URL values.
 */
export function secretsOf(config: object): string[] {
  const found = new Set<string>();
  for (const [name, value] of Object.entries(config)) {
    if (name === "HTTP_API_TOKENS") tokensOf(value).forEach((t) => found.add(t));
    else if (typeof value !== "string") continue;
    else if (NAMED_SECRETS.includes(name) || SECRET_NAME.test(name)) found.add(value);
    else if (name.endsWith("_URL")) urlPassword(value).forEach((p) => found.add(p));
  }
  return [...found].filter((s) => s.trim().length >= MIN_SECRET_LENGTH);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** A literal as a pattern; percent-escapes match in either case (%3a as well as %3A). */
function literal(form: string): string {
  return form
    .split(/(%[0-9A-F]{2})/)
    .map((part) => (/^%[0-9A-F]{2}$/.test(part) ? `%[${part[1]}${part[1]!.toLowerCase()}][${part[2]}${part[2]!.toLowerCase()}]` : escapeRegExp(part)))
    .join("");
}

/** How a secret may appear in text: as is, URL-encoded (encodeURIComponent, form encoding). */
function encodings(secret: string): string[] {
  const form = new URLSearchParams({ s: secret }).toString().slice(2);
  return [secret, encodeURIComponent(secret), form];
}

/** A function that replaces each secret (in every encoding) and every Telegram bot token in a text. */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const pattern = secretPattern(secrets);
  return (text) => {
    const scrubbed = pattern ? text.replace(pattern, REDACTED) : text;
    return scrubbed.replace(TELEGRAM_TOKEN, REDACTED);
  };
}

/**
 * Whether a text may hold a secret: `text` is searched for each secret after `escape` (JSON-escaping for a
 * serialized line). Cheap enough to run on every log line; the exact work happens only on a hit.
 */
export function secretDetector(secrets: readonly string[], escape: (form: string) => string = (s) => s): (text: string) => boolean {
  const pattern = secretPattern(secrets, escape);
  const token = new RegExp(TELEGRAM_TOKEN.source);
  return (text) => (pattern !== null && text.search(pattern) >= 0) || token.test(text);
}

function secretPattern(secrets: readonly string[], escape: (form: string) => string = (s) => s): RegExp | null {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    for (const form of encodings(secret)) forms.add(escape(form));
  }
  if (forms.size === 0) return null;
  // Longest first: of two overlapping secrets the longer one must win, or a remnant of it stays visible.
  return new RegExp([...forms].sort((a, b) => b.length - a.length).map(literal).join("|"), "g");
}

/** `text` without any of `secrets` (nor Telegram bot tokens), for one text; a logger keeps a `secretScrubber`. */
export function scrub(text: string, secrets: readonly string[]): string {
  return secretScrubber(secrets)(text);
}
