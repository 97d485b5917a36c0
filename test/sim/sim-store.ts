import type {
  AdvanceNotice,
  InsertResult,
  Lease,
  LogEntryInput,
  NewRequest,
  OutboundInput,
  ClaimedOutbound,
  SessionWriter,
  StepCommit,
  Store,
} from "../../src/store/store.js";
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { migrate } from "../../src/store/sqlite/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

/** The process died: every later use of its store fails, like calls into a dead process. */
export class Crash extends Error {
  override name = "Crash";
}

/**
 * An empty store at the newest schema version, made once per folder: a new scenario's file starts as a copy of it
 * rather than running every migration again (a sixth of a seed's time). Opening it still checks the version. It is
 * in WAL mode already (the mode is kept in the file's header), so the store's first open need not switch the copy to
 * it: a tenth of a seed's store open.
 */
const templates = new Map<string, string>();
function migratedTemplate(dir: string): string {
  let file = templates.get(dir);
  if (file === undefined) {
    file = join(dir, `template-${process.pid}.db`);
    const db = new Database(file);
    migrate(db);
    db.pragma("journal_mode = WAL");
    db.close();
    templates.set(dir, file);
  }
  return file;
}

/** Bugs the checkers must catch, planted in the store a world uses. */
export interface StorePlants {
  dropToolResults?: boolean;
  dropFrameUpdates?: boolean;
  forgetDuplicates?: boolean;
  forgetDeliveries?: boolean;
  /** Acknowledges an inbound message at once and commits it with the next group (the bug group commit must not have). */
  ackBeforeCommit?: boolean;
  /** Commits a step's tool_result rows with the session's next step (a step torn in two, as a shared journal did). */
  lateToolResults?: boolean;
  /** Moves a late job on without the notice that tells its owner (the skip the scheduled-runs checker must catch). */
  silentSkips?: boolean;
}

/**
 * Where the process dies: at step commit number `commit`, just before or just after it reaches the disk; or at
 * the `groupCommit`th group commit of several writes (steps, inbound messages, delivery marks, leases of any
 * session), after that transaction committed and before any of its writers was told (nobody is acknowledged),
 * or (`before`) just before it, so that all of its writes are lost; or (`afterRunningTool`) just before the
 * commit that follows the first step marking a tool as running (the tool ran; its result is lost).
 */
export type CrashPoint = { commit: number; after: boolean } | { groupCommit: number; before?: boolean } | { afterRunningTool: true };

/** A scheduled job's committed move: the due times from `from` up to `next` settled, at `at`, its owner told or not. */
export interface SimMove {
  jobId: string;
  from: number;
  next: number | null;
  lastDue: number;
  result: string;
  told: boolean;
  at: number;
}

/** A step as the checkers see it: with the session it was written for. */
export type SimStep = StepCommit & { sessionKey: string };

/** `role` with every method checked first: a call into a dead process rejects, as a networked store's would. */
function whileAlive<R extends object>(role: R, alive: () => void): R {
  const guarded: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(role))) {
    const method = (role as Record<string, unknown>)[name];
    if (name === "constructor" || typeof method !== "function") continue;
    guarded[name] = async (...args: unknown[]) => {
      alive();
      return (method as (...a: unknown[]) => unknown).apply(role, args);
    };
  }
  return guarded as R;
}

/**
 * The world's SQLite store, with a crash point (CrashPoint). `onCommit` lets the checkers look at every step; the commit
 * resolves only once they have, so the turn that made the step waits for them.
 *
 * Every method is async, so a call into a dead process rejects (as a networked store's would) rather than
 * throwing where the caller does not expect it (a lease renewal on a timer).
 */
export class SimStore implements Store {
  readonly sessions: Store["sessions"];
  readonly steps: Store["steps"];
  readonly tasks: Store["tasks"];
  readonly requests: Store["requests"];
  readonly outbox: Store["outbox"];
  readonly approvals: Store["approvals"];
  readonly leases: Store["leases"];
  readonly feed: Store["feed"];
  readonly memories: Store["memories"];
  readonly userData: Store["userData"];
  readonly operations: Store["operations"];
  readonly indicators: Store["indicators"];
  readonly files: Store["files"];
  readonly schedules: Store["schedules"];
  readonly usage: Store["usage"];
  readonly workspaces: Store["workspaces"];
  private readonly inner: SqliteStore;
  private commits = 0;
  private groups = 0;
  /** The crash struck a group commit of this many writes (just before it or just after it; none acknowledged). */
  crashedGroup = 0;
  /** That group had committed: its writes are on disk although their writers were never told. */
  private groupOnDisk = false;
  /** afterRunningTool: a tool was marked running; the next commit dies. */
  private toolRunning = false;
  /** lateToolResults: the tool results held back per session, for its next commit. */
  private readonly heldResults = new Map<string, LogEntryInput[]>();
  /** forgetDeliveries: replies this process handed out; kept in memory only, so a restart sends them again. */
  private readonly claimedHere = new Set<string>();
  dead = false;

