// How much a user may send: one file (MAX_FILE_BYTES), files per message (MAX_FILES_PER_MESSAGE) and the total a
// session may hold (MAX_SESSION_FILE_BYTES). The sentences here are what the user is told.

export interface FileLimits {
  /** MAX_FILE_BYTES: one file, received or sent. */
  maxFileBytes: number;
  /** MAX_FILES_PER_MESSAGE: files in one message (an album counts as one message). */
  maxFilesPerMessage: number;
  /** MAX_SESSION_FILE_BYTES: all the files a session holds; 0 means no cap. */
  maxSessionBytes: number;
}

export const DEFAULT_FILE_LIMITS: FileLimits = {
  maxFileBytes: 20 * 1024 * 1024,
  maxFilesPerMessage: 10,
  maxSessionBytes: 200 * 1024 * 1024,
};

/** "20 MB", "512 KB", "900 bytes" (binary units, as the limits are set). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

export function tooLargeReason(name: string, size: number | null, limit: number, what = "the limit here"): string {
  const known = size === null ? "is too large" : `is ${formatBytes(size)}`;
  return `${quote(name)} ${known}; files can be at most ${formatBytes(limit)} (${what}). Send a smaller file or a link to it.`;
}

export function tooManyReason(count: number, limit: number): string {
  return `You sent ${count} files in one message; I read at most ${limit} per message, so I kept the first ${limit}. Send the rest in another message.`;
}

export function sessionFullReason(name: string, limit: number): string {
  return `${quote(name)} would take this conversation's files over ${formatBytes(limit)}, so I did not keep it; the operator can raise MAX_SESSION_FILE_BYTES.`;
}

/** A file name as the user is shown it. */
export function quote(name: string): string {
  return `"${name}"`;
}
