// The inbox on SQLite: storing an inbound request (deduplicated, a private session claimed, the conversation's owner
// checked) is one write of group commit, announced once it committed.
import { toIdempotency, toRequest, type Row } from "../rows.js";
import { ownerAdmits, type DoorLook, type IdempotencyRecord, type InsertResult, type NewRequest, type RequestRecord, type RequestStore } from "../store.js";
import type { SqliteContext } from "./context.js";
import { insertFilesNow } from "./files.js";

export class SqliteRequests implements RequestStore {
  constructor(private readonly ctx: SqliteContext) {}

  insert(input: NewRequest): Promise<InsertResult> {
    return this.ctx.writes.run(
      () => this.insertNow(input),
      (result) => result.status === "inserted" && this.ctx.emit({ kind: "request", sessionKey: input.sessionKey, requestId: input.id }),
    );
  }

  /** Stores `input` inside the caller's transaction (group commit's, or an approval decision's). */
  insertNow(input: NewRequest): InsertResult {
    const s = this.ctx.stmts;
    const now = this.ctx.now();
    if (input.idempotency) {
      const seen = s.idempotency.get(input.userId, input.idempotency.key) as Row | undefined;
      if (seen) return { status: "duplicate", request: toRequest(s.requestById.get(String(seen.request_id)) as Row) };
    }
    if (input.claimSession) {
      if (!s.getSession.get(input.sessionKey)) s.insertSession.run(input.sessionKey, input.claimSession.mainAgentSessionId, now, now);
      s.claimSession.run(input.userId, input.sessionKey);
      const owner = String((s.getSession.get(input.sessionKey) as Row).owner_id);
      if (owner !== input.userId) return { status: "forbidden", ownerId: owner };
    }
    if (input.owner && !s.requestByExternal.get(input.sessionKey, input.externalId)) {
      const owner = this.ownerNow(input.sessionKey);
      if (!ownerAdmits(input.owner, owner, input.userId)) return { status: "busy", ownerId: owner };
    }
    const options = input.taskOptions;
    const info = s.insertRequest.run(
      input.id,
      input.sessionKey,
      input.externalId,
      input.kind,
      input.userId,
      input.text,
      options?.expiresAt ?? null,
      options?.metadataJson ?? null,
      now,
      now,
    );
    if (info.changes === 0) {
      return { status: "duplicate", request: toRequest(s.requestByExternal.get(input.sessionKey, input.externalId) as Row) };
    }
    if (input.idempotency) {
      s.insertIdempotency.run(input.userId, input.idempotency.key, input.id, input.sessionKey, input.idempotency.fingerprint, now);
    }
    if (input.files?.length) insertFilesNow(s, input.sessionKey, input.id, input.userId, input.files, now);
    const { claimSession: _claim, idempotency: _key, taskOptions: _options, owner: _owner, files: _files, ...fields } = input;
    const request: RequestRecord = {
      ...fields,
      taskOptions: options && (options.expiresAt !== null || options.metadataJson !== null) ? options : null,
      status: "pending",
      taskId: null,
      error: null,
      errorCode: null,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0,
      createdAt: now,
      updatedAt: now,
    };
    return { status: "inserted", request };
  }

  async get(id: string): Promise<RequestRecord | null> {
    const row = this.ctx.stmts.requestById.get(id) as Row | undefined;
    return row ? toRequest(row) : null;
  }

  async byExternalId(sessionKey: string, externalId: string): Promise<RequestRecord | null> {
    const row = this.ctx.stmts.requestByExternal.get(sessionKey, externalId) as Row | undefined;
    return row ? toRequest(row) : null;
  }

  async atDoor(sessionKey: string, externalId: string): Promise<DoorLook> {
    return { seen: await this.byExternalId(sessionKey, externalId), owner: this.ownerNow(sessionKey) };
  }

  async ofSession(sessionKey: string): Promise<RequestRecord[]> {
    return (this.ctx.stmts.requestsOf.all(sessionKey) as Row[]).map(toRequest);
  }

  async unfinished(): Promise<RequestRecord[]> {
    return (this.ctx.stmts.unfinished.all() as Row[]).map(toRequest);
  }

  async unfinishedOf(sessionKey: string): Promise<RequestRecord[]> {
    return (this.ctx.stmts.unfinishedOf.all(sessionKey) as Row[]).map(toRequest);
  }

  async running(sessionKey: string): Promise<RequestRecord[]> {
    return (this.ctx.stmts.runningFor.all(sessionKey) as Row[]).map(toRequest);
  }

  async conversationOwner(sessionKey: string): Promise<string | null> {
    return this.ownerNow(sessionKey);
  }

  private ownerNow(sessionKey: string): string | null {
    const owner = (this.ctx.stmts.conversationOwner.get(sessionKey, sessionKey) as Row).owner;
    return owner === null || owner === undefined ? null : String(owner);
  }

  async idempotency(userId: string, key: string): Promise<IdempotencyRecord | null> {
    const r = this.ctx.stmts.idempotency.get(userId, key) as Row | undefined;
    return r ? toIdempotency(r) : null;
  }

  async saveIdempotentResponse(userId: string, key: string, response: string): Promise<void> {
    this.ctx.stmts.saveIdempotent.run(response, userId, key);
  }
}