  constructor(
    file: string,
    now: () => number,
    private readonly crashAt: CrashPoint | null,
    private readonly plants: StorePlants,
    private readonly onCommit: (step: SimStep) => Promise<void>,
    /** A scheduled job moved on (its compare-and-set won), told whether its owner got a notice with it. */
    private readonly onMove: (move: SimMove) => void = () => {},
  ) {
    // Exclusive, like the gateway's own store: the file is this process's, so the leases the previous
    // (crashed) process left in it are expired at once and the restart resumes its sessions.
    const group = crashAt && "groupCommit" in crashAt ? crashAt : null;
    const strike = (writes: number, before: boolean) => {
      if (group === null || Boolean(group.before) !== before || writes < 2 || ++this.groups !== group.groupCommit) return;
      this.crashedGroup = writes;
      this.groupOnDisk = !before;
      this.die();
      throw new Crash(`crashed ${before ? "before" : "after"} group commit ${this.groups} (${writes} writes ${before ? "lost" : "on disk"}, none acknowledged)`);
    };
    if (!existsSync(file)) copyFileSync(migratedTemplate(dirname(file)), file);
    const inner = (this.inner = new SqliteStore(file, now, { exclusive: true, groupCommit: { before: (n) => strike(n, true), after: (n) => strike(n, false) } }));
    const alive = () => void this.alive();
    this.sessions = whileAlive(inner.sessions, alive);
    this.tasks = whileAlive(inner.tasks, alive);
    this.approvals = whileAlive(inner.approvals, alive);
    this.leases = whileAlive(inner.leases, alive);
    this.memories = whileAlive(inner.memories, alive);
    this.userData = whileAlive(inner.userData, alive);
    this.operations = whileAlive(inner.operations, alive);
    this.indicators = whileAlive(inner.indicators, alive);
    this.files = whileAlive(inner.files, alive);
    this.schedules = Object.assign(whileAlive(inner.schedules, alive), {
      advance: (id: string, from: number, next: number | null, lastDue: number, result: string, notice?: AdvanceNotice) =>
        this.advance({ jobId: id, from, next, lastDue, result, told: notice !== undefined && !plants.silentSkips, at: now() }, notice),
    });
    this.usage = whileAlive(inner.usage, alive);
    this.workspaces = whileAlive(inner.workspaces, alive);
    // The change feed is the process's own: a dead process hears nothing more (closing the inner store drops it).
    this.feed = { watch: (listener) => inner.feed.watch(listener), announce: async (change) => this.alive().feed.announce(change) };
    this.steps = Object.assign(whileAlive(inner.steps, alive), { writer: (lease: Lease) => this.writer(lease) });
    this.requests = Object.assign(whileAlive(inner.requests, alive), { insert: (input: NewRequest) => this.insertRequest(input) });
    this.outbox = Object.assign(whileAlive(inner.outbox, alive), {
      // A notice is committed like a step (it counts for the crash points, and the checkers see it).
      enqueue: (sessionKey: string, messages: OutboundInput[]) =>
        this.commit({ sessionKey, outbound: messages }, () => this.alive().outbox.enqueue(sessionKey, messages)),
      markDelivered: async (id: string) => {
        const store = this.alive();
        if (!this.plants.forgetDeliveries) await store.outbox.markDelivered(id);
      },
      markUndelivered: async (id: string) => {
        const store = this.alive();
        if (this.plants.forgetDeliveries) this.claimedHere.delete(id);
        else await store.outbox.markUndelivered(id);
      },
      claimNext: (key: string) => this.claimNext(key),
      recordChunk: async (id: string, chunk: number, platformId: string) => {
        const store = this.alive();
        if (!this.plants.forgetDeliveries) await store.outbox.recordChunk(id, chunk, platformId);
      },
    });
  }

  private alive(): SqliteStore {
    if (this.dead) throw new Crash("the process is gone");
    return this.inner;
  }

  die(): void {
    this.dead = true;
    void this.inner.close();
  }

