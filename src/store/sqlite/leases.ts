// Leases on a SQLite file: in the leases table when several processes may share the file, or in this process's
// memory (ProcessLeases) when it holds the file exclusively. Either way the same rules (the contract runs on both).
import { toLease, type Row } from "../rows.js";
import type { Lease, LeaseRecord, LeaseStore } from "../store.js";
import type { GroupCommit } from "./group-commit.js";
import type { ProcessLeases } from "./process-leases.js";
import type { Statements } from "./statements.js";

export class SqliteLeases implements LeaseStore {
  constructor(
    private readonly stmts: Statements,
    private readonly writes: GroupCommit,
    private readonly now: () => number,
    /** With the process lock, leases live in memory; else in the leases table. */
    private readonly inProcess: ProcessLeases | null,
  ) {}

  /** The lease on `key` as it stands now (what a fenced step is checked against, inside its transaction). */
  current(key: string): LeaseRecord | null {
    if (this.inProcess) return this.inProcess.get(key);
    const row = this.stmts.lease.get(key) as Row | undefined;
    return row ? toLease(row) : null;
  }

  acquire(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    if (this.inProcess) return Promise.resolve(this.inProcess.acquire(key, holder, ttlMs, this.now()));
    return this.writes.run(() => {
      const now = this.now();
      const row = this.stmts.acquireLease.get({ key, holder, expires: now + ttlMs, now }) as Row | undefined;
      return row ? (toLease(row) as Lease) : null;
    });
  }

  async renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    if (this.inProcess) return this.inProcess.renew(key, holder, token, this.now() + ttlMs);
    return this.stmts.renewLease.run(this.now() + ttlMs, key, holder, token).changes === 1;
  }

  async release(key: string, holder: string, token: number): Promise<void> {
    if (this.inProcess) return this.inProcess.release(key, holder, token);
    await this.writes.run(() => this.stmts.releaseLease.run(key, holder, token));
  }

  async get(key: string): Promise<LeaseRecord | null> {
    return this.current(key);
  }

  /** Sessions with work (unfinished requests, replies not yet sent) whose lease nobody holds now. */
  async orphanedSessions(): Promise<string[]> {
    const now = this.now();
    return (this.stmts.withWork.all() as Row[]).map((r) => String(r.key)).filter((key) => (this.current(key)?.expiresAt ?? 0) <= now);
  }
}
