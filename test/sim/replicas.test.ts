// The lease protocol under simulation: replicas A and B (real Gateway, runtime and Leases each) on one SQLite
// file, one virtual clock, a scripted model and a booking service counted outside the processes. Seeded
// scenarios pause a replica mid-step until the other takes its session over, crash one, stop one; every commit
// attempt is checked the moment it runs, the end state once all is quiet. Each checker has a planted bug that
// shows it fires. SIM_SEED=<n> replays one seed (SIM_DEBUG=1 prints its trace); SIM_SEEDS=<n> runs more.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Catalog } from "../../src/catalog/definition.js";
import type { SubmitResult } from "../../src/gateway/types.js";
import { FencedError } from "../../src/store/store.js";
import type { PausePoint } from "./replicas/pause-gate.js";
import { runReplicaScenario, type ReplicaScenarioOptions, type ReplicaScenarioResult } from "./replicas/scenario.js";
import { ReplicaWorld, writeReplicaCatalog } from "./replicas/world.js";

const ONE = process.env.SIM_SEED ? Number(process.env.SIM_SEED) : null;
const SEEDS = Number(process.env.SIM_SEEDS ?? 100);
const PAUSE_SEEDS = Math.max(1, Math.round(SEEDS * 0.4));
/** The seeded runs compute for a while (seconds on a quiet machine, minutes on a busy one): five minutes for 100 seeds. */
const TIMEOUT = 300_000 * Math.max(1, SEEDS / 100);

/**
 * Protocol bugs a run may count instead of failing (none now). The two this simulation found (a cached main
 * history surviving another replica's turns; whenDone resolving on the replica whose turn was fenced) are fixed,
 * and the regression tests at the bottom replay them.
 */
const KNOWN_BUGS: Array<{ name: string; pattern: RegExp }> = [];

