// Files on SQLite: a conversation's files and their bytes (once per conversation and content address).
import type Database from "better-sqlite3";
import { expirableBlobs, toStoredFile, type ExpiredFiles, type FileStore, type NewStoredFile, type StoredFile } from "../roles/files.js";
import type { Row } from "../rows.js";
import type { SqliteContext } from "./context.js";

/** Stores `files` of a request inside the caller's transaction (storing the request). */
export function insertFilesNow(db: Database.Database, sessionKey: string, requestId: string | null, ownerId: string, files: readonly NewStoredFile[], now: number): void {
  const blob = db.prepare(`INSERT INTO file_blobs (session_key, sha256, bytes, size, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (session_key, sha256) DO UPDATE SET created_at = excluded.created_at`);
  const file = db.prepare(
    `INSERT INTO files (id, public_id, session_key, request_id, owner_id, sha256, name, mime, kind, size, voice, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const f of files) {
    blob.run(sessionKey, f.sha256, f.bytes, f.size, now);
    file.run(f.id, f.publicId, sessionKey, requestId, ownerId, f.sha256, f.name, f.mime, f.kind, f.size, f.voice ? 1 : 0, now);
  }
}

export class SqliteFiles implements FileStore {
  /** Read for every message a turn takes (most have no files): prepared once, not on every call. */
  private readonly byRequest: Database.Statement;

  constructor(private readonly ctx: SqliteContext) {
    this.byRequest = ctx.db.prepare(`SELECT * FROM files WHERE request_id = ? ORDER BY created_at, rowid`);
  }

  async ofRequest(requestId: string): Promise<StoredFile[]> {
    return (this.byRequest.all(requestId) as Row[]).map(toStoredFile);
  }

  async ofSession(sessionKey: string): Promise<StoredFile[]> {
    return (this.ctx.db.prepare(`SELECT * FROM files WHERE session_key = ? ORDER BY created_at, rowid`).all(sessionKey) as Row[]).map(toStoredFile);
  }

  async get(id: string): Promise<StoredFile | null> {
    const row = this.ctx.db.prepare(`SELECT * FROM files WHERE id = ?`).get(id) as Row | undefined;
    return row ? toStoredFile(row) : null;
  }

  async byPublicId(publicId: string): Promise<StoredFile | null> {
    const row = this.ctx.db.prepare(`SELECT * FROM files WHERE public_id = ?`).get(publicId) as Row | undefined;
    return row ? toStoredFile(row) : null;
  }

  async bytes(sessionKey: string, sha256: string): Promise<Buffer | null> {
    const row = this.ctx.db.prepare(`SELECT bytes FROM file_blobs WHERE session_key = ? AND sha256 = ?`).get(sessionKey, sha256) as { bytes: Buffer } | undefined;
    return row ? Buffer.from(row.bytes) : null;
  }

  async sessionBytes(sessionKey: string): Promise<number> {
    const row = this.ctx.db.prepare(`SELECT COALESCE(SUM(size), 0) AS total FROM file_blobs WHERE session_key = ?`).get(sessionKey) as { total: number };
    return Number(row.total);
  }

  async expire(before: number, now: number, limit: number): Promise<ExpiredFiles> {
    const { db } = this.ctx;
    const pick = db.prepare(expirableBlobs("?", "?"));
    const mark = db.prepare(`UPDATE files SET expired_at = ? WHERE session_key = ? AND sha256 = ? AND expired_at IS NULL`);
    const drop = db.prepare(`DELETE FROM file_blobs WHERE session_key = ? AND sha256 = ?`);
    return this.ctx.writes.run(() => {
      const done: ExpiredFiles = { contents: 0, files: 0, bytes: 0 };
      for (const blob of pick.all(before, limit) as Array<{ session_key: string; sha256: string; size: number }>) {
        done.files += mark.run(now, blob.session_key, blob.sha256).changes;
        drop.run(blob.session_key, blob.sha256);
        done.contents++;
        done.bytes += Number(blob.size);
      }
      return done;
    });
  }
}
