// FILE_RETENTION_DAYS: a background chore that deletes the bytes of files older than the retention which nothing
// still needs (the files role decides what is needed: a request not yet finished, a reply waiting in the outbox).
// The descriptions stay, marked expired, so the context log's references still say what each file was and the
// model, view_file and GET /v1/files/{id} can answer that it has expired. Every replica may run it: a pass takes
// what it deletes under row locks (SKIP LOCKED on PostgreSQL), so two passes never fight over the same bytes.
import type { Logger } from "pino";
import type { Timers } from "../runtime/deps.js";
import { repeat } from "../runtime/repeat.js";
import type { ExpiredFiles, Store } from "../store/store.js";

export const DAY_MS = 86_400_000;
/** How often a replica looks for expired files. */
export const RETENTION_EVERY_MS = 60 * 60 * 1000;
/** Contents deleted per transaction, and transactions per pass (the rest waits for the next pass). */
export const RETENTION_BATCH = 100;
const BATCHES_PER_PASS = 50;

export interface RetentionObserver {
  expired(done: ExpiredFiles): void;
}

export interface FileRetentionDeps {
  store: Pick<Store, "files">;
  /** FILE_RETENTION_DAYS; 0 keeps every file. */
  days: number;
  now: () => number;
  timers: Timers;
  log: Logger;
  observer?: RetentionObserver;
}

export class FileRetention {
  private stopLoop: (() => void) | null = null;
  private running: Promise<ExpiredFiles> | null = null;

  constructor(private readonly deps: FileRetentionDeps) {}

  get enabled(): boolean {
    return this.deps.days > 0;
  }

  /** One pass now, then one every RETENTION_EVERY_MS, until stop(); nothing when files are kept forever. */
  start(): void {
    if (!this.enabled || this.stopLoop) return;
    const tick = () => void this.pass();
    this.stopLoop = repeat(this.deps.timers, RETENTION_EVERY_MS, tick);
    tick();
  }

  /** Stops the loop and waits for a pass under way. */
  async stop(): Promise<void> {
    this.stopLoop?.();
    this.stopLoop = null;
    await this.running;
  }

  /** Deletes what is past the retention now (a pass already under way is joined, not doubled). */
  pass(): Promise<ExpiredFiles> {
    this.running ??= this.expireAll().finally(() => (this.running = null));
    return this.running;
  }

  private async expireAll(): Promise<ExpiredFiles> {
    const { store, days, now, log, observer } = this.deps;
    const total: ExpiredFiles = { contents: 0, files: 0, bytes: 0 };
    if (days <= 0) return total;
    try {
      for (let i = 0; i < BATCHES_PER_PASS; i++) {
        const at = now();
        const done = await store.files.expire(at - days * DAY_MS, at, RETENTION_BATCH);
        total.contents += done.contents;
        total.files += done.files;
        total.bytes += done.bytes;
        if (done.contents > 0) observer?.expired(done);
        if (done.contents < RETENTION_BATCH) break;
      }
      if (total.contents > 0) log.info({ ...total, days }, "files past FILE_RETENTION_DAYS: their bytes deleted");
    } catch (error) {
      log.warn({ err: error }, `could not delete expired files; trying again in ${RETENTION_EVERY_MS / 60_000} minutes`);
    }
    return total;
  }
}
