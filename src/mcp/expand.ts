// `${VAR}` and `${VAR:-default}` in mcp.json, as Claude Code expands them, so that secrets stay in the environment.

const REFERENCE = /\$\{([^}:]*)(?::-([^}]*))?\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type Expanded = { ok: true; value: string } | { ok: false; error: string };

/** `text` with every `${VAR}` replaced from `env`; a variable that is unset (or empty) without a default is an error. */
export function expand(text: string, env: Readonly<Record<string, string | undefined>>): Expanded {
  const problems: string[] = [];
  const value = text.replace(REFERENCE, (whole, name: string, fallback: string | undefined) => {
    if (!NAME.test(name)) {
      problems.push(`${whole} is not a variable reference (a name is letters, digits and _, not starting with a digit)`);
      return whole;
    }
    const set = env[name];
    if (set !== undefined && set !== "") return set;
    if (fallback !== undefined) return fallback;
    problems.push(`\${${name}} is not set in the environment and has no default (write \${${name}:-default} for one)`);
    return whole;
  });
  return problems.length ? { ok: false, error: problems.join("; ") } : { ok: true, value };
}
