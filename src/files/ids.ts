import { createHash, randomBytes } from "node:crypto";

/** The content address of a blob: lowercase hex SHA-256. The same bytes are stored once. */
export function contentId(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * An id for a download URL (`GET /v1/files/{id}`): 144 random bits, so it cannot be guessed or derived from the
 * content (two users sending the same file get different ids). `random` is injected for tests.
 */
export function publicFileId(random: (bytes: number) => Buffer = randomBytes): string {
  return `file_${random(18).toString("base64url")}`;
}

/** Whether `id` has the shape publicFileId makes (checked before anything is looked up). */
export function isPublicFileId(id: string): boolean {
  return /^file_[A-Za-z0-9_-]{24}$/.test(id);
}
