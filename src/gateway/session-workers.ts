import type { Logger } from "pino";
import type { AgentStackManager } from "../runtime/stack-manager.js";
import type { RequestRecord, SessionWriter, Store } from "../store/store.js";
import { isScheduledRun } from "./held-runs.js";
import type { HeldLease, Leases } from "./leases.js";

export interface SessionWorkersDeps {
  store: Pick<Store, "leases" | "requests">;
  leases: Leases;
  stacks: AgentStackManager;
  log: Logger;
  shutdown: AbortSignal;
  /** A read-only command (/status, /approve…): answered at once, beside a running turn. */
  isSide(request: RequestRecord): boolean;
  /** /cancel or /reset: stops the running turn and goes before queued messages. */
  interrupts(request: RequestRecord): boolean;
  /** A request this process already answered as failed but could not record so (disk full): never run again. */
  settled(requestId: string): boolean;
  runTurn(request: RequestRecord, signal: AbortSignal, lease: HeldLease): Promise<void>;
  /** Runs beside the turn, under the same lease (`writer`). */
  runSide(request: RequestRecord, writer: SessionWriter): Promise<void>;
  /** A message arrived while a turn runs: tell its sender it waits its turn (once per message). */
  tellQueued(request: RequestRecord, writer: SessionWriter): Promise<void>;
  /** A request to pass over for now (a scheduled run while the task waits for the user; held-runs.ts). Absent: none. */
  holdsBack?(request: RequestRecord, writer: SessionWriter): Promise<boolean>;
  deliver(sessionKey: string): Promise<void>;
}

interface Worker {
  /** Something changed since the worker last looked: look again before letting the lease go. */
  dirty: boolean;
  /** Replies were committed since the worker's last delivery pass. */
  undelivered: boolean;
  /** The running turn, until its end is committed (its replies may still be going out); `user` sent its request. */
  turn: { request: string; user: string; abort: AbortController } | null;
  /** Read-only commands this worker started (kept, so a late look never starts one twice). */
  side: Set<string>;
  /** Messages whose senders were told they wait behind the running turn. */
  told: Set<string>;
  done: Promise<void>;
}

/**
 * Who works on which session. Any replica may be woken for a session (a request it stored, a notification from
 * another replica, the poll for orphaned work); the one that gets the session's lease runs its requests one at a
 * time, oldest first (a /cancel or /reset first), delivers its replies, and lets the lease go when nothing is
 * left. Idle sessions hold no lease, so any replica can take the next message.
 */
export class SessionWorkers {
  private readonly workers = new Map<string, Worker>();

  constructor(private readonly deps: SessionWorkersDeps) {
    // One listener for every running turn. Not AbortSignal.any (on Node 20 the long-lived shutdown signal keeps about
    // 1.2 KB of every signal combined with it), and not a listener per turn either: adding and removing one walks
    // the signal's whole list, and a thousand turns in flight made that 4 % of the process's CPU.
    const { shutdown } = deps;
    shutdown.addEventListener(
      "abort",
      () => {
        for (const worker of this.workers.values()) worker.turn?.abort.abort(shutdown.reason);
      },
      { once: true },
    );
  }

  /** There may be work for `key`: start a worker, or tell the running one to look again. */
  wake(key: string): void {
    if (this.deps.shutdown.aborted) return;
    const worker = this.workers.get(key);
    if (worker) {
      worker.dirty = true;
      void this.look(key, worker).catch((error: unknown) => this.deps.log.error({ session: key, err: error }, "could not read the session's requests"));
      return;
    }
    const created: Worker = { dirty: true, undelivered: true, turn: null, side: new Set(), told: new Set(), done: Promise.resolve() };
    this.workers.set(key, created);
    created.done = this.work(key, created).catch((error: unknown) => {
      this.deps.log.error({ session: key, err: error }, "session worker failed");
      if (this.workers.get(key) === created) this.workers.delete(key);
    });
  }

  running(key: string): boolean {
    return this.workers.has(key);
  }

  /** This replica runs `key` now (holds its lease). */
  holds(key: string): boolean {
    return this.deps.leases.holds(key);
  }

  /** A delivery pass over `key`'s replies; what is committed after it starts is sent by the next one. */
  deliver(key: string): Promise<void> {
    const worker = this.workers.get(key);
    if (worker) worker.undelivered = false;
    return this.deps.deliver(key);
  }

  /**
   * Replies were committed for `key`. The replica running its turn sends them now, while the turn goes on ("let me
   * check…" before the tool runs); another running worker sends them before it lets go; else a worker starts.
   */
  replies(key: string): void {
    const worker = this.workers.get(key);
    if (!worker) return this.wake(key);
    worker.undelivered = true;
    if (worker.turn && this.deps.leases.holds(key)) void this.deliver(key);
  }

  /**
   * The turn of `key` running request `requestId` has committed its end; what is left is sending its replies. A
   * message arriving now is not "waiting behind a running turn": it is read next, without a notice.
   */
  ended(key: string, requestId: string): void {
    const worker = this.workers.get(key);
    if (worker?.turn?.request === requestId) worker.turn = null;
  }

