// The simulation suite: seeded scenarios against the real engine, every invariant checked after every
// step — and, for each checker, a planted bug that shows it fires (with the seed and the replay command).
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Catalog } from "../../src/catalog/definition.js";
import { scratchRoot } from "../helpers/scratch.js";
import { runScenario, type ScenarioOptions } from "./scenario.js";
import { writeSimCatalog } from "./world.js";

const SEEDS = Number(process.env.SIM_SEEDS ?? 400);
const CROWD_SEEDS = Math.max(20, Math.round(SEEDS / 8));
/**
 * The 400 seeds of `npm test` take some 25 s of CPU, and a busy machine running two test files at a time stretched
 * that past two minutes: five minutes for them, more for the soak's (`npm run soak`). A hang still fails.
 */
const TIMEOUT = 300_000 * Math.max(1, SEEDS / 400);
let dir: string;
let catalog: Catalog;
beforeAll(() => {
  dir = mkdtempSync(join(scratchRoot(), "switchboard-sim-test-"));
  catalog = writeSimCatalog(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs seeds from 1 until one reports a violation matching `pattern`; returns it. */
async function firstViolation(pattern: RegExp, options: Omit<ScenarioOptions, "seed" | "dir" | "catalog">, seeds = 40): Promise<string | null> {
  for (let seed = 1; seed <= seeds; seed++) {
    const result = await runScenario({ seed, dir, catalog, ...options });
    const found = result.violations.find((v) => pattern.test(v));
    if (found) return found;
  }
  return null;
}

describe("simulation", () => {
  it(
    `holds every invariant over ${SEEDS} seeded scenarios with faults and crash-restarts`,
    async () => {
      const failures: string[] = [];
      let restarts = 0;
      let calls = 0;
      let groupCrashes = 0;
      let unavailable = 0;
      const scheduled = { runs: 0, folded: 0, late: 0, downs: 0 };
      for (let seed = 1; seed <= SEEDS; seed++) {
        const result = await runScenario({ seed, dir, catalog });
        failures.push(...result.violations);
        restarts += result.stats.restarts;
        calls += result.stats.modelCalls;
        groupCrashes += result.stats.groupCrashes;
        unavailable += result.stats.unavailable;
        for (const key of Object.keys(scheduled) as Array<keyof typeof scheduled>) scheduled[key] += result.stats.scheduled[key];
      }
      expect(failures, failures.slice(0, 5).join("\n")).toEqual([]);
      // The workload really exercised crashes and the model. About a quarter of the scenarios restart, but the figure
      // moves by ±10% with any change to the timing of a turn (which crash points a scenario reaches): the bound sits
      // below that noise, and still fails for a workload that no longer crashes.
      expect(restarts).toBeGreaterThan(SEEDS / 5);
      expect(calls).toBeGreaterThan(SEEDS * 10);
      // Some crashes struck a group commit of several writes after it committed and before anyone was told: about 20
      // seeds of 400 since messages of several chats also arrive together (a batch of updates); without those batches
      // it took a lucky interleaving (6 of 400, then 1 after the door's reads became synchronous). The bound sits well
      // below that; test/crash/group-commit-sigkill.test.ts kills a real process there deterministically.
      expect(groupCrashes).toBeGreaterThanOrEqual(SEEDS / 80);
      // Calls to an agent that exists but is unavailable were made, and answered with the reason.
      expect(unavailable).toBeGreaterThan(SEEDS / 100);
      // Scheduled jobs ran, some after outages standing for the due times missed (folded), and some outages were long
      // enough that due times were skipped and their owners told. 60 seeds show about 85 runs, 15 folds, 15 outages.
      expect(scheduled.runs).toBeGreaterThan(SEEDS / 2);
      expect(scheduled.folded).toBeGreaterThan(SEEDS / 20);
      expect(scheduled.downs).toBeGreaterThan(SEEDS / 10);
      expect(scheduled.late).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it(
    `holds them over ${CROWD_SEEDS} crowded seeds with one call per target and no queue, which see "target busy"`,
    async () => {
      const failures: string[] = [];
      let busy = 0;
      for (let seed = 1; seed <= CROWD_SEEDS; seed++) {
        const result = await runScenario({ seed, dir, catalog, callLimit: { max: 1, queue: 0 }, behaviour: { crowd: true } });
        failures.push(...result.violations.map((v) => `${v} (callLimit 1/0, crowd)`));
        busy += result.stats.busy;
      }
      expect(failures, failures.slice(0, 5).join("\n")).toEqual([]);
      // Whether a second call meets the first still running depends on timing across a crowd's calls: every run
      // shows some (at least 5 over 50 seeds); a limiter that never refuses shows none.
      expect(busy).toBeGreaterThanOrEqual(CROWD_SEEDS / 10);
    },
    TIMEOUT,
  );

  it("replays the seeds that found bugs, clean", async () => {
    // 1440: a call_agent callee whose caller had timed out flushed its caller's journal mid-step (tool mark, durability).
    for (const seed of [1440]) {
      const result = await runScenario({ seed, dir, catalog });
      expect(result.violations, result.violations.join("\n")).toEqual([]);
    }
  });

  it("is deterministic: the same seed gives the same trace", async () => {
    for (const seed of [3, 17, 42, 99]) {
      const a = await runScenario({ seed, dir, catalog });
      const b = await runScenario({ seed, dir, catalog });
      expect(b.traceHash, `seed ${seed}`).toBe(a.traceHash);
      expect(a.traceHash).toMatch(/^[0-9a-f]{64}$/);
    }
    const other = await runScenario({ seed: 4, dir, catalog });
    expect(other.traceHash).not.toBe((await runScenario({ seed: 3, dir, catalog })).traceHash);
  });
});

describe("every checker fires on its planted bug", () => {
  it("model requests: a model stub that is sent a broken history is caught by the API rules", async () => {
    const found = await firstViolation(/model request rejected by the Messages API rules/, { behaviour: { corruptRequests: true }, crashes: false });
    expect(found).toMatch(/^seed \d+: model request rejected[\s\S]*replay: npm run sim -- --seed \d+$/);
  });

  it("depth and chains: a hand-over without the rules is caught", async () => {
    const found = await firstViolation(/stack depth|no agent twice in a chain/, { plants: { ruleFreeSpawn: true }, behaviour: { deep: true }, crashes: false });
    expect(found).toMatch(/^seed \d+: (stack depth|no agent twice in a chain)/);
  });

  it("tool pairing: a store that loses tool_result rows is caught", async () => {
    const found = await firstViolation(/tool pairing/, { plants: { dropToolResults: true }, crashes: false });
    expect(found).toMatch(/^seed \d+: tool pairing: toolu_sim_\d+ in sim:s\d never got a tool_result/);
  });

  it("tool marks: a step torn in two (its tool results committed one step late) is caught where the mark is cleared", async () => {
    const found = await firstViolation(/tool mark/, { plants: { lateToolResults: true }, crashes: false });
    expect(found).toMatch(/^seed \d+: tool mark: the running mark of toolu_sim_\d+ \([^)]+ in sim:s\d\) was cleared on disk before its result was written/);
  });

  it("durability and restart: a store that drops frame updates is caught when a stack is rebuilt", async () => {
    const found = await firstViolation(/restart: the rebuilt stack|durability:/, { plants: { dropFrameUpdates: true }, crashes: true });
    expect(found).toMatch(/^seed \d+: (restart: the rebuilt stack of sim:s\d differs|durability: the stack in memory)/);
  });

  it("exactly once: a store that forgets which message ids it has seen is caught", async () => {
    const found = await firstViolation(/exactly once/, { plants: { forgetDuplicates: true }, crashes: false });
    expect(found).toMatch(/^seed \d+: exactly once: the message "message [\d.]+: [^"]+" became 2 requests/);
  });

  it("no hang: a model that loops with no iteration limit is caught and stopped", async () => {
    const found = await firstViolation(
      /no hang/,
      { plants: { maxIterations: 1_000_000 }, behaviour: { loop: true, faults: false, maxCallsPerRequest: 50 }, crashes: false },
      3,
    );
    expect(found).toMatch(/^seed 1: no hang: request req_\d+ made more than 50 model calls/);
  });

  it("exactly once: a steer (MID_TURN=steer) that offers messages already read is caught", async () => {
    const found = await firstViolation(/exactly once/, { plants: { steerTwice: true }, midTurn: "steer", crashes: false });
    expect(found).toMatch(/^seed \d+: exactly once: the message "[^"]+" reached an agent \d+ times/);
  });

  it("no reply twice: a store that forgets deliveries is caught after a restart", async () => {
    const found = await firstViolation(/no reply twice/, { plants: { forgetDeliveries: true }, forceCrashAfter: 12 });
    expect(found).toMatch(/^seed \d+: no reply twice: out_\d+ \("[^"]*"\) was delivered more than once/);
  });

  it("side effects: a store that loses the running-tool mark lets a tool run twice after a crash, and it is caught", async () => {
    const found = await firstViolation(/side effects: the tool call/, { plants: { dropFrameUpdates: true }, forceCrashAfterRunningTool: true });
    expect(found).toMatch(/^seed \d+: side effects: the tool call toolu_sim_\d+ ran 2 times/);
  });

  it("group commit: a store that acknowledges a message before its group committed loses it in a crash, and it is caught", async () => {
    let found: string | null = null;
    for (let n = 1; n <= 4 && !found; n++) found = await firstViolation(/exactly once/, { plants: { ackBeforeCommit: true }, forceGroupCrashBefore: n });
    expect(found).toMatch(/^seed \d+: exactly once: the message "message \d+: [^"]+" became 0 requests/);
  });

  it("scheduled runs: a store that moves a late job on without telling its owner is caught (once unless skipped)", async () => {
    const found = await firstViolation(/once unless skipped/, { plants: { silentSkips: true }, crashes: false });
    expect(found).toMatch(/^seed \d+: once unless skipped: job sch_sim\d's run due \S+ neither ran nor was skipped\n  replay: npm run sim -- --seed \d+$/);
  });

  it("determinism: ids that do not come from the seed change the trace", async () => {
    const a = await runScenario({ seed: 5, dir, catalog, plants: { randomIds: true } });
    const b = await runScenario({ seed: 5, dir, catalog, plants: { randomIds: true } });
    expect(a.traceHash).not.toBe(b.traceHash);
  });
});
