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
const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
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
