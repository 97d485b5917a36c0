// The gateway's bookkeeping of requests in this process: who waits for which request's end, which ones run or are
// being stored here, how the ones this process failed ended, which turns a /cancel cut off, and which ones another
// replica took over. One place, so that a request's end is told exactly once.
import { requestChanges, type RequestRecord, type SessionWriter, type Store } from "../store/store.js";
import { storedOutcome, type FailureCode, type RequestOutcome } from "./failures.js";
import { UnrecordedFailures } from "./unrecorded-failures.js";

export class RequestBook {
  private readonly waiters = new Map<string, Array<(outcome: RequestOutcome) => void>>();
  /** Requests this process is running or delivering: their end is told by the run, not by the change feed. */
  private readonly local = new Set<string>();
  /** Requests this process is storing: it wakes their session itself, so their change needs no second wake-up. */
  private readonly storing = new Set<string>();
  /** Requests this process ended as failed, and why (the rest read it from the store). */
  private readonly failures = new Map<string, FailureCode>();
  /** Sessions whose running turn a /cancel or /reset just cut off (the command then says what it stopped). */
  private readonly cut = new Set<string>();
  /** Requests this process stopped because another replica took their session over: that replica finishes them. */
  private readonly handedOver = new Set<string>();
  /** Failed requests the store could not yet record as failed (disk full): terminal all the same. */
  readonly unrecorded: UnrecordedFailures;

  constructor(
    private readonly store: Pick<Store, "requests">,
    retryMs: number,
  ) {
    this.unrecorded = new UnrecordedFailures(retryMs);
  }

  /** Stores a request through `insert`, marked as this process's own while it does. */
  storingOf<T>(requestId: string, insert: () => Promise<T>): Promise<T> {
    this.storing.add(requestId);
    return insert().finally(() => this.storing.delete(requestId));
  }

  isStoring(requestId: string): boolean {
    return this.storing.has(requestId);
  }

  /** Resolves once `requestId` ended (see Gateway.whenDone). */
  async whenDone(requestId: string): Promise<RequestOutcome> {
    const done = new Promise<RequestOutcome>((resolve) => {
      const list = this.waiters.get(requestId) ?? [];
      list.push(resolve);
      this.waiters.set(requestId, list);
    });
    if (this.unrecorded.has(requestId) && !this.local.has(requestId)) this.settle(requestId, { status: "failed", code: "store_failing" });
    else await this.settleIfDone(requestId);
    return done;
  }

  /** Someone here waits for a request another process runs: its end comes through the store. */
  awaitedFromElsewhere(requestId: string): boolean {
    return !this.local.has(requestId) && this.waiters.has(requestId);
  }

  /** Tells the waiters of requests another process ended (the poll). */
  async settleEnded(): Promise<void> {
    for (const id of this.waiters.keys()) await this.settleIfDone(id);
  }

  async settleIfDone(requestId: string): Promise<void> {
    if (this.local.has(requestId) || !this.waiters.has(requestId)) return;
    const request = await this.store.requests.get(requestId);
    if (request && (request.status === "done" || request.status === "failed")) this.settle(requestId, storedOutcome(request));
  }

  private settle(requestId: string, outcome: RequestOutcome): void {
    const list = this.waiters.get(requestId) ?? [];
    this.waiters.delete(requestId);
    for (const resolve of list) resolve(outcome);
  }

  /** Runs `request` here; then its waiters are told how it ended (unless another replica took it over). */
  async running(request: RequestRecord, work: () => Promise<void>): Promise<void> {
    this.local.add(request.id);
    try {
      await work();
    } finally {
      this.local.delete(request.id);
      const code = this.unrecorded.has(request.id) ? "store_failing" : this.failures.get(request.id);
      this.failures.delete(request.id);
      // Not done here: its waiters hear of its end from the replica that took it over (the change feed or the poll).
      if (!this.handedOver.delete(request.id)) this.settle(request.id, code ? { status: "failed", code } : { status: "finished" });
    }
  }

  /**
   * `writer`, telling this book the failures its steps commit for requests running here (a door's, the engine's,
   * a /cancel's), so their waiters get the code the store now holds, as a waiter on another replica reads it.
   */
  recording(writer: SessionWriter): SessionWriter {
    return {
      sessionKey: writer.sessionKey,
      get fence() {
        return writer.fence;
      },
      commit: async (step) => {
        await writer.commit(step);
        for (const r of requestChanges(step)) {
          if (r.status === "failed" && this.local.has(r.id)) this.failures.set(r.id, r.errorCode);
        }
      },
    };
  }

  failed(requestId: string, code: FailureCode): void {
    this.failures.set(requestId, code);
  }

  /** The store could not record `requestId`'s end: it is failed all the same, and written once the store can. */
  unrecordedFailure(requestId: string, writer: SessionWriter, error: string): void {
    this.failures.set(requestId, "store_failing");
    this.unrecorded.add(requestId, writer, error, "store_failing");
  }

  handOver(requestId: string): void {
    this.handedOver.add(requestId);
  }

  isHandedOver(requestId: string): boolean {
    return this.handedOver.has(requestId);
  }

  cutOff(sessionKey: string): void {
    this.cut.add(sessionKey);
  }

  /** Whether a /cancel or /reset just cut the session's turn off (asked once, by that command). */
  takeCut(sessionKey: string): boolean {
    return this.cut.delete(sessionKey);
  }
}
