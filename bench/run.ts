import {
  concurrent,
  cpuPerMessage,
  deepStack,
  handoffRoundtrip,
  handoffRoundtripPostgres,
  idleMemoryScenario,
  limitRatio,
  longHistory,
  recovery,
  singleTurn,
  startup,
  tracingOverhead,
  type Result,
} from "./scenarios.js";
import { parseArguments, unknownName, usageError } from "../src/cli/usage.js";

// `npm run bench [-- scenario …]`: the gateway's own cost (zero-latency in-process model, real SQLite with the
// production settings). One JSON object per scenario on stdout, then a summary table on stderr.
const all = {
  "single-turn": singleTurn,
  "cpu-per-message": cpuPerMessage,
  "limit-ratio": limitRatio,
  "handoff-roundtrip": handoffRoundtrip,
  "handoff-roundtrip-postgres": handoffRoundtripPostgres,
  concurrent,
  "deep-stack": deepStack,
  recovery,
  "idle-memory": idleMemoryScenario,
  "long-history": longHistory,
  startup,
  "tracing-overhead": tracingOverhead,
};
const names = Object.keys(all);
const USAGE = `usage: npm run bench [-- scenario …]   the named scenarios, or all of them (about 3 minutes)
scenarios: ${names.join(", ")}
handoff-roundtrip-postgres starts a local PostgreSQL (or uses BENCH_DATABASE_URL; skipped without either).
`;
const wanted = parseArguments(USAGE, {}, { positionals: true }).positionals;
const unknown = wanted.filter((name) => !Object.hasOwn(all, name));
if (unknown.length > 0) usageError(USAGE, unknown.map((name) => unknownName("scenario", name, names)).join("\n"));
const results: Result[] = [];
for (const [name, run] of Object.entries(all)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const result = await run();
  results.push(result);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
for (const r of results) {
  const { scenario, ...figures } = r;
  process.stderr.write(`${scenario.padEnd(18)} ${Object.entries(figures).map(([k, v]) => `${k}=${v}`).join("  ")}\n`);
}
