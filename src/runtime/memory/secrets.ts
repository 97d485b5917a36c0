// What must never be kept as a memory: credentials and card numbers, whoever wrote them (the user, the model, an
// extraction that misread a paste). A fact that merely mentions one ("uses 1Password") is fine.

const PATTERNS: RegExp[] = [
  // "my password is hunter2", "PIN: 1234", "api key = abc…"
  /\b(pass(word|phrase|code)?|pwd|pin|passcode|api[ _-]?key|secret|token|otp|2fa code|security code|cvv|cvc)\b[^.\n]{0,40}?(\bis\b|\bwas\b|:|=)\s*\S+/i,
  // Known credential formats.
  /\bsk-(ant-)?[A-Za-z0-9_-]{16,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/,
  /\bxapp-[A-Za-z0-9-]{10,}/,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/,
  /\b\d{6,12}:[A-Za-z0-9_-]{30,}\b/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  // Long random-looking strings (hex or base64 of 32+ characters).
  /\b[A-Fa-f0-9]{32,}\b/,
  /\b(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Z])(?=[A-Za-z0-9+/_-]*[a-z])[A-Za-z0-9+/_-]{32,}={0,2}/,
];

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

/** Whether `text` holds a secret (a password, a token, a key, a card number) that must not be remembered. */
export function holdsSecret(text: string): boolean {
  return PATTERNS.some((p) => p.test(text)) || hasCardNumber(text);
}
