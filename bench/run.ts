import type { Result } from "./scenarios.js";
import { parseArguments, unknownName, usageError } from "../src/cli/usage.js";

// `npm run bench [-- scenario …]`: the gateway's own cost (zero-latency in-process model, real SQLite with the
// production settings). One JSON object per scenario on stdout, then a summary table on stderr. The scenarios (and
// so the whole gateway) load after the arguments are checked: a usage error costs no more than starting node.
const names = [
  "single-turn",
  "cpu-per-message",
  "limit-ratio",
  "handoff-roundtrip",
  "handoff-roundtrip-postgres",
  "concurrent",
  "deep-stack",
  "recovery",
  "idle-memory",
  "long-history",
  "startup",
  "tracing-overhead",
  "image-message",
  "workspace-tool",
  "mcp-call",
] as const;
type Name = (typeof names)[number];
const isName = (name: string): name is Name => (names as readonly string[]).includes(name);

async function scenarios(): Promise<Record<Name, () => Promise<Result>>> {
  const [s, f] = await Promise.all([import("./scenarios.js"), import("./features.js")]);
  return {
    "single-turn": s.singleTurn,
    "cpu-per-message": s.cpuPerMessage,
    "limit-ratio": s.limitRatio,
    "handoff-roundtrip": s.handoffRoundtrip,
    "handoff-roundtrip-postgres": s.handoffRoundtripPostgres,
    concurrent: s.concurrent,
    "deep-stack": s.deepStack,
    recovery: s.recovery,
    "idle-memory": s.idleMemoryScenario,
    "long-history": s.longHistory,
    startup: s.startup,
    "tracing-overhead": s.tracingOverhead,
    "image-message": f.imageMessage,
    "workspace-tool": f.workspaceTool,
    "mcp-call": f.mcpCall,
  };
}
const USAGE = `usage: npm run bench [-- scenario …]   the named scenarios, or all of them (about 3 minutes)
       npm run bench -- --compare <git ref> [--runs 3] [--threshold 10] [scenario …]
                                           the same scenarios at <ref> and in the working tree, alternated; exits 1
                                           when a rate, CPU or bytes figure is worse than the threshold (percent)
scenarios: ${names.join(", ")}
handoff-roundtrip-postgres starts a local PostgreSQL (or uses BENCH_DATABASE_URL; skipped without either;
BENCH_POSTGRES_DATA, that server's data directory when it runs here, adds the server's CPU).
`;
const { values, positionals: wanted } = parseArguments(
  USAGE,
  { compare: { type: "string" }, runs: { type: "string" }, threshold: { type: "string" } },
  { positionals: true },
);
const unknown = wanted.filter((name) => !isName(name));
if (unknown.length > 0) usageError(USAGE, unknown.map((name) => unknownName("scenario", name, names)).join("\n"));
if (values.compare === undefined && (values.runs !== undefined || values.threshold !== undefined)) usageError(USAGE, "--runs and --threshold go with --compare");
if (values.compare !== undefined) {
  const runs = wholeNumber(values.runs ?? "3", "--runs", 1, 15);
  const thresholdPercent = wholeNumber(values.threshold ?? "10", "--threshold", 1, 100);
  try {
    const { compare } = await import("./compare-run.js");
    process.exit(await compare({ ref: values.compare, scenarios: wanted, runs, thresholdPercent }, [...names]));
  } catch (error) {
    process.stderr.write(`bench --compare: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
}

function wholeNumber(text: string, option: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) usageError(USAGE, `${option} must be a whole number from ${min} to ${max}, not "${text}"`);
  return value;
}
const results: Result[] = [];
for (const [name, run] of Object.entries(await scenarios())) {
  if (wanted.length && !wanted.includes(name)) continue;
  const result = await run();
  results.push(result);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
for (const r of results) {
  const { scenario, ...figures } = r;
  process.stderr.write(
    `${scenario.padEnd(18)} ${Object.entries(figures)
      .map(([k, v]) => `${k}=${v}`)
      .join("  ")}\n`,
  );
}
