// Files on PostgreSQL: a conversation's files and their bytes (once per conversation and content address).
import type pg from "pg";
import { toStoredFile, type FileStore, type NewStoredFile, type StoredFile } from "../roles/files.js";
import type { PostgresContext } from "./context.js";
import { sql } from "./statements.js";

const F = {
  insertBlob: sql("insert_file_blob", `INSERT INTO file_blobs (session_key, sha256, bytes, size, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`),
  insertFile: sql(
    "insert_file",
    `INSERT INTO files (id, public_id, session_key, request_id, owner_id, sha256, name, mime, kind, size, voice, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
  ),
  ofRequest: sql("files_of_request", `SELECT * FROM files WHERE request_id = $1 ORDER BY created_at, id`),
  byId: sql("file_by_id", `SELECT * FROM files WHERE id = $1`),
  byPublicId: sql("file_by_public_id", `SELECT * FROM files WHERE public_id = $1`),
  bytes: sql("file_bytes", `SELECT bytes FROM file_blobs WHERE session_key = $1 AND sha256 = $2`),
  sessionBytes: sql("session_file_bytes", `SELECT COALESCE(SUM(size), 0)::bigint AS total FROM file_blobs WHERE session_key = $1`),
};

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
}
