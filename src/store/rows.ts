// Rows read back into the Store's records, for both backends: their tables have the same columns, and JSON is
// stored as TEXT and parsed here. What cannot be read throws CorruptStateError, and the store decides whether to
// quarantine the row or fail its session.
import { nanoToUsd } from "../llm/prices.js";
import { frameRecordSchema } from "./frame-schema.js";
import type { OperationalCounts, SessionError, SessionSummary } from "./roles/operations.js";
import type { QuotaRefusalRecord, UsageDay, UsageScope } from "./roles/usage.js";
import {
  failureCodeOf,
  CorruptStateError,
  type ApprovalRecord,
  type ApprovalStatus,
  type FrameRecord,
  type IdempotencyRecord,
  type LeaseRecord,
  type LogEntry,
  type MemoryJob,
  type MemoryRecord,
  type OutboundRecord,
  type QuarantineRecord,
  type RequestRecord,
  type SessionRecord,
  type SessionUsage,
  type TaskOptions,
  type TaskRecord,
  type UndeliverableRecord,
  type Usage,
} from "./store.js";

export type Row = Record<string, unknown>;

export function nullable(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

export function toRequest(r: Row): RequestRecord {
  return {
    id: String(r.id),
    sessionKey: String(r.session_key),
    externalId: String(r.external_id),
    kind: String(r.kind) as RequestRecord["kind"],
    userId: String(r.user_id),
    text: String(r.text),
    status: String(r.status) as RequestRecord["status"],
    taskId: nullable(r.task_id),
    error: nullable(r.error),
    errorCode: failureCodeOf(r.error_code),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    cacheReadTokens: Number(r.cache_read_tokens ?? 0),
    cacheWriteTokens: Number(r.cache_write_tokens ?? 0),
    costUsd: nanoToUsd(Number(r.cost_nano_usd ?? 0)),
    taskOptions: taskOptionsOf(r),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** The task options a request row carries; the metadata stays the text it was stored as. */
function taskOptionsOf(r: Row): TaskOptions | null {
  const expiresAt = r.task_expires_at === null || r.task_expires_at === undefined ? null : Number(r.task_expires_at);
  const metadataJson = nullable(r.task_metadata);
  return expiresAt === null && metadataJson === null ? null : { expiresAt, metadataJson };
}

export function toSession(r: Row): SessionRecord {
  return { key: String(r.key), ownerId: nullable(r.owner_id), mainAgentSessionId: String(r.main_agent_session_id), createdAt: Number(r.created_at) };
}

export function toOutbound(r: Row): OutboundRecord {
  return {
    id: String(r.id),
    sessionKey: String(r.session_key),
    requestId: nullable(r.request_id),
    taskId: nullable(r.task_id),
    agent: String(r.agent),
    depth: Number(r.depth),
    text: String(r.text),
    kind: String(r.kind) as OutboundRecord["kind"],
    approvalId: nullable(r.approval_id),
    ...(r.file_id === null || r.file_id === undefined ? {} : { fileId: String(r.file_id) }),
    createdAt: Number(r.created_at),
  };
}

export function toUndeliverable(r: Row): UndeliverableRecord {
  return { ...toOutbound(r), failure: String(r.failure), failedAt: Number(r.failed_at) };
}

export function toApproval(r: Row): ApprovalRecord {
  return {
    id: String(r.id),
    sessionKey: String(r.session_key),
    taskId: nullable(r.task_id),
    requestId: nullable(r.request_id),
    frameId: String(r.frame_id),
    toolUseId: String(r.tool_use_id),
    toolName: String(r.tool_name),
    input: parseObject(r.input, `approval ${String(r.id)}`),
    agent: String(r.agent),
    ownerId: String(r.owner_id),
    status: String(r.status) as ApprovalStatus,
    requestedAt: Number(r.requested_at),
    expiresAt: Number(r.expires_at),
    decidedBy: nullable(r.decided_by),
    decidedAt: r.decided_at === null || r.decided_at === undefined ? null : Number(r.decided_at),
  };
}

export function toLogEntry(r: Row): LogEntry {
  let payload: unknown;
  try {
    payload = JSON.parse(String(r.payload));
  } catch {
    throw new CorruptStateError(`context log row ${String(r.seq)} of ${String(r.session_key)} is not valid JSON`);
  }
  return {
    seq: Number(r.seq),
    sessionKey: String(r.session_key),
    taskId: nullable(r.task_id),
    requestId: nullable(r.request_id),
    frameId: nullable(r.frame_id),
    agentSessionId: nullable(r.agent_session_id),
    type: String(r.type) as LogEntry["type"],
    payload,
    createdAt: Number(r.created_at),
  };
}

/** A stored frame, validated; a frame that does not parse fails its whole session (the caller decides). */
export function toFrame(r: Row, sessionKey: string): FrameRecord {
  let data: unknown;
  try {
    data = JSON.parse(String(r.data));
  } catch {
    throw new CorruptStateError(`stored frame ${String(r.frame_id)} of ${sessionKey} is not valid JSON`);
  }
  const parsed = frameRecordSchema.safeParse(data);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new CorruptStateError(`stored frame ${String(r.frame_id)} of ${sessionKey} is invalid (${where})`);
  }
  return parsed.data;
}

/**
 * A task row. Its structured output and metadata are parsed here; when one cannot be, the task keeps working without
 * it and `unreadable` says why, for the store to quarantine the value.
 */
export function toTask(r: Row): { task: TaskRecord; unreadable: string | null } {
  const problems: string[] = [];
  let structuredOutput: unknown = null;
  if (r.structured_output !== null && r.structured_output !== undefined) {
    try {
      structuredOutput = JSON.parse(String(r.structured_output));
    } catch {
      problems.push(`structured_output is not valid JSON: ${String(r.structured_output).slice(0, 2000)}`);
    }
  }
  let metadata: Record<string, unknown> | null = null;
  if (r.metadata !== null && r.metadata !== undefined) {
    try {
      metadata = parseObject(r.metadata, `the metadata of task ${String(r.id)}`);
    } catch (error) {
      problems.push(`${(error as Error).message}: ${String(r.metadata).slice(0, 2000)}`);
    }
  }
  return {
    unreadable: problems.length > 0 ? problems.join("; ") : null,
    task: {
      id: String(r.id),
      sessionKey: String(r.session_key),
      ownerId: String(r.owner_id),
      status: String(r.status) as TaskRecord["status"],
      requestId: nullable(r.request_id),
      result: nullable(r.result),
      error: nullable(r.error),
      structuredOutput,
      expiresAt: r.expires_at === null || r.expires_at === undefined ? null : Number(r.expires_at),
      metadata,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    },
  };
}

export function toIdempotency(r: Row): IdempotencyRecord {
  return {
    userId: String(r.user_id),
    key: String(r.key),
    requestId: String(r.request_id),
    sessionKey: String(r.session_key),
    fingerprint: String(r.fingerprint),
    response: nullable(r.response),
  };
}

export function toQuarantine(r: Row): QuarantineRecord {
  return {
    kind: String(r.kind) as QuarantineRecord["kind"],
    rowId: String(r.row_id),
    sessionKey: nullable(r.session_key),
    reason: String(r.reason),
    createdAt: Number(r.created_at),
  };
}

/** A session's token totals; zeros for a session that does not exist. */
export function toSessionUsage(r: Row | null): SessionUsage {
  return {
    inputTokens: Number(r?.input_tokens ?? 0),
    outputTokens: Number(r?.output_tokens ?? 0),
    cacheReadTokens: Number(r?.cache_read_tokens ?? 0),
    cacheWriteTokens: Number(r?.cache_write_tokens ?? 0),
    sinceReset: Number(r?.tokens_since_reset ?? 0),
    costUsd: nanoToUsd(Number(r?.cost_nano_usd ?? 0)),
    costSinceResetUsd: nanoToUsd(Number(r?.cost_since_reset_nano_usd ?? 0)),
  };
}

export function toTaskUsage(r: Row): Usage {
  return {
    inputTokens: Number(r.i),
    outputTokens: Number(r.o),
    cacheReadTokens: Number(r.r),
    cacheWriteTokens: Number(r.w),
    costUsd: nanoToUsd(Number(r.c)),
  };
}

/**
 * A row of the operator's session listing (the same columns on both backends). `stack` is the agent names bottom
 * first, as a JSON array (SQLite) or a text[] (PostgreSQL); a frame whose name cannot be read shows as "?".
 */
export function toSessionSummary(r: Row): SessionSummary {
  const key = String(r.key);
  const names: unknown[] = Array.isArray(r.stack) ? r.stack : (JSON.parse(String(r.stack ?? "[]")) as unknown[]);
  return {
    key,
    provider: key.split(":")[0]!,
    ownerId: nullable(r.owner_id),
    stack: names.map((n) => (n === null || n === undefined ? "?" : String(n))),
    status: r.task_status === null || r.task_status === undefined ? "idle" : (String(r.task_status) as SessionSummary["status"]),
    taskId: nullable(r.task_id),
    lastActivity: Number(r.last_activity),
    costUsd: nanoToUsd(Number(r.cost_nano_usd)),
    tokens: Number(r.tokens),
    pendingApprovals: Number(r.pending_approvals),
  };
}

export function toOperationalCounts(r: Row): OperationalCounts {
  return {
    activeStacks: Number(r.active_stacks),
    queuedMessages: Number(r.queued_messages),
    pendingApprovals: Number(r.pending_approvals),
    undeliverable: Number(r.undeliverable),
    outboxBacklog: Number(r.outbox_backlog),
  };
}

export function toSessionError(r: Row): SessionError {
  return { at: Number(r.at), source: String(r.source) as SessionError["source"], id: String(r.id), error: String(r.error) };
}

/** An agent_session log row as an open agent session; its payload is read like any log row's. */
export function toOpenAgentSession(r: Row, sessionKey: string): { agentSessionId: string; agentName: string } {
  const entry = toLogEntry({ ...r, session_key: sessionKey });
  const name = (entry.payload as { agent_name?: unknown } | null)?.agent_name;
  return { agentSessionId: String(r.agent_session_id), agentName: String(name) };
}

export function toLease(r: Row): LeaseRecord {
  return { key: String(r.key), holder: String(r.holder), token: Number(r.token), expiresAt: Number(r.expires_at) };
}

export function toMemory(r: Row): MemoryRecord {
  return {
    id: String(r.id),
    userId: String(r.user_id),
    text: String(r.text),
    kind: nullable(r.kind),
    taskId: nullable(r.task_id),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export function toMemoryJob(r: Row): MemoryJob {
  return { taskId: String(r.task_id), userId: String(r.user_id), sessionKey: String(r.session_key), attempts: Number(r.attempts) };
}

/** A job as pendingMemoryJobs lists it. */
export function toMemoryJobStatus(r: Row): MemoryJob & { status: string; nextAt: number; error: string | null } {
  return { ...toMemoryJob(r), status: String(r.status), nextAt: Number(r.next_at), error: nullable(r.error) };
}

/** A log row for an export: an unreadable payload is exported as the text it is, instead of failing the export. */
export function toExportedLogEntry(r: Row): LogEntry {
  try {
    return toLogEntry(r);
  } catch {
    return { ...toLogEntry({ ...r, payload: "null" }), payload: String(r.payload) };
  }
}

function parseObject(value: unknown, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch {
    throw new CorruptStateError(`stored JSON of ${what} is not valid`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new CorruptStateError(`stored JSON of ${what} is not an object`);
  return parsed as Record<string, unknown>;
}

/** An outbox row as a user's data export shows it. */
export function toExportedOutbound(o: Row): { id: string; requestId: string | null; agent: string; text: string; kind: string; createdAt: number } {
  return {
    id: String(o.id),
    requestId: o.request_id === null ? null : String(o.request_id),
    agent: String(o.agent),
    text: String(o.text),
    kind: String(o.kind),
    createdAt: Number(o.created_at),
  };
}

/** A daily usage counter (the quotas'). */
export function quotaRefusal(r: Row): QuotaRefusalRecord {
  return {
    requestId: String(r.request_id),
    sessionKey: String(r.session_key),
    userId: String(r.user_id),
    limit: String(r.limit_name),
    resetsAt: Number(r.resets_at),
    createdAt: Number(r.created_at),
  };
}

export function usageDay(r: Row): UsageDay {
  return {
    scope: String(r.scope) as UsageScope,
    subject: String(r.subject),
    day: String(r.day),
    messages: Number(r.messages),
    costNanoUsd: Number(r.cost_nano_usd),
    updatedAt: Number(r.updated_at),
  };
}
