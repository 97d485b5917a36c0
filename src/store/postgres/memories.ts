// Long-term memory on PostgreSQL: a user's memories (tsvector-searched), and the queue of extraction jobs that
// several replicas claim from (one statement with FOR UPDATE SKIP LOCKED per claim).
import type pg from "pg";
import { byRelevanceThenRecency, candidateCount, searchWords } from "../memory-search.js";
import { toMemory, toMemoryJob, toMemoryJobStatus, type Row } from "../rows.js";
import type { MemoryChanges, MemoryJob, MemoryJobStatus, MemoryRecord, MemoryStore } from "../store.js";
import { transaction } from "./connection.js";
import { M } from "./memory-statements.js";
import type { Sql } from "./statements.js";

const run = (client: pg.ClientBase, statement: Sql, values: unknown[]) => client.query<Row>({ ...statement, values });

/** The values of M.insertMemoryJob: the extraction a finished task queues, with its step; a second is ignored. */
export function memoryJobValues(sessionKey: string, job: { taskId: string; userId: string }, now: number): unknown[] {
  return [job.taskId, job.userId, sessionKey, now];
}

export class PostgresMemories implements MemoryStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => number,
  ) {}

  private async all(statement: Sql, values: unknown[]): Promise<Row[]> {
    return (await this.pool.query<Row>({ ...statement, values })).rows;
  }

  async list(userId: string): Promise<MemoryRecord[]> {
    return (await this.all(M.memoriesOf, [userId])).map(toMemory);
  }

  async search(userId: string, query: string, limit: number): Promise<MemoryRecord[]> {
    if (limit <= 0) return [];
    const words = searchWords(query);
    if (words.length === 0) return (await this.all(M.recentMemories, [userId, limit])).map(toMemory);
    const found = await this.all(M.searchMemories, [userId, words, candidateCount(limit)]);
    return byRelevanceThenRecency(
      found.map((r) => ({ memory: toMemory(r), score: Number(r.score), seq: Number(r.seq) })),
      limit,
    );
  }

  save(userId: string, changes: MemoryChanges): Promise<void> {
    const now = this.now();
    return transaction(this.pool, (client) => applyChanges(client, userId, null, changes, now));
  }

  async delete(userId: string, ids?: string[]): Promise<number> {
    if (ids !== undefined && ids.length === 0) return 0;
    const { rowCount } =
      ids === undefined ? await this.pool.query({ ...M.deleteAllMemories, values: [userId] }) : await this.pool.query({ ...M.deleteMemoriesById, values: [userId, ids] });
    return rowCount ?? 0;
  }

  async claimJob(holder: string, now: number, claimMs: number, maxAttempts: number): Promise<MemoryJob | null> {
    // Each pass claims one due job or gives one up (then looks again): the number of passes is bounded by the jobs.
    for (;;) {
      const [row] = await this.all(M.claimMemoryJob, [holder, now, claimMs, maxAttempts]);
      if (!row) return null;
      if (row.status === "running") return toMemoryJob(row);
    }
  }

  finishJob(taskId: string, holder: string, changes: MemoryChanges | null): Promise<boolean> {
    const now = this.now();
    return transaction(this.pool, async (client) => {
      // Locks the job: a replica claiming it now (its claim ran out) waits for this, then finds it done.
      const { rows } = await run(client, M.holdMemoryJob, [taskId, holder]);
      if (!rows[0]) return false;
      if (changes) await applyChanges(client, String(rows[0].user_id), taskId, changes, now);
      await run(client, M.finishMemoryJob, [taskId, now]);
      return true;
    });
  }

  async retryJob(taskId: string, holder: string, error: string, retryAt: number): Promise<void> {
    await this.pool.query({ ...M.retryMemoryJob, values: [retryAt, error, this.now(), taskId, holder] });
  }

  async pendingJobs(): Promise<MemoryJobStatus[]> {
    return (await this.all(M.pendingMemoryJobs, [])).map(toMemoryJobStatus);
  }
}

/** Writes `changes` inside the caller's transaction: removals first, so a fact can replace another. */
async function applyChanges(client: pg.ClientBase, userId: string, taskId: string | null, changes: MemoryChanges, now: number): Promise<void> {
  if (changes.remove?.length) await run(client, M.deleteMemoriesById, [userId, changes.remove]);
  // One row per id (the last one given), as one INSERT cannot write the same row twice.
  const add = [...new Map((changes.add ?? []).map((m) => [m.id, m])).values()];
  if (add.length > 0) {
    await run(client, M.upsertMemories, [userId, taskId, now, add.map((m) => m.id), add.map((m) => m.text), add.map((m) => m.kind ?? null)]);
  }
  const u = changes.usage;
  if (u) await run(client, M.addSessionUsage, [u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, u.sessionKey, u.costNanoUsd]);
}
