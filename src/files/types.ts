// What a provider hands the gateway for each file of a message, and the vocabulary of the files module.

/** How a file reaches the model: an image block, a PDF document block, a text document block, a transcript, or a mention. */
export type FileKind = "image" | "pdf" | "text" | "audio" | "video" | "other";

/** A file read whole, its type known from its bytes (never from its name or a declared type). */
export interface ReceivedFile {
  ok: true;
  /** Sanitised: no path, no control characters, at most 128 characters. */
  name: string;
  /** Detected from the bytes. */
  mime: string;
  kind: FileKind;
  size: number;
  bytes: Buffer;
  /** Content address: lowercase hex SHA-256 of `bytes`. */
  sha256: string;
  /** A voice note (Telegram `voice`/`video_note`, a recorded clip): its transcript is marked as a voice message. */
  voice?: boolean;
  /** PDFs: how many pages. */
  pages?: number;
  /** Something the user should know about the file that did not stop it (e.g. "it is a ZIP archive, not an image"). */
  note?: string;
}

/** A file that could not be used; `reason` is the sentence the user is shown, naming the file and what to do. */
export interface FileFailure {
  ok: false;
  name: string;
  reason: string;
}

export type InboundFile = ReceivedFile | FileFailure;

/** A file an agent sends to the chat (send_file), as a provider's sink receives it. */
export interface OutboundFile {
  /** The outbox entry's id: a sink that records what it sent keys on it. */
  id: string;
  sessionKey: string;
  requestId: string | null;
  agent: string;
  depth: number;
  name: string;
  mime: string;
  kind: FileKind;
  size: number;
  bytes: Buffer;
  /** The unguessable id a download URL carries (HTTP API, web chat). */
  publicId: string;
  caption?: string;
}

/** A stored file as a download serves it: who may read it, and what it is. */
export interface StoredFileView {
  publicId: string;
  /** The user whose conversation the file belongs to (the only one who may download it). */
  ownerId: string;
  name: string;
  mime: string;
  size: number;
  bytes: Buffer;
  /** When the retention (FILE_RETENTION_DAYS) deleted its bytes (`bytes` is then empty); absent while kept. */
  expiredAt?: number;
}

/** Finds a file by the unguessable id of its download URL (implemented by the store). */
export interface FileSource {
  byPublicId(publicId: string): Promise<StoredFileView | null>;
}