let dir: string;
let catalog: Catalog;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "switchboard-replicas-"));
  catalog = writeReplicaCatalog(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(seed: number, options: Partial<ReplicaScenarioOptions> = {}): Promise<ReplicaScenarioResult> {
  return runReplicaScenario({ seed, dir, catalog, ...options });
}

/** Runs the seeds; returns the violations no known bug explains, and how often each known bug showed. */
async function runSeeds(seeds: number[], options: Partial<ReplicaScenarioOptions> = {}) {
  const unexplained: string[] = [];
  const known = new Map<string, number>();
  const totals = { refused: 0, takeovers: 0, pauses: 0, crashes: 0, stops: 0, midCall: 0, seedsWithRefusal: 0 };
  for (const seed of seeds) {
    const result = await run(seed, options);
    if (ONE !== null && process.env.SIM_DEBUG) console.log(JSON.stringify(result.stats));
    for (const v of result.violations) {
      const bug = KNOWN_BUGS.find((b) => b.pattern.test(v));
      if (bug) known.set(bug.name, (known.get(bug.name) ?? 0) + 1);
      else unexplained.push(v);
    }
    for (const k of ["refused", "takeovers", "pauses", "crashes", "stops", "midCall"] as const) totals[k] += result.stats[k];
    if (result.stats.refused > 0) totals.seedsWithRefusal++;
  }
  if (known.size) console.info(`known protocol bugs seen: ${[...known].map(([name, n]) => `${name} (${n}×)`).join("; ")}`);
  return { unexplained, known, totals };
}

function accepted(result: SubmitResult | null): string {
  if (result?.status !== "accepted") throw new Error(`the message was not accepted: ${JSON.stringify(result)}`);
  return result.requestId;
}

/**
 * Replicas A and B; A takes "guide (s1#1)" and freezes inside the call_agent callee, at its `nth` next `point`.
 * B takes the session over: main's call was marked running before the callee started and the callee lived only in
 * A's memory, so the call is answered as interrupted (not made again) and the callee's session is closed.
 */
async function takeOverMidCall(world: ReplicaWorld, point: PausePoint, nth: number) {
  world.start("A");
  const b = world.start("B");
  world.pause("A", point, nth);
  const requestId = accepted(await world.submit("A", "sim:s1", "guide (s1#1)", "m1"));
  await world.settle();
  expect(world.get("A").state).toBe("paused");
  expect(world.shared.midCall).toBe(1);
  await world.advance(world.ttlMs + 1);
  await world.poll("B");
  await world.settle();
  expect(await b.store.leases.get("sim:s1")).toMatchObject({ holder: "B", token: 2 });
  expect((await b.store.outbox.ofRequest(requestId)).map((o) => o.text)).toEqual([
    "All set (call_agent was interrupted by a restart; it may or may not have run. Check its effect before trying again.)",
  ]);
  expect(await b.store.steps.openAgentSessions("sim:s1")).toEqual([]);
  return b;
}

const seedList = (count: number) => (ONE !== null ? [ONE] : Array.from({ length: count }, (_, i) => i + 1));

/** The first seed up to `max` whose planted run reports `pattern` while the same seed without the plant does not. */
async function plantedSeed(pattern: RegExp, options: Partial<ReplicaScenarioOptions>, max = 40): Promise<string[]> {
  for (let seed = 1; seed <= max; seed++) {
    const planted = (await run(seed, options)).violations.filter((v) => pattern.test(v));
    if (planted.length === 0) continue;
    const { plants: _planted, ...clean } = options;
    if ((await run(seed, clean)).violations.some((v) => pattern.test(v))) continue; // a known bug shows there anyway
    return planted;
  }
  return [];
}

describe("replicas and leases (simulation)", () => {
  it(
    `holds every lease invariant over ${ONE ?? SEEDS} seeded scenarios with pauses, crashes and stops`,
    async () => {
      const { unexplained, totals } = await runSeeds(seedList(SEEDS));
      expect(unexplained, unexplained.slice(0, 5).join("\n")).toEqual([]);
      if (ONE !== null) return;
      // The workload really exercised the faults: takeovers, and stale commits refused by the fence.
      expect(totals.takeovers).toBeGreaterThan(SEEDS);
      expect(totals.seedsWithRefusal).toBeGreaterThan(SEEDS / 4);
      expect(totals.crashes + totals.stops).toBeGreaterThan(SEEDS / 10);
      // Some pauses and crashes struck inside a call_agent callee (its model answer or its booking held).
      expect(totals.midCall).toBeGreaterThan(SEEDS / 20);
    },
    TIMEOUT,
  );

  it(
    `holds them over ${ONE ?? PAUSE_SEEDS} scenarios that each pause a replica mid-step until the other takes over`,
    async () => {
      const { unexplained, totals } = await runSeeds(seedList(PAUSE_SEEDS), { pausedTakeoverOnly: true });
      expect(unexplained, unexplained.slice(0, 5).join("\n")).toEqual([]);
      if (ONE === null) expect(totals.seedsWithRefusal).toBeGreaterThan(PAUSE_SEEDS / 3);
    },
    TIMEOUT,
  );

  it("is deterministic: the same seed gives the same trace", async () => {
    for (const seed of [3, 17, 42]) {
      const a = await run(seed);
      const b = await run(seed);
      expect(b.traceHash, `seed ${seed}`).toBe(a.traceHash);
    }
    expect((await run(4)).traceHash).not.toBe((await run(3)).traceHash);
  });

  it("refuses the commit of a paused replica: A holds token 1, B takes over with token 2, nothing of A's step is stored", async () => {
    const world = new ReplicaWorld({ dir, catalog, seed: 1, ttlMs: 1000 });
    try {
      const a = world.start("A");
      const b = world.start("B");
      await world.submit("A", "sim:s1", "plan a trip (s1#1)", "m1");
      await world.settle();
      expect(await b.store.leases.get("sim:s1")).toMatchObject({ holder: "A", token: 1 });

      // A takes the next message and freezes right after its model answered, before it handled the answer.
      world.pause("A", "model");
      const requestId = accepted(await world.submit("A", "sim:s1", "Lisbon (s1#2)", "m2"));
      await world.settle();
      expect(a.state).toBe("paused");
      const held = await b.store.leases.get("sim:s1");
      expect(held).toMatchObject({ holder: "A", token: 1 });
      // While A's lease lives, B's poll leaves the session alone.
      await world.poll("B");
      await world.settle();
      expect(await b.store.leases.get("sim:s1")).toEqual(held);

      // A's renewals are frozen with it: once the lease ran out, B's poll finds the session orphaned and takes it.
      await world.advance(world.ttlMs + 1);
      await world.poll("B");
      await world.settle();
      expect(await b.store.leases.get("sim:s1")).toMatchObject({ holder: "B", token: 2 });
      expect((await b.store.requests.get(requestId))?.status).toBe("done");
      const replies = (await b.store.outbox.ofRequest(requestId)).map((o) => o.text);
      expect(replies).toEqual(["Interview skill finished.", "All set (booked: booked Lisbon (s1#2))"]);
      expect(world.outside.bookings.get("Lisbon (s1#2)")).toBe(1);
      const logBefore = await b.store.steps.log("sim:s1");

      // A resumes and handles its model's answer: its step carries token 1, and the store refuses it.
      await world.resume("A", "work-first");
      await world.settle();
      const fromA = world.checker.commits.filter((c) => c.replica === "A" && c.step.request?.id === requestId);
      expect(fromA).toHaveLength(1);
      const [refused] = fromA;
      expect(refused).toMatchObject({ ok: false, fence: { holder: "A", token: 1 }, current: { holder: "B", token: 2 } });
      expect(refused!.error).toBeInstanceOf(FencedError);
      expect(refused!.error).toMatchObject({ sessionKey: "sim:s1", token: 1, current: 2 });

      // Nothing of that step reached the store: not its rows, not its running mark; the tool never ran on A.
      const aToolUse = JSON.stringify(refused!.step.log).match(/toolu_\d+/)![0];
      expect(await b.store.steps.log("sim:s1")).toEqual(logBefore);
      expect(JSON.stringify(logBefore)).not.toContain(`"${aToolUse}"`);
      expect((await b.store.steps.frames("sim:s1")).map((f) => f.runningToolUseId)).toEqual([]);
      expect((await b.store.outbox.ofRequest(requestId)).map((o) => o.text)).toEqual(replies);
      expect(world.outside.runs.get(aToolUse)).toBeUndefined();
      expect(world.outside.bookings.get("Lisbon (s1#2)")).toBe(1);

      await world.finish(["sim:s1"]);
      expect(world.violations).toEqual([]);
      // The step A computed under token 1 is the only one it tried; every accepted step came from its holder.
      expect(world.checker.commits.filter((c) => c.ok).map((c) => `${c.replica}:${c.fence?.token}`)).toEqual(["A:1", "A:1", "B:2", "B:2", "B:2", "B:2"]);
    } finally {
      world.close();
    }
  });

  it("a replica paused in a call_agent callee right after its booking: the other answers the call as interrupted; one booking", async () => {
    const world = new ReplicaWorld({ dir, catalog, seed: 3, ttlMs: 1000 });
    try {
      await takeOverMidCall(world, "ledger", 1);
      expect(world.outside.bookings.get("guide (s1#1)")).toBe(1);
      // A resumes: its callee goes on under token 1, and its steps are refused.
      await world.resume("A", "work-first");
      await world.settle();
      expect(world.checker.commits.filter((c) => c.replica === "A" && !c.ok).length).toBeGreaterThan(0);
      await world.finish(["sim:s1"]);
      expect(world.violations).toEqual([]);
      expect(world.outside.bookings.get("guide (s1#1)")).toBe(1);
    } finally {
      world.close();
    }
  });

  it("a replica paused on its callee's model answer books nothing once it resumes: the booking's mark is refused first", async () => {
    for (const order of ["work-first", "timers-first"] as const) {
      const world = new ReplicaWorld({ dir, catalog, seed: 4, ttlMs: 1000 });
      try {
        // Main's answer (the call) goes through; the callee's (the booking) is held.
        const b = await takeOverMidCall(world, "model", 2);
        await world.resume("A", order);
        await world.settle();
        await world.finish(["sim:s1"]);
        expect(world.violations, order).toEqual([]);
        expect(world.outside.bookings.get("guide (s1#1)"), order).toBeUndefined();
        expect(await b.store.steps.openAgentSessions("sim:s1")).toEqual([]);
      } finally {
        world.close();
      }
    }
  });

  it("lets a resumed replica whose overdue renewal runs first stop its turn without trying to commit", async () => {
    const world = new ReplicaWorld({ dir, catalog, seed: 2, ttlMs: 1000 });
    try {
      world.start("A");
      const b = world.start("B");
      world.pause("A", "model");
      await world.submit("A", "sim:s1", "question (s1#1)", "m1");
      await world.settle();
      await world.advance(world.ttlMs + 1);
      await world.poll("B");
      await world.settle();
      expect(await b.store.leases.get("sim:s1")).toMatchObject({ holder: "B", token: 2 });
      const before = world.checker.commits.length;
      await world.resume("A", "timers-first");
      await world.settle();
      // The renewal found the lease taken over, the turn was cancelled with its model call: no commit attempt.
      expect(world.checker.commits.slice(before)).toEqual([]);
      await world.finish(["sim:s1"]);
      expect(world.violations).toEqual([]);
      expect((await b.store.outbox.ofRequest("req_A_1")).map((o) => o.text)).toEqual(["answer to question (s1#1)"]);
    } finally {
      world.close();
    }
  });
});

describe("every checker fires on its planted bug (and the same seed is clean without it)", () => {
  it("1 and 2, stale commits and one writer per token: a replica whose writer takes the current lease instead of its own", async () => {
    const found = await plantedSeed(/stale commit|one writer per token/, { plants: { A: { stealFence: true } }, pausedTakeoverOnly: true });
    expect(found.join("\n")).toMatch(
      /^seed \d+: stale commit: A committed a step of sim:s\d under B's token \d+ \(it believed it held token \d+\) while the lease was B's, token \d+\n {2}replay: SIM_SEED=\d+ /,
    );
    expect(found.join("\n")).toMatch(/seed \d+: one writer per token: commits of sim:s\d under token \d+ came from A and B/);
  });

  it("3, side effects at most once: a booking tool that claims to be idempotent runs again after a takeover", async () => {
    const found = await plantedSeed(/side effects/, { plants: { "*": { idempotentLedger: true } }, pausedTakeoverOnly: true });
    expect(found[0]).toMatch(/^seed \d+: side effects: "[^"]+" was booked 2 times/);
  });

  it("4, nothing stuck: replicas that never take over orphaned work leave a crashed replica's requests pending", async () => {
    const found = await plantedSeed(/stuck: request/, { plants: { "*": { noTakeover: true } } }, 60);
    expect(found[0]).toMatch(/^seed \d+: stuck: request req_\w+ \("[^"]+"\) of sim:s\d is still (pending|running)/);
  }, 120_000);

  it("5, stale stacks: a stack cache that is never dropped is caught after another replica's turn", async () => {
    const found = await plantedSeed(/stale stack/, { plants: { "*": { staleCache: true } } });
    expect(found[0]).toMatch(/^seed \d+: stale stack: after \w+'s step, its stack of sim:s\d differs from the committed one/);
  });
});

describe("regressions: the protocol bugs this simulation found, fixed", () => {
  it("a replica forgets its cached main history when another replica ran the session in between", async () => {
    const world = new ReplicaWorld({ dir, catalog, seed: 1 });
    try {
      world.start("A");
      world.start("B");
      for (const [via, text] of [
        ["B", "question (s1#1)"],
        ["A", "question (s1#2)"],
        ["B", "plan a trip (s1#3)"],
      ] as const) {
        await world.submit(via, "sim:s1", text, text);
        await world.settle();
      }
      // B took the session back (token 3): it forgets what it cached of it, its main agent's history included,
      // so the model sees question 2 and its answer, which A handled.
      // (checker 5 compares B's stack in memory, main's history included, with the committed one after each step)
      expect(world.violations).toEqual([]);
    } finally {
      world.close();
    }
  });

  it("whenDone on the replica whose turn was fenced waits for the new holder to finish the request", async () => {
    const world = new ReplicaWorld({ dir, catalog, seed: 1 });
    try {
      world.start("A");
      world.start("B");
      world.pause("A", "model");
      const id = accepted(await world.submit("A", "sim:s1", "question (s1#1)", "m1"));
      await world.settle();
      await world.advance(world.ttlMs + 1);
      // B takes over, and freezes in its turn in turn (its model answered, the step not yet committed).
      world.pause("B", "model");
      await world.poll("B");
      await world.settle();
      await world.resume("A", "work-first");
      await world.settle();
      // A's commit was refused; its waiter (an HTTP client on A) is not told anything yet.
      expect(world.requests.find((r) => r.id === id)?.resolved).toBe(false);
      expect(world.checker.requestStatus(id)).toBe("pending");
      await world.resume("B");
      await world.settle();
      expect(world.checker.requestStatus(id)).toBe("done");
      // A hears of the end through its poll (SQLite has no cross-process notifications), and only then resolves.
      await world.poll("A");
      await world.settle();
      expect(world.requests.find((r) => r.id === id)?.resolved).toBe(true);
      expect(world.violations).toEqual([]);
    } finally {
      world.close();
    }
  });
});
