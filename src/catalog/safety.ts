// Skill folders are untrusted text: nothing is executed on load. These checks only warn an admin about
// instructions that would have an agent run something fetched from the network or hidden in an encoding.
// The body is up to 256 KB of someone else's text, read on the event loop at start and on every reload, so each
// check is linear in the line: no pattern here lets the engine retry a long stretch from many starting points
// (`\bcurl\b[^|]*\|` did, from every "curl" on a line: 78 s for one 200 KB line).

const PATTERNS: Array<{ test: (line: string) => boolean; why: string }> = [
  { test: (line) => pipedInto(line, /^\s*(sudo\s+)?(ba|z|k)?sh\b/i), why: "pipes a download into a shell" },
  { test: (line) => pipedInto(line, /^\s*(python3?|node|perl|ruby)\b/i), why: "pipes a download into an interpreter" },
  { test: (line) => /\bbase64\s+(-d|--decode)\b/i.test(line), why: "decodes a base64 payload" },
  { test: encodedPowerShell, why: "runs an encoded PowerShell command" },
  { test: (line) => /\beval\s*(?:\(\s*)?["'`]?\$\(/i.test(line), why: "evaluates the output of a command" },
  { test: (line) => longestRun(line, /[A-Za-z0-9+/]+/g) >= 200, why: "carries a long encoded blob" },
];

/** `curl … | <command>`: a download with no other pipe before the one into `command`. */
function pipedInto(line: string, command: RegExp): boolean {
  const segments = line.split("|");
  for (let i = 0; i + 1 < segments.length; i++) {
    if (/\b(curl|wget)\b/i.test(segments[i]!) && command.test(segments[i + 1]!)) return true;
  }
  return false;
}

/** `powershell[.exe] … -e|-enc|-encodedcommand …`: the option anywhere after the first "powershell". */
function encodedPowerShell(line: string): boolean {
  const start = /\bpowershell(\.exe)?\b/i.exec(line);
  return start !== null && /\s-e(nc|ncodedcommand)?\s/i.test(line.slice(start.index + start[0].length));
}

/** The longest match of a global `run` pattern (each character is looked at once). */
function longestRun(line: string, run: RegExp): number {
  let longest = 0;
  for (const match of line.matchAll(run)) longest = Math.max(longest, match[0].length);
  return longest;
}

/** One warning per kind of risky instruction found in `text`, with its line (1 is the first line of `text`). */
export function riskyInstructions(text: string): Array<{ line: number; message: string }> {
  const lines = text.split("\n");
  const found: Array<{ line: number; message: string }> = [];
  for (const { test, why } of PATTERNS) {
    const index = lines.findIndex((line) => test(line));
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
