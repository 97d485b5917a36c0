import { createHash } from "node:crypto";
import type { Catalog } from "../../../src/catalog/definition.js";
import type { PausePoint } from "./pause-gate.js";
import type { ReplicaPlants } from "./replica.js";
import { ReplicaWorld, type ResumeOrder } from "./world.js";

export interface ReplicaScenarioOptions {
  seed: number;
  dir: string;
  catalog: Catalog;
  plants?: Record<string, ReplicaPlants>;
  events?: number;
  /** Only the fault under test: every scenario pauses a replica mid-step, lets the other take over, resumes it. */
  pausedTakeoverOnly?: boolean;
}

export interface ReplicaScenarioResult {
  seed: number;
  violations: string[];
  trace: string[];
  traceHash: string;
  stats: {
    commits: number;
    refused: number;
    takeovers: number;
    pauses: number;
    crashes: number;
    stops: number;
    modelCalls: number;
    staleModelCalls: number;
    requests: number;
    /** Pauses and crashes that struck inside a call_agent callee. */
    midCall: number;
  };
}

/** The command that replays one seed (SIM_DEBUG=1 prints its trace), in the test that ran it. */
export function replayHint(seed: number, pausedTakeoverOnly = false): string {
  const test = pausedTakeoverOnly ? "until the other takes over" : "crashes and stops";
  return `SIM_SEED=${seed} SIM_DEBUG=1 npx vitest run test/sim/replicas.test.ts -t "${test}"`;
}

/**
 * One seeded scenario: two replicas A and B on one SQLite file, 2 or 3 chat sessions, messages stored through
 * either replica, polls, time passing, and the faults: a replica paused mid-step (its model answer or its side
 * effect held, its timers frozen) and resumed after the other took the session over; a crash (it never comes
 * back; a new process replaces it); a graceful stop (its leases released at once).
 */
