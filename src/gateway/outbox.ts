import type { Logger } from "pino";
import { systemTimers, type Timers } from "../runtime/deps.js";
import type { Store } from "../store/store.js";
import type { GatewayObserver } from "./observer.js";
import { deliverFileEntry, type FileLink } from "./file-delivery.js";
import { SerialQueue } from "./serial-queue.js";
import { providerOf } from "./session-key.js";
import { DeliveryError, type ProviderSink } from "./types.js";

export interface OutboxDeps {
  store: Pick<Store, "outbox" | "files">;
  log: Logger;
  sinks: ReadonlyMap<string, ProviderSink>;
  /** First delay before a failed delivery is retried (doubling each time). Default 2000 ms. */
  retryBaseMs?: number;
  /** For the retry schedule; tests drive it by hand. */
  timers?: Timers;
  /** Told of each reply sent, refused for good, or put off (metrics, traces). */
  observer?: Pick<GatewayObserver, "delivered">;
  /**
   * The platform says the chat moved (a Telegram group became a supergroup): the gateway moves the
   * conversation, then delivers again under the new key.
   */
  onMoved(from: string, to: string): void;
  /** Where a file's download link points, for sinks that cannot upload files (they get the link as text). */
  fileLink?: FileLink;
  /** A reply of request `requestId` was refused for good (a scheduled run's job is paused then). */
  onUndeliverable?(requestId: string, reason: string): void;
}

const MAX_ATTEMPTS = 10;
const MAX_BACKOFF_MS = 300_000;

/**
 * The delivery side of the gateway: sends what the outbox table holds, one pass at a time per session, after
 * the step that produced it committed. A transient failure is retried with backoff; a failure the platform
 * calls permanent marks that reply undeliverable once (kept, logged, shown in /status, never sent again); a
 * platform's "wait N s" is honoured by the scheduler; a moved chat moves the conversation.
 */
export class Outbox {
  private readonly passes: SerialQueue;
  private readonly retries = new Map<string, { timer: unknown; attempt: number }>();
  private readonly timers: Timers;
  private stopped = false;

  constructor(private readonly deps: OutboxDeps) {
    this.passes = new SerialQueue((key, error) => deps.log.error({ session: key, err: error }, "delivery pass failed"));
    this.timers = deps.timers ?? systemTimers;
  }

  /**
   * Resolves when a pass over the session's pending replies has finished. While a failed send waits for its retry
   * (backoff, or the time the platform asked for), nothing is sent before it: the retry sends them all, in order.
   */
  deliver(sessionKey: string, retrying = false): Promise<void> {
    if (!retrying && this.retries.has(sessionKey)) return Promise.resolve();
    return new Promise((resolve) => {
      this.passes.push(sessionKey, async () => {
        try {
          // A pass queued behind one that failed waits for that one's retry too.
          if (retrying || !this.retries.has(sessionKey)) await this.pass(sessionKey);
        } finally {
          resolve();
        }
      });
    });
  }

  /** Everything pending for a provider that just registered (replies committed before a restart). */
  async deliverAll(prefix: string): Promise<void> {
    for (const key of new Set((await this.deps.store.outbox.pending()).map((o) => o.sessionKey))) {
      if (providerOf(key) === prefix) void this.deliver(key);
    }
  }

  idle(): Promise<void> {
    return this.passes.idle();
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.retries.values()) this.timers.clearTimeout(timer);
    this.retries.clear();
  }

  private async pass(sessionKey: string): Promise<void> {
    const { store } = this.deps;
    const sink = this.deps.sinks.get(providerOf(sessionKey));
    if (!sink) return;
    // Claimed (marked delivered) before it is sent: if the process dies while sending, the reply is not sent
    // again after the restart, nor by another replica (a reply is never shown twice). A send that fails takes
    // the mark back and is retried. The pass ends with the last reply that was pending when it was claimed: one
    // committed since is announced after its commit, and that announcement queues the next pass.
    for (let out = await store.outbox.claimNext(sessionKey); out; out = out.morePending ? await store.outbox.claimNext(sessionKey) : null) {
      const sentChunks = new Set(out.sentChunks);
      try {
        const receipt = { sentChunks, chunkSent: (index: number, platformMessageId: string) => store.outbox.recordChunk(out.id, index, platformMessageId) };
        if (out.fileId) await deliverFileEntry(store, sink, { ...out, fileId: out.fileId }, receipt, this.deps.fileLink);
        else await sink.deliver(out, receipt);
        this.deps.observer?.delivered(out, "sent");
      } catch (error) {
        if (error instanceof DeliveryError && error.disposition.kind === "permanent") {
          this.deps.observer?.delivered(out, "undeliverable");
          // This reply can never arrive; the ones after it may (another thread, a chat unblocked later).
          if (await store.outbox.markUndeliverable(out.id, error.disposition.reason)) {
            this.deps.log.error(
              { session: sessionKey, outbound: out.id, reason: error.disposition.reason },
              "reply undeliverable: the platform refused it for good; it will not be sent again",
            );
            if (out.requestId) this.deps.onUndeliverable?.(out.requestId, error.disposition.reason);
          }
          continue;
        }
        await store.outbox.markUndelivered(out.id);
        this.deps.observer?.delivered(out, "retry");
        if (error instanceof DeliveryError && error.disposition.kind === "moved") {
          this.deps.log.info({ session: sessionKey, to: error.disposition.to }, "the chat moved; moving the conversation and sending there");
          this.clearRetry(sessionKey);
          this.deps.onMoved(sessionKey, error.disposition.to);
          return;
        }
        const wait = error instanceof DeliveryError && error.disposition.kind === "retry_after" ? error.disposition.ms : null;
        this.retryLater(sessionKey, error, wait);
        return;
      }
    }
    this.clearRetry(sessionKey);
  }

  private clearRetry(sessionKey: string): void {
    const pending = this.retries.get(sessionKey);
    if (pending) this.timers.clearTimeout(pending.timer);
    this.retries.delete(sessionKey);
  }

  /** Backs off 2 s, 4 s, … up to 5 min (or waits what the platform asked), 10 times; then the next message or restart tries again. */
  private retryLater(sessionKey: string, error: unknown, waitMs: number | null): void {
    const attempt = (this.retries.get(sessionKey)?.attempt ?? 0) + 1;
    const log = this.deps.log.child({ session: sessionKey });
    if (attempt > MAX_ATTEMPTS || this.stopped) {
      log.error({ err: error }, "delivery keeps failing; it will be retried on the next message or restart");
      this.retries.delete(sessionKey);
      return;
    }
    const delay = waitMs ?? Math.min((this.deps.retryBaseMs ?? 2000) * 2 ** (attempt - 1), MAX_BACKOFF_MS);
    log.warn({ err: error, attempt, delayMs: delay }, waitMs === null ? "delivery failed; retrying" : "the platform asked to wait; delivering then");
    const pending = this.retries.get(sessionKey);
    if (pending) this.timers.clearTimeout(pending.timer);
    const timer = this.timers.setTimeout(() => void this.deliver(sessionKey, true), delay);
    // A pending retry must not keep a finished process alive.
    (timer as { unref?: () => void }).unref?.();
    this.retries.set(sessionKey, { timer, attempt });
  }
}