  /** The session's writer, its every commit going through the crash point and the checkers. */
  private writer(lease: Lease): SessionWriter {
    const inner = this.inner.steps.writer(lease);
    const { sessionKey, fence } = inner;
    return {
      sessionKey,
      fence,
      commit: (step) =>
        this.commit({ ...step, sessionKey }, (planted) => {
          const { sessionKey: _key, ...rest } = planted;
          return inner.commit(rest);
        }),
    };
  }

  private commit(step: SimStep, write: (planted: SimStep) => Promise<void>): Promise<void> {
    // One commit at a time, each with its checks (SQLite has a single writer anyway): the checkers see the
    // state a step left, before any other step lands.
    const turn = this.committing.then(() => this.commitNow(step, write));
    this.committing = turn.catch(() => {});
    return turn;
  }

  private committing: Promise<void> = Promise.resolve();

  private async commitNow(step: SimStep, write: (planted: SimStep) => Promise<void>): Promise<void> {
    this.alive();
    this.commits++;
    const at = this.crashAt && "commit" in this.crashAt ? this.crashAt : null;
    const crashing = (at !== null && this.commits === at.commit) || this.toolRunning;
    if (this.crashAt !== null && "afterRunningTool" in this.crashAt && (step.framesUpdated ?? []).some((f) => f.runningToolUseId)) this.toolRunning = true;
    if (crashing && (at === null || !at.after)) {
      this.die();
      throw new Crash(`crashed before commit ${this.commits}`);
    }
    const planted: SimStep = {
      ...step,
      ...(this.plants.dropToolResults ? { log: (step.log ?? []).filter((e, i) => e.type !== "tool_result" || i % 3 !== 0) } : {}),
      ...(this.plants.lateToolResults ? { log: this.holdResults(step) } : {}),
      ...(this.plants.dropFrameUpdates ? { framesUpdated: [] } : {}),
    };
    try {
      await write(planted);
    } catch (error) {
      // The process died after the group holding this step committed: the step is on disk, so the checkers
      // must know it (they read what they can before the dead store refuses them).
      if (error instanceof Crash && this.groupOnDisk) await this.onCommit(planted).catch(() => {});
      throw error;
    }
    await this.onCommit(planted);
    if (crashing) {
      this.die();
      throw new Crash(`crashed after commit ${this.commits}`);
    }
  }

  private holdResults(step: SimStep): LogEntryInput[] {
    const held = this.heldResults.get(step.sessionKey) ?? [];
    const rows = step.log ?? [];
    this.heldResults.set(
      step.sessionKey,
      rows.filter((e) => e.type === "tool_result"),
    );
    return [...held, ...rows.filter((e) => e.type !== "tool_result")];
  }

  /** A job's move, reported to the checker once it is on disk (also when the process died just after its commit). */
  private async advance(move: SimMove, notice: AdvanceNotice | undefined): Promise<boolean> {
    const store = this.alive();
    try {
      const moved = await store.schedules.advance(move.jobId, move.from, move.next, move.lastDue, move.result, move.told ? notice : undefined);
      if (moved) this.onMove(move);
      return moved;
    } catch (error) {
      if (error instanceof Crash && this.groupOnDisk) this.onMove(move);
      throw error;
    }
  }

  private async insertRequest(input: NewRequest): Promise<InsertResult> {
    const store = this.alive();
    if (this.plants.ackBeforeCommit) {
      void store.requests.insert(input).catch(() => {});
      const { claimSession: _claim, idempotency: _key, taskOptions, ...fields } = input;
      const zero = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, taskOptions: taskOptions ?? null };
      return { status: "inserted", request: { ...fields, status: "pending", taskId: null, error: null, errorCode: null, ...zero, createdAt: 0, updatedAt: 0 } };
    }
    return store.requests.insert(this.plants.forgetDuplicates ? { ...input, externalId: `${input.externalId}#${input.id}` } : input);
  }

  /**
   * With forgetDeliveries the claim is never written down: this process does not hand a reply out twice, but
   * after a restart every reply it sent is pending again.
   */
  private async claimNext(key: string): Promise<ClaimedOutbound | null> {
    const store = this.alive();
    if (!this.plants.forgetDeliveries) return store.outbox.claimNext(key);
    const next = (await store.outbox.pending(key)).find((o) => !this.claimedHere.has(o.id)) ?? null;
    if (!next) return null;
    this.claimedHere.add(next.id);
    // Its chunks were never written down either; the pass asks again until nothing is left.
    return { ...next, sentChunks: [], morePending: true };
  }

  async ping(): Promise<void> {
    await this.alive().ping();
  }

  async close(): Promise<void> {
    if (!this.dead) await this.inner.close();
  }
}
