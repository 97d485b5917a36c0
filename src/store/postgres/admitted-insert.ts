// Storing a message under an owner rule and nothing else (no idempotency key, no private session, no files) — what
// every chat message is — in one round trip instead of a transaction of six: the conversation's lock, the look for
// a twin, and the insert that reads the owner and stores only what it admits, sent as one simple query (one
// transaction, statement-batch.ts). The outcome is the one insertRequestWith reaches with the same statements.
import type pg from "pg";
import { ownerAdmits, type InsertResult, type NewRequest } from "../store.js";
import { toRequest, type Row } from "../rows.js";
import { encodeChange, type FeedEntry } from "./changes.js";
import { StatementBatch } from "./statement-batch.js";
import { S } from "./statements.js";

/** True when `input` carries an owner rule and needs nothing else that takes a statement of its own. */
export function onlyOwnerRule(input: NewRequest): boolean {
  return input.owner !== undefined && input.idempotency === undefined && input.claimSession === undefined && (input.files?.length ?? 0) === 0;
}

/** $1…$10 of S.insertRequest and S.insertAdmittedRequest: the request's row and the change that announces it. */
export function requestValues(input: NewRequest, now: number, change: string): unknown[] {
  const options = input.taskOptions;
  return [input.id, input.sessionKey, input.externalId, input.kind, input.userId, input.text, now, change, options?.expiresAt ?? null, options?.metadataJson ?? null];
}

/** Stores `input` (onlyOwnerRule) in one round trip; the change it announces is added to `announced`. */
export async function insertAdmittedRequest(pool: pg.Pool, input: NewRequest, now: number, announced: FeedEntry[]): Promise<InsertResult> {
  const change = { kind: "request", sessionKey: input.sessionKey, requestId: input.id } as const;
  const batch = new StatementBatch();
  // Of two members writing at once, the second waits here and then sees the first one's request.
  batch.add(S.lockConversation, [input.sessionKey]);
  // A message seen before is a duplicate whoever owns the conversation now.
  const seenAt = batch.add(S.requestByExternal, [input.sessionKey, input.externalId]);
  const storedAt = batch.add(S.insertAdmittedRequest, [...requestValues(input, now, encodeChange(change)), input.owner]);
  const results = await batch.send(pool);
  const seen = results[seenAt]!.rows[0] as Row | undefined;
  if (seen) return { status: "duplicate", request: toRequest(seen) };
  const row = results[storedAt]!.rows[0] as Row;
  if (row.id !== null && row.id !== undefined) {
    announced.push({ id: String(row.change_id), at: Number(row.change_at), change });
    return { status: "inserted", request: toRequest(row) };
  }
  const owner = row.conversation_owner === null || row.conversation_owner === undefined ? null : String(row.conversation_owner);
  if (!ownerAdmits(input.owner!, owner, input.userId)) return { status: "busy", ownerId: owner };
  // Admitted but not stored: a twin stored without the lock (no owner rule) committed after the look.
  const twin = await pool.query<Row>({ ...S.requestByExternal, values: [input.sessionKey, input.externalId] });
  if (!twin.rows[0]) throw new Error(`request ${input.externalId} of ${input.sessionKey} was neither stored nor found (was it deleted meanwhile?)`);
  return { status: "duplicate", request: toRequest(twin.rows[0]) };
}
