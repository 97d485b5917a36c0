// What must never be kept as a memory: credentials and card numbers, whoever wrote them (the user, the model, an
// extraction that misread a paste), in the ways people write them down: "my email password is …", "door PIN
// 4711", "login admin / …", backup codes, "VPN with password …", in English, German, French and Spanish. A fact
// that merely mentions one ("uses 1Password", "the password is stored in the vault", "zip code 94110") is fine.
// test/memory/secret-phrasings.test.ts holds the phrasings this is measured on.
import { ACCOUNT, CONJUNCTIONS, CREDENTIAL, INTRODUCES, INTRODUCING_SIGN, MAYBE_CREDENTIAL, NOT_A_VALUE, NOT_AN_ACCOUNT, UNITS } from "./secret-words.js";

/** Credential formats that are secrets wherever they appear. */
const FORMATS: RegExp[] = [
  /\bsk-(ant-)?[A-Za-z0-9_-]{16,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/,
  /\bxapp-[A-Za-z0-9-]{10,}/,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/,
  /\b\d{6,12}:[A-Za-z0-9_-]{30,}\b/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  // A URL with a password in it: postgres://app:s3cret@db…
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i,
  // Long random-looking strings (hex or base64 of 32+ characters).
  /\b[A-Fa-f0-9]{32,}\b/,
  /\b(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Z])(?=[A-Za-z0-9+/_-]*[a-z])[A-Za-z0-9+/_-]{32,}={0,2}/,
];

// Word edges for any alphabet (\b knows only ASCII: it finds no edge after the é of "clé").
const START = "(?<![\\p{L}\\p{N}_])";
const END = "(?![\\p{L}\\p{N}_])";
const QUOTE = "[\"'“”«»‘’`]";
/** One word of filler between a name and its value: not a conjunction, not the end of a clause. */
const FILLER = `(?:\\s+(?!${CONJUNCTIONS}${END})[^\\s,;!?:=]*[^\\s,;.!?:=])`;
/** A value: a quoted phrase, or one token up to a space or clause punctuation. */
const VALUE = `(?:(?<quoted>${QUOTE}[^"“”«»\`]{1,80}${QUOTE})|(?<token>[^\\s,;]+))(?<after>\\s+\\S+)?`;

/** "password [for the drive] is|:|= VALUE" — a credential's name, at most five words, what introduces its value, the value. */
const INTRODUCED = (noun: string) => new RegExp(`${START}${noun}${END}${FILLER}{0,5}?(?:\\s+${INTRODUCES}\\s+|\\s*${INTRODUCING_SIGN}\\s*)${VALUE}`, "giu");
/** "door PIN 4711", "password 'tulip'" — the name and at once the value. */
const FOLLOWED = (noun: string) => new RegExp(`${START}${noun}${END}\\s+${VALUE}`, "giu");

const RULES = [
  { pattern: INTRODUCED(CREDENTIAL), strict: false },
  { pattern: FOLLOWED(CREDENTIAL), strict: true },
  { pattern: INTRODUCED(MAYBE_CREDENTIAL), strict: true },
  { pattern: FOLLOWED(MAYBE_CREDENTIAL), strict: true },
];

/** "login admin / Sommer2024", "Zugangsdaten: root / Start123!", "account ana@example.com / movienight88". */
const PAIR = new RegExp(`${START}${ACCOUNT}${END}\\s*:?\\s*(?!${NOT_AN_ACCOUNT}${END})(?<name>[^\\s/,;]+)\\s*/\\s*(?<secret>[^\\s,;]+)`, "giu");

const UNIT = new RegExp(`^${UNITS}${END}`, "iu");

/** A token that could be a password rather than a word: it has a digit or a symbol, or capitals inside it. */
function looksLikeCredential(token: string): boolean {
  const core = token.replace(/[.!?)\]]+$/u, "");
  return /\p{N}/u.test(core) || /[^\p{L}\p{N}'’-]/u.test(core) || /\p{Ll}\p{Lu}/u.test(core);
}

/** Whether a match of a rule gives a credential's value rather than talking about it. */
function givesValue(groups: Record<string, string | undefined>, strict: boolean): boolean {
  if (groups.quoted) return true;
  const token = groups.token;
  if (!token) return false;
  const word = token.replace(/^[("“«‘'`]+|[.!?)"”»’'`]+$/gu, "").toLowerCase();
  if (word === "" || NOT_A_VALUE.has(word)) return false;
  // "is 12 characters long", "rotates every 90 days": a number with a unit describes the credential.
  if (/^\p{N}+$/u.test(word) && groups.after && UNIT.test(groups.after.trim())) return false;
  return strict ? looksLikeCredential(token) : true;
}

function disclosesCredential(text: string): boolean {
  for (const { pattern, strict } of RULES) {
    for (const m of text.matchAll(pattern)) if (givesValue(m.groups ?? {}, strict)) return true;
  }
  for (const m of text.matchAll(PAIR)) {
    const { name = "", secret = "" } = m.groups ?? {};
    if (looksLikeCredential(secret) || name.includes("@")) return true;
  }
  return false;
}

/** A payment card number: 13-19 digits (spaces or dashes allowed) that pass the Luhn check. */
function hasCardNumber(text: string): boolean {
  for (const m of text.matchAll(/\b\d(?:[ -]?\d){12,18}\b/g)) {
    const digits = m[0].replace(/\D/g, "");
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
    if (sum % 10 === 0) return true;
  }
  return false;
}

/** Whether `text` holds a secret (a password, a PIN, a code, a token, a key, a card number) that must not be remembered. */
export function holdsSecret(text: string): boolean {
  const flat = text.normalize("NFC").replace(/\s+/gu, " ");
  return FORMATS.some((p) => p.test(flat)) || hasCardNumber(flat) || disclosesCredential(flat);
}
