// The files role: the files of a conversation, their bytes stored once per conversation by content address
// (SHA-256). A message's files are stored with the message itself (NewRequest.files, one transaction), a file an
// agent made with the step whose tool result names it (StepCommit.files); the context log names them by id and never
// holds their bytes.
import type { FileKind } from "../../files/types.js";

/** What a file is, stored or about to be. */
interface FileFacts {
  /** The file's id in the context log. */
  id: string;
  /** The unguessable id its download URL carries (src/files/ids.ts). */
  publicId: string;
  sha256: string;
  name: string;
  mime: string;
  kind: FileKind;
  size: number;
  voice: boolean;
}

/** A file to store with a request. */
export interface NewStoredFile extends FileFacts {
  bytes: Buffer;
}

/** A file an agent made (send_file, an MCP image), stored by the step whose tool result names it (StepCommit.files). */
export interface NewAgentFile extends NewStoredFile {
  /** Who owns the conversation's task it was made in: the only one who may download it. */
  ownerId: string;
}

/** A stored file's description (its bytes are read apart: FileStore.bytes). */
export interface StoredFile extends FileFacts {
  sessionKey: string;
  /** The request that brought it; null for a file an agent made. */
  requestId: string | null;
  /** The user whose message brought it, or who owns the conversation it was made in. */
  ownerId: string;
  createdAt: number;
  /** When FILE_RETENTION_DAYS deleted its bytes (the description stays, so the log's reference still says what it was); null while kept. */
  expiredAt: number | null;
}

/** What one pass of the retention did. */
export interface ExpiredFiles {
  /** Distinct contents whose bytes were deleted. */
  contents: number;
  /** The files (descriptions) those bytes belonged to, now marked expired. */
  files: number;
  bytes: number;
}

export interface FileStore {
  /** The files a request brought, in the order they came. */
  ofRequest(requestId: string): Promise<StoredFile[]>;
  get(id: string): Promise<StoredFile | null>;
  /** Every file of a conversation (received and made), oldest first. */
  ofSession(sessionKey: string): Promise<StoredFile[]>;
  /** By the id of its download URL. */
  byPublicId(publicId: string): Promise<StoredFile | null>;
  /** A file's bytes (by its conversation and content address); null when they were erased. */
  bytes(sessionKey: string, sha256: string): Promise<Buffer | null>;
  /** The bytes a conversation's files take (each distinct content once): what MAX_SESSION_FILE_BYTES caps. */
  sessionBytes(sessionKey: string): Promise<number>;
  /**
   * The retention (FILE_RETENTION_DAYS): deletes the bytes of at most `limit` contents last stored before `before`
   * that nothing still needs, and marks their files expired at `now`. Still needed: the files of a request not yet
   * finished (its turn has not read them), and every file of a conversation with a reply not yet delivered or given
   * up (a file waiting in the outbox goes out with it). Storing the same content again counts as new.
   */
  expire(before: number, now: number, limit: number): Promise<ExpiredFiles>;
}

/**
 * The contents the retention may delete, oldest first, in either dialect (its parameters for the cutoff and the
 * limit given). The blob's created_at is when a file last stored those bytes: storing them again moves it forward.
 */
export const expirableBlobs = (cutoff: string, limit: string): string => `SELECT b.session_key, b.sha256, b.size FROM file_blobs b
  WHERE b.created_at < ${cutoff}
    AND NOT EXISTS (SELECT 1 FROM files f JOIN requests r ON r.id = f.request_id
      WHERE f.session_key = b.session_key AND f.sha256 = b.sha256 AND r.status IN ('pending', 'running'))
    AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.session_key = b.session_key AND o.delivered_at IS NULL AND o.failed_at IS NULL)
  ORDER BY b.created_at LIMIT ${limit}`;

const KINDS: readonly FileKind[] = ["image", "pdf", "text", "audio", "video", "other"];

/** A stored row back as a StoredFile (both backends' rows have the same columns). */
export function toStoredFile(row: Record<string, unknown>): StoredFile {
  const kind = String(row.kind) as FileKind;
  return {
    id: String(row.id),
    publicId: String(row.public_id),
    sessionKey: String(row.session_key),
    requestId: row.request_id === null || row.request_id === undefined ? null : String(row.request_id),
    ownerId: String(row.owner_id),
    sha256: String(row.sha256),
    name: String(row.name),
    mime: String(row.mime),
    kind: KINDS.includes(kind) ? kind : "other",
    size: Number(row.size),
    voice: Number(row.voice) === 1,
    createdAt: Number(row.created_at),
    expiredAt: row.expired_at === null || row.expired_at === undefined ? null : Number(row.expired_at),
  };
}