export async function runReplicaScenario(options: ReplicaScenarioOptions): Promise<ReplicaScenarioResult> {
  const { seed } = options;
  const world = new ReplicaWorld({ dir: options.dir, catalog: options.catalog, seed, ...(options.plants ? { plants: options.plants } : {}) });
  const { prng } = world;
  const sessions = Array.from({ length: 2 + prng.int(2) }, (_, i) => `sim:s${i + 1}`);
  const sent: Array<{ sessionKey: string; text: string; id: string }> = [];
  const counts = { crashes: 0, stops: 0 };
  let generation = 1;
  let n = 0;
  let armedAt = 0;
  let i = 0;

  const message = async (via: string) => {
    const sessionKey = prng.pick(sessions);
    const kind = prng.weighted({ plan: 4, city: 4, question: 2, guide: 3, forecast: 1 });
    const opening = { plan: "plan a trip", city: "Lisbon", question: "question", guide: "guide", forecast: "forecast" }[kind];
    const text = `${opening} (${sessionKey.slice(4)}#${++n})`;
    const id = `m${n}`;
    // Redelivered later only once stored (a replica that froze mid-submit may still store it when it resumes).
    if (await world.submit(via, sessionKey, text, id)) sent.push({ sessionKey, text, id });
  };
  const paused = () => [...world.replicas.values()].find((r) => r.state === "paused");
  /** A fault only while every other replica runs: someone can always take over. */
  const canFault = () => world.live().length >= 2 && !paused() && !world.live().some((r) => r.gate.isArmed);
  const takeover = async () => {
    await world.advance(world.ttlMs + 1 + prng.int(world.ttlMs));
    const other = prng.pick(world.live());
    await world.poll(other.name);
    if (prng.chance(0.7)) await world.settle();
  };
  const pauseEpisode = async () => {
    const victim = prng.pick(world.live());
    const point: PausePoint = prng.chance(0.75) ? "model" : "ledger";
    armedAt = i;
    world.pause(victim.name, point, 1 + prng.int(3));
    // Give it work to freeze in.
    await message(victim.name);
    await world.settle();
  };

  try {
    world.start("A");
    world.start("B");
    const events = options.events ?? 16;
    for (; i < events; i++) {
      // A pause or crash armed for a point the replica never reached is called off, so the next fault can come.
      for (const r of world.live()) if (r.gate.isArmed && i - armedAt > 3) r.gate.disarm();
      const stalled = paused();
      if (options.pausedTakeoverOnly) {
        if (!stalled && canFault() && i % 4 === 1) await pauseEpisode();
        else if (stalled && i % 4 === 2) await takeover();
        else if (stalled && i % 4 === 3) await world.resume(stalled.name, prng.pick<ResumeOrder>(["work-first", "timers-first"]));
        else await message(prng.pick(world.live()).name);
        if (prng.chance(0.6)) await world.settle();
        continue;
      }
      const kind = prng.weighted({
        message: 30,
        duplicate: 4,
        poll: 10,
        advance: 8,
        pause: canFault() ? 16 : 0,
        takeover: stalled ? 24 : 0,
        resume: stalled ? 8 : 0,
        crash: canFault() && counts.crashes === 0 ? 4 : 0,
        stop: canFault() && counts.stops === 0 ? 3 : 0,
        restart: world.live().length < 2 && !stalled ? 8 : 0,
      });
      switch (kind) {
        case "message":
          await message(prng.pick(world.live()).name);
          break;
        case "duplicate": {
          if (sent.length === 0) break;
          const again = prng.pick(sent);
          const via = prng.pick(world.live()).name;
          const result = await world.submit(via, again.sessionKey, again.text, again.id);
          if (result && result.status !== "duplicate")
            world.checker.report(`exactly once: message ${again.id} delivered again via ${via} was ${result.status}, not a duplicate`);
          break;
        }
        case "poll":
          await world.poll(prng.pick(world.live()).name);
          break;
        case "advance":
          await world.advance(prng.chance(0.5) ? 1 + prng.int(world.ttlMs / 2) : world.ttlMs + prng.int(world.ttlMs));
          break;
        case "pause":
          await pauseEpisode();
          break;
        case "takeover":
          await takeover();
          break;
        case "resume":
          await world.resume(stalled!.name, prng.pick<ResumeOrder>(["work-first", "timers-first"]));
          break;
        case "crash": {
          const victim = prng.pick(world.live());
          counts.crashes++;
          armedAt = i;
          if (prng.chance(0.3)) world.pause(victim.name, "now", 1, "die");
          else {
            world.pause(victim.name, prng.chance(0.7) ? "model" : "ledger", 1 + prng.int(2), "die");
            await message(victim.name);
          }
          break;
        }
        case "stop":
          counts.stops++;
          await world.stop(prng.pick(world.live()).name);
          break;
        case "restart": {
          // A new process: a new holder name, so the leases of the one it replaces are not its own.
          const gone = [...world.replicas.values()].filter((r) => r.state === "crashed" || r.state === "stopped").pop()!;
          world.start(`${gone.name.charAt(0)}${++generation}`);
          break;
        }
      }
      if (prng.chance(0.6)) await world.settle();
    }
    await world.finish(sessions);
  } catch (error) {
    world.checker.report(`the simulation itself failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    world.close();
  }

  const commits = world.checker.commits;
  const tokens = new Map<string, number>();
  for (const c of commits) if (c.current) tokens.set(c.sessionKey, Math.max(tokens.get(c.sessionKey) ?? 0, c.current.token));
  const violations = world.violations.map((v) => `seed ${seed}: ${v}\n  replay: ${replayHint(seed, options.pausedTakeoverOnly)}`);
  return {
    seed,
    violations,
    trace: world.lines,
    traceHash: createHash("sha256").update(world.lines.join("\n")).digest("hex"),
    stats: {
      commits: commits.filter((c) => c.ok).length,
      refused: commits.filter((c) => !c.ok).length,
      takeovers: [...tokens.values()].reduce((sum, t) => sum + t - 1, 0),
      pauses: [...world.replicas.values()].reduce((sum, r) => sum + r.pauses, 0),
      crashes: [...world.replicas.values()].filter((r) => r.state === "crashed").length,
      stops: counts.stops,
      modelCalls: world.shared.calls,
      staleModelCalls: world.shared.staleCalls,
      requests: world.requests.length,
      midCall: world.shared.midCall,
    },
  };
}