  /**
   * Stops the running turn of `key` (if any) because `userId` sent a /cancel or /reset: only a turn of theirs (the
   * conversation's owner's); anyone else's interruption waits its turn, and is refused then.
   */
  interrupt(key: string, userId: string): void {
    const turn = this.workers.get(key)?.turn;
    if (turn?.user === userId) turn.abort.abort();
  }

  /** Wakes every session with work nobody is doing (a missed notification, a replica that died). */
  async poll(): Promise<number> {
    const keys = await this.deps.store.leases.orphanedSessions();
    for (const key of keys) this.wake(key);
    return keys.length;
  }

  async idle(): Promise<void> {
    while (this.workers.size > 0) await Promise.allSettled([...this.workers.values()].map((w) => w.done));
  }

  private async work(key: string, worker: Worker): Promise<void> {
    // Replies committed after the last delivery pass (a notice whose commit landed late) keep the worker going too.
    while ((worker.dirty || worker.undelivered) && !this.deps.shutdown.aborted) {
      const lease = await this.deps.leases.acquire(key, () => {
        this.deps.log.warn({ session: key }, "lost the session's lease (another replica took it over); stopping this turn");
        worker.turn?.abort.abort();
      });
      if (!lease) break; // another replica works on it, and looks again before it lets go
      try {
        // Another replica had this session since this one last did: forget what was cached of it.
        if (lease.changedHands) this.deps.stacks.invalidateAll(key);
        while (worker.dirty && !lease.lost && !this.deps.shutdown.aborted) {
          worker.dirty = false;
          const next = await this.pick(await this.look(key, worker), lease.writer);
          if (!next) break;
          worker.dirty = true;
          const abort = new AbortController();
          worker.turn = { request: next.id, user: next.userId, abort };
          // The constructor's shutdown listener aborts every running turn; this one may have started after it ran.
          if (this.deps.shutdown.aborted) abort.abort(this.deps.shutdown.reason);
          try {
            await this.deps.runTurn(next, abort.signal, lease);
          } finally {
            worker.turn = null;
          }
        }
        await Promise.allSettled([...worker.side].flatMap((id) => this.sides.get(id) ?? []));
        // Replies committed since the last pass (a notice from another replica, or what was pending when it woke).
        while (worker.undelivered && !lease.lost && !this.deps.shutdown.aborted) await this.deliver(key);
      } finally {
        await this.deps.leases.release(key);
      }
      if (lease.lost) break;
    }
    // No await between the last look at `dirty` and leaving: a wake after this starts a new worker.
    this.workers.delete(key);
    this.deps.stacks.rest(key);
  }

  private readonly sides = new Map<string, Promise<void>>();

  /**
   * Reads the session's unfinished requests: answers read-only commands at once (beside a running turn), stops
   * the running turn when a /cancel or /reset waits, and returns what the worker may run next, in order.
   */
  private async look(key: string, worker: Worker): Promise<RequestRecord[]> {
    const all = (await this.deps.store.requests.unfinishedOf(key)).filter((r) => !this.deps.settled(r.id) && !worker.side.has(r.id));
    const writer = this.deps.leases.writer(key);
    if (!writer || !this.deps.leases.holds(key)) return []; // only the lease holder acts on them
    for (const request of all.filter((r) => this.deps.isSide(r) && r.status === "pending")) {
      worker.side.add(request.id);
      const run = this.deps
        .runSide(request, writer)
        .catch((error: unknown) => this.deps.log.error({ session: key, request: request.id, err: error }, "a command failed"))
        .finally(() => this.sides.delete(request.id));
      this.sides.set(request.id, run);
    }
    const queued = all.filter((r) => !this.deps.isSide(r) && r.id !== worker.turn?.request);
    const interrupting = queued.find((r) => this.deps.interrupts(r));
    // Only the turn's own user (the conversation's owner) stops it; anyone else's /cancel waits its turn.
    if (interrupting && worker.turn?.user === interrupting.userId) worker.turn.abort.abort();
    else if (worker.turn) {
      // Only its own user's: anyone else's message is refused when it runs (the chat is another member's).
      const mine = (r: RequestRecord) => r.userId === worker.turn?.user;
      for (const waiting of queued.filter((r) => r.kind === "message" && r.status === "pending" && mine(r) && !isScheduledRun(r) && !worker.told.has(r.id))) {
        worker.told.add(waiting.id);
        void this.deps
          .tellQueued(waiting, writer)
          .catch((error: unknown) => this.deps.log.warn({ session: key, err: error }, "could not tell a sender their message waits"));
      }
    }
    return interrupting ? [interrupting] : queued;
  }

  /** The first of `candidates` not held back. */
  private async pick(candidates: readonly RequestRecord[], writer: SessionWriter): Promise<RequestRecord | null> {
    for (const request of candidates) if (!(await this.deps.holdsBack?.(request, writer))) return request;
    return null;
  }
}
