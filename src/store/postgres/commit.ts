// One orchestration step, written inside the caller's transaction: the fence first, then one statement per kind
// of change the step carries (lists are unnested, never a statement per row), then its changes for the feed,
// whose notifications PostgreSQL delivers only if the transaction commits.
import type pg from "pg";
import { inputHash } from "../input-hash.js";
import { FencedError, type Fence, type OutboundInput, type StepCommit, type StoreChange } from "../store.js";
import { encodeChange, type FeedEntry } from "./changes.js";
import { queueMemoryJob } from "./memories.js";
import { S, type Sql } from "./statements.js";

const run = (client: pg.ClientBase, statement: Sql, values: unknown[]) => client.query({ ...statement, values });

/**
 * Writes `step` of session `key` at time `now`; throws FencedError (after which the caller rolls back) when its
 * lease moved on from `fence`. Returns the changes it wrote to the feed, for this replica to hear once the
 * transaction commits.
 */
export async function writeStep(client: pg.ClientBase, key: string, fence: Fence, step: StepCommit, now: number): Promise<FeedEntry[]> {
  // Locks the lease row until the commit: a takeover waits for this step instead of racing it.
  const { rows } = await run(client, S.fence, [key]);
  const current = rows[0] ? Number(rows[0].token) : null;
  if (current !== fence.token) throw new FencedError(key, fence.token, current);
  if (step.taskCreated) {
    const t = step.taskCreated;
    await run(client, S.insertTask, [t.id, key, t.ownerId, t.requestId, now, t.options?.expiresAt ?? null, t.options?.metadataJson ?? null]);
  }
  const log = step.log ?? [];
  if (log.length > 0) {
    await run(client, S.insertLog, [
      key,
      now,
      log.map((e) => e.taskId),
      log.map((e) => e.requestId),
      log.map((e) => e.frameId),
      log.map((e) => e.agentSessionId),
      log.map((e) => e.type),
      log.map((e) => JSON.stringify(e.payload)),
    ]);
  }
  // Push before pop: a frame pushed and popped in the same step (main answering at once) nets to nothing.
  const pushed = step.framesPushed ?? [];
  if (pushed.length > 0) await run(client, S.pushFrames, [key, pushed.map((f) => f.frameId), pushed.map((f) => JSON.stringify(f))]);
  const updated = step.framesUpdated ?? [];
  if (updated.length > 0) await run(client, S.updateFrames, [updated.map((f) => f.frameId), updated.map((f) => JSON.stringify(f))]);
  const popped = step.framesPopped ?? [];
  if (popped.length > 0) await run(client, S.popFrames, [popped]);
  if (step.task) {
    const t = step.task;
    const structured = t.structuredOutput === undefined ? null : JSON.stringify(t.structuredOutput);
    await run(client, S.updateTask, [t.status, t.result ?? null, t.error ?? null, structured, now, t.id]);
  }
  await updateRequests(client, step, now);
  if (step.usage) {
    const u = step.usage;
    await run(client, S.addUsage, [u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, u.requestId, key, u.costNanoUsd]);
  }
  await insertOutbound(client, key, step.outbound ?? [], now);
  if (step.newMainAgentSessionId) await run(client, S.setMainSession, [step.newMainAgentSessionId, now, key]);
  const approvals = step.approvalsCreated ?? [];
  if (approvals.length > 0) {
    await run(client, S.insertApprovals, [
      key,
      now,
      approvals.map((a) => a.id),
      approvals.map((a) => a.taskId),
      approvals.map((a) => a.frameId),
      approvals.map((a) => a.toolUseId),
      approvals.map((a) => a.toolName),
      approvals.map((a) => JSON.stringify(a.input)),
      approvals.map((a) => inputHash(a.input)),
      approvals.map((a) => a.agent),
      approvals.map((a) => a.ownerId),
      approvals.map((a) => a.timeoutMs),
      approvals.map((a) => a.requestId),
    ]);
  }
  if (step.framesQuarantined) await run(client, S.quarantineFrames, [key, step.framesQuarantined.reason, now]);
  if (step.memoryJob) await queueMemoryJob(client, key, step.memoryJob, now);
  return writeChanges(client, stepChanges(key, step));
}

/** Writes `messages` to the outbox of `key`, in one statement (inside the caller's transaction). */
export async function insertOutbound(client: pg.ClientBase, key: string, messages: OutboundInput[], now: number): Promise<void> {
  if (messages.length === 0) return;
  await run(client, S.insertOutbound, [
    key,
    now,
    messages.map((o) => o.id),
    messages.map((o) => o.requestId),
    messages.map((o) => o.taskId),
    messages.map((o) => o.agent),
    messages.map((o) => o.depth),
    messages.map((o) => o.text),
    messages.map((o) => o.kind),
    messages.map((o) => o.approvalId ?? null),
  ]);
}

/** Writes `changes` to the feed (their notifications go out when the transaction commits), in order. */
export async function writeChanges(client: pg.ClientBase | pg.Pool, changes: StoreChange[]): Promise<FeedEntry[]> {
  if (changes.length === 0) return [];
  const { rows } = await client.query<{ id: string; at: number }>({ ...S.feed, values: [changes.map(encodeChange)] });
  return rows.map((row, i) => ({ id: row.id, at: row.at, change: changes[i]! }));
}

/** `request` then `requestsClosed`, in one statement unless an id repeats (then in order, as written). */
async function updateRequests(client: pg.ClientBase, step: StepCommit, now: number): Promise<void> {
  const updates = [
    ...(step.request ? [{ ...step.request, taskId: step.request.taskId ?? null }] : []),
    ...(step.requestsClosed ?? []).map((r) => ({ ...r, taskId: r.taskId ?? null })),
  ];
  if (updates.length === 0) return;
  const batches = new Set(updates.map((u) => u.id)).size === updates.length ? [updates] : updates.map((u) => [u]);
  for (const batch of batches) {
    await run(client, S.updateRequests, [
      now,
      batch.map((u) => u.id),
      batch.map((u) => u.status),
      batch.map((u) => u.taskId),
      batch.map((u) => u.error ?? null),
    ]);
  }
}

/** What the step tells the other replicas: requests it finished, and replies it queued. */
export function stepChanges(sessionKey: string, step: StepCommit): StoreChange[] {
  const changes: StoreChange[] = [];
  for (const r of [...(step.request ? [step.request] : []), ...(step.requestsClosed ?? [])]) {
    if (r.status === "done" || r.status === "failed") changes.push({ kind: "done", sessionKey, requestId: r.id });
  }
  if (step.outbound && step.outbound.length > 0) {
    changes.push({ kind: "outbound", sessionKey, requestIds: step.outbound.map((o) => o.requestId) });
  }
  return changes;
}
