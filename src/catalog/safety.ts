// Skill folders are untrusted text: nothing is executed on load. These checks only warn an admin about
// instructions that would have an agent run something fetched from the network or hidden in an encoding.

const PATTERNS: Array<{ test: RegExp; why: string }> = [
  { test: /\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|k)?sh\b/i, why: "pipes a download into a shell" },
  { test: /\b(curl|wget)\b[^\n|]*\|\s*(python3?|node|perl|ruby)\b/i, why: "pipes a download into an interpreter" },
  { test: /\bbase64\s+(-d|--decode)\b/i, why: "decodes a base64 payload" },
  { test: /\bpowershell(\.exe)?\b[^\n]*\s-e(nc|ncodedcommand)?\s/i, why: "runs an encoded PowerShell command" },
  { test: /\beval\s*\(?\s*["'`]?\$\(/i, why: "evaluates the output of a command" },
  { test: /[A-Za-z0-9+/]{200,}={0,2}/, why: "carries a long encoded blob" },
];

/** One warning per kind of risky instruction found in `text`, with its line (1 is the first line of `text`). */
export function riskyInstructions(text: string): Array<{ line: number; message: string }> {
  const lines = text.split("\n");
  const found: Array<{ line: number; message: string }> = [];
  for (const { test, why } of PATTERNS) {
    const index = lines.findIndex((line) => test.test(line));
    if (index >= 0) found.push({ line: index + 1, message: `this line ${why}; check that this is intended before enabling it` });
  }
  return found;
}

/** Text files only: a NUL byte or invalid UTF-8 means a binary file. */
export function isBinary(bytes: Buffer): boolean {
  if (bytes.includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return false;
  } catch {
    return true;
  }
}
