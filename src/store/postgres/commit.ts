// One orchestration step, in one round trip (statement-batch.ts): the fence first, then one statement per kind of
// change the step carries (lists are unnested, never a statement per row), then its changes for the feed, whose
// notifications PostgreSQL delivers only if the transaction commits.
import type pg from "pg";
import { inputHash } from "../input-hash.js";
import { FencedError, requestChanges, type Fence, type OutboundInput, type StepCommit, type StoreChange } from "../store.js";
import { encodeChange, type FeedEntry } from "./changes.js";
import { AGENT_FILES, agentFileValues } from "./files.js";
import { memoryJobValues } from "./memories.js";
import { M } from "./memory-statements.js";
import { fencedCurrent, StatementBatch } from "./statement-batch.js";
import { S, type Sql } from "./statements.js";

const run = (client: pg.ClientBase, statement: Sql, values: unknown[]) => client.query({ ...statement, values });

/**
 * Writes `step` of session `key` at time `now`, in one round trip: the fence first (it locks the lease row and
 * fails the whole batch when the lease moved on from `fence`: FencedError, and nothing of the step is written),
 * then one statement per kind of change, then its feed entries. Outside a transaction the batch is its own;
 * returns the changes it wrote to the feed, for this replica to hear once that transaction committed.
 */
export async function writeStep(client: pg.ClientBase | pg.Pool, key: string, fence: Fence, step: StepCommit, now: number): Promise<FeedEntry[]> {
  const batch = new StatementBatch();
  batch.fence(key, fence.token);
  if (step.taskCreated) {
    const t = step.taskCreated;
    batch.add(S.insertTask, [t.id, key, t.ownerId, t.requestId, now, t.options?.expiresAt ?? null, t.options?.metadataJson ?? null]);
  }
  const log = step.log ?? [];
  if (log.length > 0) {
    batch.add(S.insertLog, [
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
  if (pushed.length > 0) batch.add(S.pushFrames, [key, pushed.map((f) => f.frameId), pushed.map((f) => JSON.stringify(f))]);
  const updated = step.framesUpdated ?? [];
  if (updated.length > 0) batch.add(S.updateFrames, [updated.map((f) => f.frameId), updated.map((f) => JSON.stringify(f))]);
  const popped = step.framesPopped ?? [];
  if (popped.length > 0) batch.add(S.popFrames, [popped]);
  if (step.task) {
    const t = step.task;
    const structured = t.structuredOutput === undefined ? null : JSON.stringify(t.structuredOutput);
    batch.add(S.updateTask, [t.status, t.result ?? null, t.error ?? null, structured, now, t.id]);
  }
  updateRequests(batch, step, now);
  if (step.usage) {
    const u = step.usage;
    batch.add(S.addUsage, [u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, u.requestId, key, u.costNanoUsd]);
  }
  const files = step.files ?? [];
  if (files.length > 0) {
    const values = agentFileValues(key, files, now);
    batch.add(AGENT_FILES.blobs, values.blobs);
    batch.add(AGENT_FILES.files, values.files);
  }
  if (step.outbound && step.outbound.length > 0) batch.add(S.insertOutbound, outboundValues(key, step.outbound, now));
  if (step.newMainAgentSessionId) batch.add(S.setMainSession, [step.newMainAgentSessionId, now, key]);
  const approvals = step.approvalsCreated ?? [];
  if (approvals.length > 0) {
    batch.add(S.insertApprovals, [
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
  if (step.framesQuarantined) batch.add(S.quarantineFrames, [key, step.framesQuarantined.reason, now]);
  if (step.memoryJob) batch.add(M.insertMemoryJob, memoryJobValues(key, step.memoryJob, now));
  const changes = stepChanges(key, step);
  const feed = changes.length > 0 ? batch.add(S.feed, [changes.map(encodeChange)]) : -1;
  let results: pg.QueryResult[];
  try {
    results = await batch.send(client);
  } catch (error) {
    const current = fencedCurrent(error);
    if (current !== undefined) throw new FencedError(key, fence.token, current);
    throw error;
  }
  return feed < 0 ? [] : feedEntries(results[feed]!.rows as Array<{ id: string; at: number }>, changes);
}

/** Writes `messages` to the outbox of `key`, in one statement (inside the caller's transaction). */
export async function insertOutbound(client: pg.ClientBase, key: string, messages: OutboundInput[], now: number): Promise<void> {
  if (messages.length === 0) return;
  await run(client, S.insertOutbound, outboundValues(key, messages, now));
}

function outboundValues(key: string, messages: OutboundInput[], now: number): unknown[] {
  return [
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
    messages.map((o) => o.fileId ?? null),
  ];
}

/** Writes `changes` to the feed (their notifications go out when the transaction commits), in order. */
export async function writeChanges(client: pg.ClientBase | pg.Pool, changes: StoreChange[]): Promise<FeedEntry[]> {
  if (changes.length === 0) return [];
  const { rows } = await client.query<{ id: string; at: number }>({ ...S.feed, values: [changes.map(encodeChange)] });
  return feedEntries(rows, changes);
}

function feedEntries(rows: Array<{ id: string; at: number }>, changes: StoreChange[]): FeedEntry[] {
  return rows.map((row, i) => ({ id: row.id, at: row.at, change: changes[i]! }));
}

/** `request` then `requestsClosed`, in one statement unless an id repeats (then in order, as written). */
function updateRequests(batch: StatementBatch, step: StepCommit, now: number): void {
  const updates = requestChanges(step).map((r) => ({
    id: r.id,
    status: r.status,
    taskId: r.taskId ?? null,
    error: r.status === "failed" ? r.error : null,
    errorCode: r.status === "failed" ? r.errorCode : null,
  }));
  if (updates.length === 0) return;
  const batches = new Set(updates.map((u) => u.id)).size === updates.length ? [updates] : updates.map((u) => [u]);
  for (const group of batches) {
    const values = [group.map((u) => u.id), group.map((u) => u.status), group.map((u) => u.taskId), group.map((u) => u.error), group.map((u) => u.errorCode)];
    batch.add(S.updateRequests, [now, ...values]);
  }
}

/** What the step tells the other replicas: requests it finished, and replies it queued. */
export function stepChanges(sessionKey: string, step: StepCommit): StoreChange[] {
  const changes: StoreChange[] = [];
  for (const r of requestChanges(step)) {
    if (r.status === "done" || r.status === "failed") changes.push({ kind: "done", sessionKey, requestId: r.id });
  }
  if (step.outbound && step.outbound.length > 0) {
    changes.push({ kind: "outbound", sessionKey, requestIds: step.outbound.map((o) => o.requestId) });
  }
  return changes;
}
