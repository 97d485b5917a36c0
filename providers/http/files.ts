import type { ServerResponse } from "node:http";
import { MODEL_IMAGE_TYPES } from "../../src/files/detect.js";
import { isPublicFileId } from "../../src/files/ids.js";
import { contentDisposition } from "../../src/files/names.js";
import type { FileSource } from "../../src/files/types.js";
import { HttpError } from "./request.js";

// GET /v1/files/{id}: a file of the caller's own conversations, by the unguessable id its URL carries. Another
// user's file answers exactly like one that does not exist (404), so an id reveals nothing to anyone else. Only
// raster images are served inline; everything else (SVG and HTML above all, which a browser would run) is an
// attachment, with a CSP that forbids anything active and no type sniffing.

const INLINE = new Set<string>(MODEL_IMAGE_TYPES);

/** GET /v1/files/{id}, `rawId` as sent in the path. */
export async function downloadFile(files: FileSource | undefined, rawId: string, res: ServerResponse, user: string): Promise<void> {
  const id = decoded(rawId);
  if (id === null || !isPublicFileId(id)) throw new HttpError(400, "invalid_request_error", "the file id is not one this server gives out (file_…)");
  const file = files ? await files.byPublicId(id) : null;
  if (!file || file.ownerId !== user) throw new HttpError(404, "not_found_error", `no file ${id}`);
  if (file.expiredAt !== undefined) {
    const when = new Date(file.expiredAt).toISOString();
    throw new HttpError(410, "file_expired_error", `the file ${id} (${file.name}) has expired: its contents were deleted on ${when} (FILE_RETENTION_DAYS)`);
  }
  const inline = INLINE.has(file.mime);
  res
    .writeHead(200, {
      "content-type": inline ? file.mime : safeType(file.mime),
      "content-length": file.bytes.length,
      "content-disposition": contentDisposition(inline ? "inline" : "attachment", file.name),
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "cache-control": "private, no-store",
    })
    .end(file.bytes);
}

/** A path segment with its percent-escapes decoded, or null when they are broken (`%E0%A4%A`). */
function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Types a browser would render or run are served as plain bytes. */
function safeType(mime: string): string {
  return /html|svg|xml|javascript|ecmascript/i.test(mime) ? "application/octet-stream" : mime;
}
