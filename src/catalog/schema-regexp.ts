import { RE2JS } from "re2js";

// `pattern` and `patternProperties` in JSON Schemas from models and skill files run on RE2 (re2js, a pure-JS port):
// it never backtracks, so a match costs at most the pattern's program size times the text's length; `^(a+)+$`
// against "aaaa…!" is as cheap as `^a+$`. What RE2 cannot run in linear time (lookarounds, backreferences) is
// refused when the schema is compiled, with the place named.

/** RE2 instructions in one compiled pattern: `.{1000}` is about 1000, a typical pattern well under 100. */
export const MAX_PATTERN_PROGRAM = 2000;

/** Why a pattern cannot be used, as a sentence. */
export class PatternError extends Error {
  override name = "PatternError";
}

/**
 * Ajv's `code.regExp` engine. The pattern must be valid ECMAScript (JSON Schema's dialect), and within what RE2 runs.
 * Throws PatternError otherwise; Ajv then fails the compile and the caller reports the message.
 */
export function re2RegExp(pattern: string): { test(text: string): boolean; toString(): string } {
  try {
    new RegExp(pattern, "u");
  } catch (error) {
    throw new PatternError(
      `pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message.replace(/^Invalid regular expression: \/.*\/u: /s, "")}`,
    );
  }
  const backreference = findBackreference(pattern);
  if (backreference) throw new PatternError(`pattern ${JSON.stringify(pattern)} uses the backreference ${backreference}, which ${UNSUPPORTED}`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    const why = (error as Error).message.replace(/^error parsing regexp: /, "");
    const hint = /\(\?[=!<]/.test(pattern) ? `it uses a lookaround, which ${UNSUPPORTED}` : `${why}; ${UNSUPPORTED_RE2}`;
    throw new PatternError(`pattern ${JSON.stringify(pattern)} cannot be used: ${hint}`);
  }
  const size = re.programSize();
  if (size > MAX_PATTERN_PROGRAM) {
    throw new PatternError(
      `pattern ${JSON.stringify(pattern)} is too large once compiled (${size} RE2 instructions, the limit is ${MAX_PATTERN_PROGRAM}); use smaller repeat counts such as {1,100}`,
    );
  }
  // Ajv shares compiled patterns by toString(): it must name the pattern, or every pattern would be the first one.
  return { test: (text: string) => re.test(text), toString: () => `re2:${pattern}` };
}
re2RegExp.code = "re2RegExp";

const UNSUPPORTED = "patterns here cannot use: they run on RE2, which guarantees linear time (no lookarounds, no backreferences)";
const UNSUPPORTED_RE2 = "patterns here run on RE2, which guarantees linear time (no lookarounds, no backreferences)";

/** `\1`…`\9` or `\k<name>` outside a character class, or null. */
function findBackreference(pattern: string): string | null {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (!inClass && (/[1-9]/.test(next) || next === "k")) return `\\${next === "k" ? (pattern.slice(i + 1).match(/^k<[^>]*>/)?.[0] ?? "k") : next}`;
      i++;
    } else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
  }
  return null;
}
