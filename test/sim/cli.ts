import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArguments, usageError } from "../../src/cli/usage.js";
import { scratchRoot } from "../helpers/scratch.js";

// `npm run sim -- --seeds 2000` (a soak from seed 1, or --from N) and `npm run sim -- --seed 1234` (replay one
// seed, printing its trace hash and stats). Exit 1 when any invariant fails, 2 on arguments it does not know. The
// simulation (and so the whole gateway) loads after the arguments are checked.
const USAGE = `usage: npm run sim [-- --seeds N] [--from N] [--events N]   N scenarios (200) from seed --from (1)
       npm run sim -- --seed N [--events N]                     replay one seed: its trace hash and stats
--events: inbound events per scenario (14)
`;
const { values } = parseArguments(USAGE, { seeds: { type: "string" }, seed: { type: "string" }, from: { type: "string" }, events: { type: "string" } });
if (values.seed !== undefined && (values.seeds !== undefined || values.from !== undefined)) usageError(USAGE, "--seed replays one seed: leave out --seeds and --from");
function arg(name: "seeds" | "seed" | "from" | "events"): number | undefined {
  const text = values[name];
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < (name === "seed" ? 0 : 1))
    usageError(USAGE, `--${name} must be a whole number${name === "seed" ? "" : " from 1"}, got "${text}"`);
  return Number(text);
}

const one = arg("seed");
const from = arg("from") ?? 1;
const count = one !== undefined ? 1 : (arg("seeds") ?? 200);
const events = arg("events") ?? 14;
const [{ runScenario }, { writeSimCatalog }] = await Promise.all([import("./scenario.js"), import("./world.js")]);
// In memory where there is one, as the test keeps them (test/helpers/scratch.ts): the fsyncs of a disk were half the time.
const dir = mkdtempSync(join(scratchRoot(), "switchboard-sim-"));
const catalog = writeSimCatalog(dir);
const started = Date.now();
let failed = 0;
let calls = 0;
let restarts = 0;
let compactions = 0;
for (let seed = one ?? from; seed < (one ?? from) + count; seed++) {
  const result = await runScenario({ seed, dir, catalog, events });
  calls += result.stats.modelCalls;
  restarts += result.stats.restarts;
  compactions += result.stats.compactions;
  if (one !== undefined) process.stdout.write(`seed ${seed}: trace ${result.traceHash}\n${JSON.stringify(result.stats)}\n`);
  for (const v of result.violations) process.stdout.write(`${v}\n`);
  if (result.violations.length) failed++;
}
rmSync(dir, { recursive: true, force: true });
const seconds = ((Date.now() - started) / 1000).toFixed(1);
process.stdout.write(`${count - failed} passed, ${failed} failed\n`);
process.stderr.write(`${count} scenarios, ${calls} model calls, ${restarts} crash-restarts, ${compactions} compactions in ${seconds} s\n`);
process.exit(failed ? 1 : 0);
