// Files on SQLite: a conversation's files and their bytes (once per conversation and content address).
import type Database from "better-sqlite3";
import { expirableBlobs, toStoredFile, type ExpiredFiles, type FileStore, type NewStoredFile, type StoredFile } from "../roles/files.js";
import type { Row } from "../rows.js";
import type { SqliteContext } from "./context.js";
import type { Statements } from "./statements.js";

/** The files role's statements, prepared once per connection with the others (statements.ts). */
export function prepareFileStatements(db: Database.Database) {
  return {
    insertBlob: db.prepare(`INSERT INTO file_blobs (session_key, sha256, bytes, size, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (session_key, sha256) DO UPDATE SET created_at = excluded.created_at`),
    insertFile: db.prepare(
      `INSERT INTO files (id, public_id, session_key, request_id, owner_id, sha256, name, mime, kind, size, voice, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // Read for every message, which has no files as a rule (files_by_request answers that from one index page).
    ofRequest: db.prepare(`SELECT * FROM files WHERE request_id = ? ORDER BY created_at, rowid`),
    ofSession: db.prepare(`SELECT * FROM files WHERE session_key = ? ORDER BY created_at, rowid`),
    byId: db.prepare(`SELECT * FROM files WHERE id = ?`),
    byPublicId: db.prepare(`SELECT * FROM files WHERE public_id = ?`),
    bytes: db.prepare(`SELECT bytes FROM file_blobs WHERE session_key = ? AND sha256 = ?`),
    sessionBytes: db.prepare(`SELECT COALESCE(SUM(size), 0) AS total FROM file_blobs WHERE session_key = ?`),
    expirable: db.prepare(expirableBlobs("?", "?")),
    markExpired: db.prepare(`UPDATE files SET expired_at = ? WHERE session_key = ? AND sha256 = ? AND expired_at IS NULL`),
    dropBlob: db.prepare(`DELETE FROM file_blobs WHERE session_key = ? AND sha256 = ?`),
  };
}

/** Stores `files` of a request inside the caller's transaction (storing the request). */
export function insertFilesNow(s: Statements, sessionKey: string, requestId: string | null, ownerId: string, files: readonly NewStoredFile[], now: number): void {
  for (const f of files) {
    s.files.insertBlob.run(sessionKey, f.sha256, f.bytes, f.size, now);
    s.files.insertFile.run(f.id, f.publicId, sessionKey, requestId, ownerId, f.sha256, f.name, f.mime, f.kind, f.size, f.voice ? 1 : 0, now);
  }
}

export class SqliteFiles implements FileStore {
  private readonly s: Statements["files"];

  constructor(private readonly ctx: SqliteContext) {
    this.s = ctx.stmts.files;
  }

  async ofRequest(requestId: string): Promise<StoredFile[]> {
    return (this.s.ofRequest.all(requestId) as Row[]).map(toStoredFile);
  }

  async ofSession(sessionKey: string): Promise<StoredFile[]> {
    return (this.s.ofSession.all(sessionKey) as Row[]).map(toStoredFile);
  }

  async get(id: string): Promise<StoredFile | null> {
    const row = this.s.byId.get(id) as Row | undefined;
    return row ? toStoredFile(row) : null;
  }

  async byPublicId(publicId: string): Promise<StoredFile | null> {
    const row = this.s.byPublicId.get(publicId) as Row | undefined;
    return row ? toStoredFile(row) : null;
  }

  async bytes(sessionKey: string, sha256: string): Promise<Buffer | null> {
    const row = this.s.bytes.get(sessionKey, sha256) as { bytes: Buffer } | undefined;
    return row ? Buffer.from(row.bytes) : null;
  }

  async sessionBytes(sessionKey: string): Promise<number> {
    const row = this.s.sessionBytes.get(sessionKey) as { total: number };
    return Number(row.total);
  }

  async expire(before: number, now: number, limit: number): Promise<ExpiredFiles> {
    const { expirable, markExpired, dropBlob } = this.s;
    return this.ctx.writes.run(() => {
      const done: ExpiredFiles = { contents: 0, files: 0, bytes: 0 };
      for (const blob of expirable.all(before, limit) as Array<{ session_key: string; sha256: string; size: number }>) {
        done.files += markExpired.run(now, blob.session_key, blob.sha256).changes;
        dropBlob.run(blob.session_key, blob.sha256);
        done.contents++;
        done.bytes += Number(blob.size);
      }
      return done;
    });
  }
}
