// Long-term memory on SQLite: a user's memories (FTS5-searched), and the queue of extraction jobs. One process
// per file and no await inside a transaction, so a read-then-write (a claim) cannot interleave with another.
import type Database from "better-sqlite3";
import { byRelevanceThenRecency, candidateCount, fts5Query, searchWords } from "../memory-search.js";
import { toMemory, toMemoryJob, toMemoryJobStatus, type Row } from "../rows.js";
import type { MemoryChanges, MemoryJob, MemoryJobStatus, MemoryRecord, MemoryStore } from "../store.js";
import type { Statements } from "./statements.js";

export class SqliteMemories implements MemoryStore {
  constructor(
    private readonly db: Database.Database,
    private readonly stmts: Statements,
    private readonly now: () => number,
  ) {}

  async list(userId: string): Promise<MemoryRecord[]> {
    return (this.stmts.memoriesOf.all(userId) as Row[]).map(toMemory);
  }

  async search(userId: string, query: string, limit: number): Promise<MemoryRecord[]> {
    if (limit <= 0) return [];
    const words = searchWords(query);
    if (words.length === 0) return (this.stmts.recentMemories.all(userId, limit) as Row[]).map(toMemory);
    const rows = this.stmts.searchMemories.all(fts5Query(words), userId, candidateCount(limit)) as Row[];
    return byRelevanceThenRecency(
      rows.map((r) => ({ memory: toMemory(r), score: Number(r.score), seq: Number(r.seq) })),
      limit,
    );
  }

  async save(userId: string, changes: MemoryChanges): Promise<void> {
    this.db.transaction(() => this.apply(userId, null, changes))();
  }

  async delete(userId: string, ids?: string[]): Promise<number> {
    if (ids === undefined) return this.stmts.deleteAllMemories.run(userId).changes;
    if (ids.length === 0) return 0;
    return this.stmts.deleteMemoriesById.run(userId, JSON.stringify(ids)).changes;
  }

  /** Writes `changes` inside the caller's transaction: removals first, so a fact can replace another. */
  private apply(userId: string, taskId: string | null, changes: MemoryChanges): void {
    const s = this.stmts;
    const now = this.now();
    if (changes.remove?.length) s.deleteMemoriesById.run(userId, JSON.stringify(changes.remove));
    for (const m of changes.add ?? []) s.upsertMemory.run(m.id, userId, m.text, m.kind ?? null, taskId, now, now);
    const u = changes.usage;
    if (u) {
      // Counted like a step's usage: the session's totals and its budget since the last /reset.
      const total = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
      s.addSessionUsage.run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, total, u.costNanoUsd, u.costNanoUsd, u.sessionKey);
    }
  }

  /** Queues the extraction for a finished task, inside the step's transaction; a second one is ignored. */
  queueJob(sessionKey: string, job: { taskId: string; userId: string }, now: number): void {
    this.stmts.insertMemoryJob.run(job.taskId, job.userId, sessionKey, now, now, now);
  }

  async claimJob(holder: string, now: number, claimMs: number, maxAttempts: number): Promise<MemoryJob | null> {
    const s = this.stmts;
    return this.db.transaction((): MemoryJob | null => {
      for (;;) {
        const due = s.dueMemoryJob.get({ now }) as Row | undefined;
        if (!due) return null;
        const attempts = Number(due.attempts);
        if (attempts >= maxAttempts) {
          const last = due.error === null || due.error === undefined ? "" : `; last error: ${String(due.error)}`;
          s.failMemoryJob.run(`gave up after ${attempts} attempts${last}`, now, String(due.task_id));
          continue;
        }
        return toMemoryJob(s.claimMemoryJob.get(holder, now + claimMs, now, String(due.task_id)) as Row);
      }
    })();
  }

  async finishJob(taskId: string, holder: string, changes: MemoryChanges | null): Promise<boolean> {
    const s = this.stmts;
    return this.db.transaction((): boolean => {
      const job = s.heldMemoryJob.get(taskId, holder) as Row | undefined;
      if (!job) return false;
      if (changes) this.apply(String(job.user_id), taskId, changes);
      s.finishMemoryJob.run(this.now(), taskId);
      return true;
    })();
  }

  async retryJob(taskId: string, holder: string, error: string, retryAt: number): Promise<void> {
    this.stmts.retryMemoryJob.run(retryAt, error, this.now(), taskId, holder);
  }

  async pendingJobs(): Promise<MemoryJobStatus[]> {
    return (this.stmts.pendingMemoryJobs.all() as Row[]).map(toMemoryJobStatus);
  }
}
