// Storing an inbound request: dedupe by (session, external id) and by (user, idempotency key), claiming a
// private session, checking the conversation's owner, and announcing the request, all or nothing. Safe against a
// concurrent twin on another replica: the unique keys decide, and ON CONFLICT waits for the twin's transaction
// before it answers; a conversation's owner is decided under its advisory lock.
import type pg from "pg";
import {
  CorruptStateError,
  ownerAdmits,
  type DoorLook,
  type IdempotencyRecord,
  type InsertResult,
  type NewRequest,
  type RequestRecord,
  type RequestStore,
} from "../store.js";
import { insertAdmittedRequest, onlyOwnerRule, requestValues } from "./admitted-insert.js";
import { encodeChange, type FeedEntry } from "./changes.js";
import { transaction } from "./connection.js";
import { insertFilesWith } from "./files.js";
import type { PostgresContext } from "./context.js";
import { toIdempotency, toRequest, type Row } from "../rows.js";
import { S, type Sql } from "./statements.js";

const run = (client: pg.ClientBase | pg.Pool, statement: Sql, values: unknown[]) => client.query<Row>({ ...statement, values });

/** True when storing `input` takes more than one statement, so it needs a transaction of its own. */
export function needsTransaction(input: NewRequest): boolean {
  return input.idempotency !== undefined || input.claimSession !== undefined || input.owner !== undefined || (input.files?.length ?? 0) > 0;
}

/**
 * Stores `input` through `client`: inside an open transaction when needsTransaction(input), or on its own
 * (the one INSERT is atomic) otherwise. Writes nothing for a duplicate or a forbidden request. The change it
 * announces is added to `announced`, for this replica to hear once the request is committed.
 */
export async function insertRequestWith(client: pg.ClientBase | pg.Pool, input: NewRequest, now: number, announced: FeedEntry[]): Promise<InsertResult> {
  const idempotency = input.idempotency;
  // The key first: of two twins racing with one key, the second waits here for the first and is its duplicate.
  if (idempotency) {
    const { rowCount } = await run(client, S.insertIdempotency, [input.userId, idempotency.key, input.id, input.sessionKey, idempotency.fingerprint, now]);
    if (rowCount === 0) return { status: "duplicate", request: await requestByKey(client, input.userId, idempotency.key) };
  }
  const undoKey = async () => {
    if (idempotency) await run(client, S.deleteIdempotency, [input.userId, idempotency.key]);
  };
  if (input.claimSession) {
    const { rows } = await run(client, S.claimSession, [input.sessionKey, input.userId, input.claimSession.mainAgentSessionId, now]);
    const owner = String(rows[0]?.owner_id);
    if (owner !== input.userId) {
      await undoKey();
      return { status: "forbidden", ownerId: owner };
    }
  }
  if (input.owner) {
    const owner = await ownerFor(client, input);
    if (owner !== undefined) {
      await undoKey();
      return { status: "busy", ownerId: owner };
    }
  }
  const change = { kind: "request", sessionKey: input.sessionKey, requestId: input.id } as const;
  const { rows } = await run(client, S.insertRequest, requestValues(input, now, encodeChange(change)));
  if (rows[0]) {
    if (input.files?.length) await insertFilesWith(client, input.sessionKey, input.id, input.userId, input.files, now);
    announced.push({ id: String(rows[0].change_id), at: Number(rows[0].change_at), change });
    return { status: "inserted", request: toRequest(rows[0]) };
  }
  await undoKey();
  const seen = await run(client, S.requestByExternal, [input.sessionKey, input.externalId]);
  if (!seen.rows[0]) throw new Error(`request ${input.externalId} of ${input.sessionKey} was neither stored nor found (was it deleted meanwhile?)`);
  return { status: "duplicate", request: toRequest(seen.rows[0]) };
}

/**
 * The conversation's owner when it refuses `input` (NewRequest.owner), else undefined. Under the conversation's
 * lock: of two members writing at once, the second waits here and then sees the first one's request. A message seen
 * before is let through, to be found a duplicate.
 */
async function ownerFor(client: pg.ClientBase | pg.Pool, input: NewRequest): Promise<string | null | undefined> {
  await run(client, S.lockConversation, [input.sessionKey]);
  if ((await run(client, S.requestByExternal, [input.sessionKey, input.externalId])).rows[0]) return undefined;
  const { rows } = await run(client, S.conversationOwner, [input.sessionKey]);
  const owner = rows[0]?.owner === null || rows[0]?.owner === undefined ? null : String(rows[0].owner);
  return ownerAdmits(input.owner!, owner, input.userId) ? undefined : owner;
}

async function requestByKey(client: pg.ClientBase | pg.Pool, userId: string, key: string): Promise<RequestRecord> {
  const { rows } = await run(client, S.requestByIdempotency, [userId, key]);
  if (!rows[0]) throw new CorruptStateError(`idempotency key ${key} of ${userId} points at a request that does not exist`);
  return toRequest(rows[0]);
}

export class PostgresRequests implements RequestStore {
  constructor(private readonly ctx: PostgresContext) {}

  async insert(input: NewRequest): Promise<InsertResult> {
    const now = this.ctx.now();
    const announced: FeedEntry[] = [];
    const { pool } = this.ctx;
    const result = onlyOwnerRule(input)
      ? await insertAdmittedRequest(pool, input, now, announced)
      : needsTransaction(input)
        ? await transaction(pool, (client) => insertRequestWith(client, input, now, announced))
        : await insertRequestWith(pool, input, now, announced);
    this.ctx.feed.committed(announced);
    return result;
  }

  get(id: string): Promise<RequestRecord | null> {
    return this.ctx.maybe(S.requestById, [id], toRequest);
  }

  byExternalId(sessionKey: string, externalId: string): Promise<RequestRecord | null> {
    return this.ctx.maybe(S.requestByExternal, [sessionKey, externalId], toRequest);
  }

  async atDoor(sessionKey: string, externalId: string): Promise<DoorLook> {
    const row = (await this.ctx.one(S.atDoor, [sessionKey, externalId]))!;
    const owner = row.conversation_owner;
    return { seen: row.id === null ? null : toRequest(row), owner: owner === null ? null : String(owner) };
  }

  async ofSession(sessionKey: string): Promise<RequestRecord[]> {
    return (await this.ctx.all(S.requestsOf, [sessionKey])).map(toRequest);
  }

  async unfinished(): Promise<RequestRecord[]> {
    return (await this.ctx.all(S.unfinished)).map(toRequest);
  }

  async unfinishedOf(sessionKey: string): Promise<RequestRecord[]> {
    return (await this.ctx.all(S.unfinishedOf, [sessionKey])).map(toRequest);
  }

  async running(sessionKey: string): Promise<RequestRecord[]> {
    return (await this.ctx.all(S.runningFor, [sessionKey])).map(toRequest);
  }

  async conversationOwner(sessionKey: string): Promise<string | null> {
    const owner = (await this.ctx.one(S.conversationOwner, [sessionKey]))?.owner;
    return owner === null || owner === undefined ? null : String(owner);
  }

  idempotency(userId: string, key: string): Promise<IdempotencyRecord | null> {
    return this.ctx.maybe(S.idempotency, [userId, key], toIdempotency);
  }

  async saveIdempotentResponse(userId: string, key: string, response: string): Promise<void> {
    await this.ctx.changed(S.saveIdempotent, [response, userId, key]);
  }
}
