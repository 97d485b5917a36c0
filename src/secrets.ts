// Secrets removed by value. Redaction by key misses a token inside a string (grammY puts the request URL,
// token included, into its errors' messages and stacks), so every configured secret is also searched for
// wherever it appears, in the forms it takes in URLs and JSON.

import { CREDENTIALS, SETTINGS, type CredentialKind } from "./config.js";

export const REDACTED = "[redacted]";

/** Shorter "secrets" would turn ordinary words of a log line into "[redacted]". */
const MIN_SECRET_LENGTH = 4;

/** A variable the schema does not know (a skill's `env:`, a proxy) counts as a credential by its name. */
const SECRET_NAME = /_(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|PASS|CREDENTIALS|APIKEY)$/;
/** Values of such variables that are settings, not secrets ("FEATURE_KEY=true" must not redact every "true"). */
const NOT_A_SECRET = /^(?:true|false|yes|no|on|off|none|null|undefined)$/i;

/**
 * A Telegram bot token (`<bot id>:<35 characters>` today; a little slack either way), also with its colon
 * URL-encoded, found even when it was not configured (a second bot, a token pasted into a message).
 * "bot123:…" in an API URL counts.
 */
const TELEGRAM_TOKEN = /(?:(?<=bot)|(?<![A-Za-z0-9_]))\d{3,}(?::|%3[Aa])[A-Za-z0-9_-]{30,64}(?![A-Za-z0-9_-])/g;

/** The tokens of a token list (HTTP_API_TOKENS, ADMIN_TOKENS), whether a Map, a token → user record or a list. */
function tokensOf(value: unknown): string[] {
  if (value instanceof Map) return [...value.keys()].filter((k): k is string => typeof k === "string");
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  if (typeof value === "object" && value !== null) return Object.keys(value);
  return typeof value === "string" ? [value] : [];
}

/** The values of a header list, and the credentials after an auth scheme ("Bearer abc" → also "abc"). */
function headerValues(value: unknown): string[] {
  const values = value instanceof Map ? [...value.values()] : typeof value === "object" && value !== null ? Object.values(value) : [];
  return values
    .filter((v): v is string => typeof v === "string")
    .flatMap((v) => {
      const scheme = /^[A-Za-z][A-Za-z0-9_-]*\s+(\S.*)$/.exec(v);
      return scheme ? [v, scheme[1]!] : [v];
    });
}

/**
 * The credentials inside a URL (`postgres://user:pass@host`, `https://<token>@host`): the password, or a user
 * name that stands alone and looks like a token, raw and decoded. Nothing for anything else.
 */
export function urlCredentials(value: string): string[] {
  if (!value.includes("@") || !value.includes("://")) return [];
  try {
    const { username, password } = new URL(value);
    // A user name alone is a credential only when it looks like a token, not like a role ("postgres://app@db").
    const secret = password || (username.length >= 16 && /\d/.test(username) && /[A-Za-z]/.test(username) ? username : "");
    if (!secret) return [];
    const decoded = decodeURIComponent(secret);
    return decoded === secret ? [secret] : [secret, decoded];
  } catch {
    return [];
  }
}

/** `url` with its user name and password replaced, for a log line: https://[redacted]@collector.example/v1/traces. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, `$1${REDACTED}@`);
  } catch {
    return url;
  }
}

/** Every string a setting's value holds (lists and maps included), for the URL search. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value instanceof Map) return [...value.entries()].flat().flatMap(stringsIn);
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === "object" && value !== null) return Object.entries(value).flat().flatMap(stringsIn);
  return [];
}

function credentialsOf(kind: CredentialKind, value: unknown): string[] {
  switch (kind) {
    case "value":
      return typeof value === "string" ? [value] : [];
    case "token list":
      return tokensOf(value);
    case "header list":
      return headerValues(value);
    default: {
      const unknown: never = kind;
      throw new Error(`unknown credential kind ${String(unknown)}`);
    }
  }
}

/**
 * Every secret a configuration holds: the settings marked in CREDENTIALS (src/config.ts), the credentials inside
 * any URL in any setting, and, for variables the schema does not know (in `config` or in the raw `env`, e.g. a
 * skill's `env:` token), any one named *_TOKEN, *_SECRET, *_KEY, *_PASSWORD and the like.
 */
export function secretsOf(config: object, env: Record<string, string | undefined> = {}): string[] {
  const found = new Set<string>();
  const known = CREDENTIALS as Record<string, CredentialKind | undefined>;
  for (const [name, value] of Object.entries(config)) {
    const kind = known[name];
    if (kind) credentialsOf(kind, value).forEach((s) => found.add(s));
    else if (typeof value === "string" && SECRET_NAME.test(name) && !NOT_A_SECRET.test(value.trim())) found.add(value);
    stringsIn(value)
      .flatMap(urlCredentials)
      .forEach((s) => found.add(s));
  }
  const settings = new Set<string>(SETTINGS);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || settings.has(name) || name in config) continue;
    if (SECRET_NAME.test(name) && !NOT_A_SECRET.test(value.trim())) found.add(value);
    urlCredentials(value).forEach((s) => found.add(s));
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
  return new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map(literal)
      .join("|"),
    "g",
  );
}

/** `text` without any of `secrets` (nor Telegram bot tokens), for one text; a logger keeps a `secretScrubber`. */
export function scrub(text: string, secrets: readonly string[]): string {
  return secretScrubber(secrets)(text);
}
