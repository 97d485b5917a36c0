// Rows read back from SQLite into the Store's records. Stored JSON is parsed here; what cannot be read
// throws CorruptStateError (the store decides whether to quarantine the row or fail its session).
import {
  CorruptStateError,
  type ApprovalRecord,
  type ApprovalStatus,
  type Lease,
  type LogEntry,
  type OutboundRecord,
  type RequestRecord,
  type SessionRecord,
} from "../store.js";

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
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    cacheReadTokens: Number(r.cache_read_tokens ?? 0),
    cacheWriteTokens: Number(r.cache_write_tokens ?? 0),
    createdAt: Number(r.created_at),
  };
}

export function toApproval(r: Row): ApprovalRecord {
  return {
    id: String(r.id),
    sessionKey: String(r.session_key),
    taskId: nullable(r.task_id),
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
    createdAt: Number(r.created_at),
  };
}

function parseObject(value: unknown, what: string): Record<string, unknown> {
  const parsed = parseJson(value, what);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new CorruptStateError(`stored JSON of ${what} is not an object`);
  return parsed as Record<string, unknown>;
}

function parseJson(value: unknown, what: string): unknown {
  try {
    return JSON.parse(String(value));
  } catch {
    throw new CorruptStateError(`stored JSON of ${what} is not valid`);
  }
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

export function toLease(r: Row): Lease {
  return { key: String(r.key), holder: String(r.holder), token: Number(r.token), expiresAt: Number(r.expires_at) };
}
