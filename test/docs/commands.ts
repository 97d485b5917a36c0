// What the code offers to type: the npm scripts, each command-line tool's subcommands and options (read from its
// source: the usage text it prints, the options it parses), the benchmark's scenarios and the environment variables
// the code reads. Read statically: running every tool for its --help costs a process start each.

export interface Tool {
  /** The npm script (`admin` for `npm run admin`). */
  script: string;
  /** How a person types it: `npm start`, `npm test`, `npm run admin`. */
  typed: string;
  /** The source file it runs, when it runs one. */
  entry: string | null;
  subcommands: string[];
  options: string[];
}

/** How a script is typed: `npm start` and `npm test` have their own npm commands. */
export function typed(script: string): string {
  return script === "start" || script === "test" ? `npm ${script}` : `npm run ${script}`;
}

/** The usage text a tool prints (`const USAGE = …`), or null when it has none. */
export function usageOf(source: string): string | null {
  const m = /const USAGE\s*=\s*(`[^`]*`|"(?:[^"\\]|\\.)*")/.exec(source);
  return m ? m[1]!.slice(1, -1).replace(/\\n/g, "\n") : null;
}

/** The tools behind the scripts of package.json, with what each accepts. */
export function toolsOf(scripts: Record<string, string>, source: (path: string) => string): Tool[] {
  return Object.entries(scripts).map(([script, command]) => {
    // A command-line tool's entry point (a script that runs test files, like `soak`, has no usage of its own).
    const entry = command.split(/\s+/).find((word) => /\.(ts|js|mjs)$/.test(word) && !/\.test\.(ts|js|mjs)$/.test(word)) ?? null;
    if (!entry) return { script, typed: typed(script), entry, subcommands: [], options: [] };
    const text = source(entry);
    const usage = usageOf(text) ?? "";
    const subcommands = [...usage.matchAll(/npm run ([\w-]+) -- ([a-z][\w-]*)/g)].map((m) => {
      if (m[1] !== script) throw new Error(`${entry}: its usage says "npm run ${m[1]}", but it is the script "${script}"`);
      return m[2]!;
    });
    const options = new Set<string>([
      ...[...usage.matchAll(/(?<![\w-])--([a-z][\w-]*)/g)].map((m) => m[1]!),
      ...[...text.matchAll(/["']--([a-z][\w-]*)["']/g)].map((m) => m[1]!),
      ...[...text.matchAll(/\b([a-z][\w]*): \{ type: "(?:string|boolean)"/g)].map((m) => m[1]!),
    ]);
    options.delete("help");
    return { script, typed: typed(script), entry, subcommands: [...new Set(subcommands)], options: [...options].sort() };
  });
}

/** The benchmark's scenario names: the list `const names = [ … ]` in bench/run.ts. */
export function scenariosOf(source: string): string[] {
  const block = /const names = \[([^\]]*)\]/.exec(source)?.[1] ?? "";
  return [...block.matchAll(/^\s*"([\w-]+)",?$/gm)].map((m) => m[1]!);
}

/** The environment variables a source file reads (`process.env.NAME`, `process.env["NAME"]`). */
export function envReadsOf(source: string): string[] {
  return [...source.matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\])/g)].map((m) => m[1] ?? m[2]!);
}

/** What of the tools is not in the docs: a script, a subcommand (`npm run admin -- stuck`) or an option (`--json` on a line naming its tool). */
export function undocumentedCommands(docs: string, tools: readonly Tool[]): string[] {
  const text = docs.replace(/npm run -s /g, "npm run ");
  const lines = text.split("\n");
  const word = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const missing: string[] = [];
  for (const tool of tools) {
    const named = new RegExp(`${word(tool.typed)}(?![\\w-])`);
    if (!named.test(text)) {
      missing.push(`${tool.typed} (package.json) is not in the docs`);
      continue;
    }
    for (const sub of tool.subcommands) {
      if (!new RegExp(`${word(tool.typed)} -- ${word(sub)}(?![\\w-])`).test(text)) missing.push(`${tool.typed} -- ${sub} (${tool.entry}) is not in the docs`);
    }
    for (const option of tool.options) {
      const flag = new RegExp(`(?<![\\w-])--${word(option)}(?![\\w-])`);
      if (!lines.some((line) => named.test(line) && flag.test(line)))
        missing.push(`--${option} of ${tool.typed} (${tool.entry}) is on no docs line that names ${tool.typed}`);
    }
  }
  return missing;
}
