import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Catalog } from "../../../src/catalog/definition.js";
import { loadCatalog } from "../../../src/catalog/loader.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import type { SubmitResult } from "../../../src/gateway/types.js";
import { Prng } from "../prng.js";
import { ReplicaChecker } from "./checker.js";
import { SimClock } from "./clock.js";
import type { PausePoint } from "./pause-gate.js";
import { Replica, type ReplicaPlants } from "./replica.js";
import type { ModelShared, Outside } from "./script-model.js";

/**
 * What the scripted model hands over to: the interview skill, the researcher agent it calls with call_agent, and
 * a forecast agent that is unavailable (the key it needs is never set).
 */
export function writeReplicaCatalog(root: string): Catalog {
  mkdirSync(join(root, "skills", "interview"), { recursive: true });
  mkdirSync(join(root, "agents"), { recursive: true });
  writeFileSync(join(root, "skills", "interview", "SKILL.md"), "---\nname: interview\ndescription: Plans a trip.\n---\nAsk where to, then book it.\n");
  writeFileSync(join(root, "agents", "researcher.md"), "---\nname: researcher\ndescription: Books a guide.\n---\nBook a guide for the place, then say so.\n");
  writeFileSync(join(root, "agents", "forecast.md"), "---\nname: forecast\ndescription: Forecasts.\nenv: [REPLICA_FORECAST_KEY]\n---\nForecast.\n");
  return loadCatalog(join(root, "skills"), join(root, "agents"), { env: {} });
}

export interface WorldOptions {
  dir: string;
  catalog: Catalog;
  seed: number;
  ttlMs?: number;
  /** Bugs planted in the replica of that name (`*`: in every replica, restarted ones included). */
  plants?: Record<string, ReplicaPlants>;
  maxModelCalls?: number;
}

/** Who runs the session after a pause: the paused replica's answer first, or its overdue lease renewal first. */
export type ResumeOrder = "work-first" | "timers-first";

/**
 * Replicas on one SQLite file, one virtual clock, the outside world and the checker: the actions a scenario
 * (or a hand-written test) performs, and `settle`, which lets every replica run until it waits on something
 * the simulation holds. With SQLite answering synchronously and no real I/O, one turn of the event loop
 * (setImmediate) means the microtask queue ran dry: no real time passes, and the order is deterministic.
 */
export class ReplicaWorld {
  readonly clock = new SimClock();
  readonly prng: Prng;
  readonly outside: Outside = { bookings: new Map(), runs: new Map(), delivered: [] };
  readonly checker: ReplicaChecker;
  readonly shared: ModelShared;
  readonly lines: string[] = [];
  readonly replicas = new Map<string, Replica>();
  readonly dbFile: string;
  readonly ttlMs: number;
  /** Accepted requests, with the replica that stored them and whether its whenDone resolved. */
  readonly requests: Array<{ id: string; via: string; sessionKey: string; text: string; resolved: boolean }> = [];
  private readonly start0: number;

  constructor(private readonly options: WorldOptions) {
    this.prng = new Prng(options.seed);
    this.ttlMs = options.ttlMs ?? 1000;
    this.dbFile = join(options.dir, `replicas-${options.seed}-${randomUUID().slice(0, 8)}.db`);
    // A migrated empty database, copied: migrating a new file for every scenario would take most of the run.
    const template = join(options.dir, "replicas-template.db");
    if (!existsSync(template)) void new SqliteStore(template).close();
    copyFileSync(template, this.dbFile);
    this.checker = new ReplicaChecker(this.dbFile);
    this.start0 = this.clock.now();
    this.shared = {
      prng: this.prng,
      clock: this.clock,
      violations: [],
      trace: (l) => this.trace(l),
      toolIds: 0,
      calls: 0,
      staleCalls: 0,
      maxCalls: options.maxModelCalls ?? 400,
      midCall: 0,
    };
  }

  trace(line: string): void {
    this.lines.push(`t=${this.clock.now() - this.start0} ${line}`);
    if (process.env.SIM_DEBUG) console.log(this.lines[this.lines.length - 1]);
  }

  get violations(): string[] {
    return [...this.shared.violations, ...this.checker.violations];
  }

  start(name: string): Replica {
    const replica = new Replica({
      name,
      dbFile: this.dbFile,
      ttlMs: this.ttlMs,
      clock: this.clock,
      catalog: this.options.catalog,
      checker: this.checker,
      outside: this.outside,
      shared: this.shared,
      trace: (l) => this.trace(l),
      plants: this.options.plants?.[name] ?? this.options.plants?.["*"] ?? {},
    });
    this.replicas.set(name, replica);
    this.trace(`${name} started`);
    return replica;
  }

  get(name: string): Replica {
    const replica = this.replicas.get(name);
    if (!replica) throw new Error(`no replica ${name}`);
    return replica;
  }

  live(): Replica[] {
    return [...this.replicas.values()].filter((r) => r.live);
  }

