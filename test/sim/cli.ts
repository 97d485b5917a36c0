import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runScenario } from "./scenario.js";
import { writeSimCatalog } from "./world.js";

// `npm run sim -- --seeds 2000` (a soak from seed 1, or --from N) and `npm run sim -- --seed 1234` (replay one
// seed, printing its trace hash and stats). Exit 1 when any invariant fails.
function arg(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

const dir = mkdtempSync(join(tmpdir(), "switchboard-sim-"));
const catalog = writeSimCatalog(dir);
const one = arg("--seed");
const from = arg("--from") ?? 1;
const count = one !== undefined ? 1 : (arg("--seeds") ?? 200);
const started = Date.now();
let failed = 0;
let calls = 0;
let restarts = 0;
let compactions = 0;
for (let seed = one ?? from; seed < (one ?? from) + count; seed++) {
  const result = await runScenario({ seed, dir, catalog, events: arg("--events") ?? 14 });
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
