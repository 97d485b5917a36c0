// Files on PostgreSQL: a conversation's files and their bytes (once per conversation and content address).
import type pg from "pg";
import { expirableBlobs, toStoredFile, type ExpiredFiles, type FileStore, type NewAgentFile, type NewStoredFile, type StoredFile } from "../roles/files.js";
import { transaction } from "./connection.js";
import type { PostgresContext } from "./context.js";
import { sql } from "./statements.js";

const F = {
  // Storing bytes again moves their age forward, under the row's lock: a retention pass deleting them at the same
  // time waits, then sees the new age and keeps them.
  insertBlob: sql(
    "insert_file_blob",
    `INSERT INTO file_blobs (session_key, sha256, bytes, size, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (session_key, sha256) DO UPDATE SET created_at = EXCLUDED.created_at`,
  ),
  insertFile: sql(
    "insert_file",
    `INSERT INTO files (id, public_id, session_key, request_id, owner_id, sha256, name, mime, kind, size, voice, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
  ),
  ofSession: sql("files_of_session", `SELECT * FROM files WHERE session_key = $1 ORDER BY created_at, id`),
  ofRequest: sql("files_of_request", `SELECT * FROM files WHERE request_id = $1 ORDER BY created_at, id`),
  byId: sql("file_by_id", `SELECT * FROM files WHERE id = $1`),
  byPublicId: sql("file_by_public_id", `SELECT * FROM files WHERE public_id = $1`),
  bytes: sql("file_bytes", `SELECT bytes FROM file_blobs WHERE session_key = $1 AND sha256 = $2`),
  expirable: sql("expirable_file_blobs", `${expirableBlobs("$1", "$2")} FOR UPDATE OF b SKIP LOCKED`),
  // The age is checked again: bytes stored anew since the pick are kept.
  dropBlob: sql("drop_file_blob", `DELETE FROM file_blobs WHERE session_key = $1 AND sha256 = $2 AND created_at < $3 RETURNING size`),
  markExpired: sql("mark_files_expired", `UPDATE files SET expired_at = $1 WHERE session_key = $2 AND sha256 = $3 AND expired_at IS NULL`),
  sessionBytes: sql("session_file_bytes", `SELECT COALESCE(SUM(size), 0)::bigint AS total FROM file_blobs WHERE session_key = $1`),
};

/** The statements that store agents' files in a step's batch: one per table, the lists unnested. */
export const AGENT_FILES = {
  blobs: sql(
    "insert_agent_file_blobs",
    `INSERT INTO file_blobs (session_key, sha256, bytes, size, created_at)
     SELECT $1, b.s, decode(b.h, 'hex'), b.z, $2::bigint FROM unnest($3::text[], $4::text[], $5::bigint[]) AS b(s, h, z)
     ON CONFLICT DO NOTHING`,
  ),
  files: sql(
    "insert_agent_files",
    `INSERT INTO files (id, public_id, session_key, request_id, owner_id, sha256, name, mime, kind, size, voice, created_at)
     SELECT f.id, f.p, $1, NULL, f.o, f.s, f.n, f.m, f.k, f.z, f.v, $2::bigint
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::int[])
       WITH ORDINALITY AS f(id, p, o, s, n, m, k, z, v, ord)
     ORDER BY f.ord`,
  ),
};

/** The values of AGENT_FILES' two statements for `files` of session `key`. */
export function agentFileValues(key: string, files: readonly NewAgentFile[], now: number): { blobs: unknown[]; files: unknown[] } {
  return {
    blobs: [key, now, files.map((f) => f.sha256), files.map((f) => f.bytes.toString("hex")), files.map((f) => f.size)],
    files: [
      key,
      now,
      files.map((f) => f.id),
      files.map((f) => f.publicId),
      files.map((f) => f.ownerId),
      files.map((f) => f.sha256),
      files.map((f) => f.name),
      files.map((f) => f.mime),
      files.map((f) => f.kind),
      files.map((f) => f.size),
      files.map((f) => (f.voice ? 1 : 0)),
    ],
  };
}

/** Stores `files` of a request through `client`, inside the transaction that stores the request. */
export async function insertFilesWith(
  client: pg.ClientBase | pg.Pool,
  sessionKey: string,
  requestId: string | null,
  ownerId: string,
  files: readonly NewStoredFile[],
  now: number,
): Promise<void> {
  for (const f of files) {
    await client.query({ ...F.insertBlob, values: [sessionKey, f.sha256, f.bytes, f.size, now] });
    await client.query({ ...F.insertFile, values: [f.id, f.publicId, sessionKey, requestId, ownerId, f.sha256, f.name, f.mime, f.kind, f.size, f.voice ? 1 : 0, now] });
  }
}

export class PostgresFiles implements FileStore {
  constructor(private readonly ctx: PostgresContext) {}

  async ofRequest(requestId: string): Promise<StoredFile[]> {
    return (await this.ctx.all(F.ofRequest, [requestId])).map(toStoredFile);
  }

  async ofSession(sessionKey: string): Promise<StoredFile[]> {
    return (await this.ctx.all(F.ofSession, [sessionKey])).map(toStoredFile);
  }

  get(id: string): Promise<StoredFile | null> {
    return this.ctx.maybe(F.byId, [id], toStoredFile);
  }

  byPublicId(publicId: string): Promise<StoredFile | null> {
    return this.ctx.maybe(F.byPublicId, [publicId], toStoredFile);
  }

  bytes(sessionKey: string, sha256: string): Promise<Buffer | null> {
    return this.ctx.maybe(F.bytes, [sessionKey, sha256], (row) => Buffer.from(row.bytes as Buffer));
  }

  async sessionBytes(sessionKey: string): Promise<number> {
    return Number((await this.ctx.one(F.sessionBytes, [sessionKey]))?.total ?? 0);
  }

  expire(before: number, now: number, limit: number): Promise<ExpiredFiles> {
    return transaction(this.ctx.pool, async (client) => {
      const done: ExpiredFiles = { contents: 0, files: 0, bytes: 0 };
      for (const blob of (await client.query({ ...F.expirable, values: [before, limit] })).rows) {
        const dropped = await client.query({ ...F.dropBlob, values: [blob.session_key, blob.sha256, before] });
        if (dropped.rowCount === 0) continue;
        done.files += (await client.query({ ...F.markExpired, values: [now, blob.session_key, blob.sha256] })).rowCount ?? 0;
        done.contents++;
        done.bytes += Number(blob.size);
      }
      return done;
    });
  }
}