  /** Runs every replica until each is idle or waits at a gate. */
  async settle(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Stores a message through `via`. Null when `via` froze or died before it answered (its other work hit a
   * pause point meanwhile): the simulation goes on; the submit finishes if and when the replica resumes.
   */
  async submit(via: string, sessionKey: string, text: string, messageId: string): Promise<SubmitResult | null> {
    const replica = this.get(via);
    const submitted = replica.gateway.submit({ sessionKey, messageId, userId: `user-${sessionKey}`, text }).then((result) => {
      this.trace(`submit "${text}" (${messageId}) via ${via} → ${result.status}${"requestId" in result ? ` ${result.requestId}` : ""}`);
      if (result.status === "accepted") this.watchDone(replica, result.requestId, sessionKey, text);
      return result;
    });
    return this.unlessStopped(replica, submitted);
  }

  /** whenDone must resolve once the request is done or failed, and not before. */
  private watchDone(replica: Replica, id: string, sessionKey: string, text: string): void {
    const entry = { id, via: replica.name, sessionKey, text, resolved: false };
    this.requests.push(entry);
    void replica.gateway.whenDone(id).then(() => {
      entry.resolved = true;
      // A replica shutting down lets its waiters go with the turn it cut off; that is shutdown, not the leases.
      if (replica.state === "stopped") return;
      const status = this.checker.requestStatus(id);
      if (status !== "done" && status !== "failed") {
        this.checker.report(`whenDone: ${replica.name}'s whenDone(${id}) resolved while the request was still ${status} (the caller is told it finished)`);
      }
    });
  }

  async poll(via: string): Promise<void> {
    this.trace(`${via} polls`);
    const replica = this.get(via);
    await this.unlessStopped(replica, replica.gateway.poll());
  }

  /** What the simulation waits for on a replica, unless the replica freezes or dies first. */
  private unlessStopped<T>(replica: Replica, work: Promise<T>): Promise<T | null> {
    return Promise.race([work, replica.gate.stopped.then(() => null)]);
  }

  async advance(ms: number): Promise<void> {
    this.trace(`time +${ms} ms`);
    await this.clock.advance(ms, () => this.settle());
  }

  /** Freezes `name` now, or arms it to freeze (or die) at its `nth` next model answer or side effect. */
  pause(name: string, point: PausePoint | "now", nth = 1, then: "pause" | "die" = "pause"): void {
    const gate = this.get(name).gate;
    if (point !== "now") {
      this.trace(
        `${name} will ${then === "die" ? "crash" : "pause"} at its ${nth === 1 ? "next" : `${nth}${nth === 2 ? "nd" : nth === 3 ? "rd" : "th"} next`} ${point === "model" ? "model answer" : "ledger call"}`,
      );
      gate.arm(point, nth, then);
    } else if (then === "die") gate.kill();
    else gate.pause();
  }

  async resume(name: string, order: ResumeOrder = "work-first"): Promise<void> {
    const replica = this.get(name);
    if (replica.state !== "paused") return;
    this.trace(`${name} resumes (${order})`);
    replica.state = "running";
    if (order === "timers-first") {
      // The overdue renewal runs before the held answer is handled: it finds the lease taken and stops the turn.
      replica.gate.resumeStore();
      this.clock.thaw(name);
      this.clock.fireDue(name);
      await this.settle();
      replica.gate.resume();
    } else {
      // The held answer is handled first (its commit meets the fence); overdue timers fire at the next tick.
      replica.gate.resume();
      this.clock.thaw(name);
    }
  }

  /** A graceful shutdown: the running turn is cut off and its lease released at once. */
  async stop(name: string): Promise<void> {
    const replica = this.get(name);
    this.trace(`${name} stops`);
    replica.gate.disarm();
    replica.state = "stopped";
    await replica.gateway.stop();
    this.clock.freeze(name);
  }

  /** Whether there is still work: unfinished requests, undelivered replies, waiters of live replicas. */
  async pending(): Promise<boolean> {
    const any = this.live()[0];
    if (!any) return false;
    if ((await any.store.requests.unfinished()).length > 0) return true;
    if ((await any.store.outbox.pending()).length > 0) return true;
    return this.requests.some((r) => !r.resolved && this.get(r.via).live);
  }

  /**
   * The end of a scenario: paused replicas resume, then time passes (every lease runs out) and every live
   * replica polls, until nothing is left to do; then the end-state invariants are checked.
   */
  async finish(sessions: string[]): Promise<void> {
    for (const r of this.replicas.values()) r.gate.disarm();
    for (const r of this.replicas.values()) if (r.state === "paused") await this.resume(r.name);
    await this.settle();
    for (let round = 0; round < 8 && (await this.pending()); round++) {
      await this.advance(this.ttlMs + 1);
      for (const r of this.live()) {
        await this.poll(r.name);
        await this.settle();
      }
    }
    this.checker.atEnd(sessions, this.outside, new Set([...this.replicas.values()].filter((r) => r.state === "crashed").map((r) => r.name)));
    for (const r of this.requests) {
      if (!r.resolved && this.get(r.via).live) this.checker.report(`stuck: ${r.via}'s whenDone(${r.id}) never resolved`);
    }
  }

  close(): void {
    // SqliteStore.close() drops the handle before it returns; the files are removed just below.
    for (const r of this.replicas.values()) void r.raw.close();
    this.checker.close();
    if (!process.env.SIM_KEEP_DB) for (const suffix of ["", "-wal", "-shm"]) rmSync(this.dbFile + suffix, { force: true });
  }
}
